//! The tournament file's tests, section by section.

use super::*;

fn parse(src: &str) -> Result<Tournament, ConfigError> {
    Tournament::parse(Path::new("/tmp/t/tournaments/x.toml"), src)
}

const TWO_BOTS: &str = r#"
name = "t"
bots = [
  { name = "a", command = "python3 a.py" },
  { name = "b", command = ["node", "b.js"], env = { X = "1" } },
]
"#;

#[test]
fn minimal_file_takes_defaults() {
    let t = parse(TWO_BOTS).unwrap();
    assert_eq!(t.name, "t");
    assert_eq!(t.bots.len(), 2);
    assert_eq!(t.bots[0].command, vec!["python3", "a.py"]);
    assert_eq!(t.bots[1].env, vec![("X".to_string(), "1".to_string())]);
    assert_eq!(t.variants.len(), 5);
    assert_eq!(t.rounds, 1);
    assert_eq!(t.output, PathBuf::from("/tmp/t/results/t"));
    assert_eq!(t.max_plies, DEFAULT_MAX_PLIES);
}

#[test]
fn errors_name_field_and_line() {
    let src = format!("{TWO_BOTS}\nconcurrency = 0\n");
    let e = parse(&src).unwrap_err().to_string();
    assert!(e.contains(":8:") && e.contains("concurrency"), "{e}");

    let src = format!("{TWO_BOTS}\nvariants = [\"diffusion\", \"chess\"]\n");
    let e = parse(&src).unwrap_err().to_string();
    assert!(
        e.contains(":8:") && e.contains("variants") && e.contains("chess"),
        "{e}"
    );

    let src = format!("{TWO_BOTS}\ngames_per_pairing = 3\n");
    let e = parse(&src).unwrap_err().to_string();
    assert!(e.contains("games_per_pairing") && e.contains("even"), "{e}");

    let e = parse("name = \"t\"\nbotz = 1\n").unwrap_err().to_string();
    assert!(e.contains("botz") && e.contains("line 2"), "{e}");

    let e = parse("name = \"t\"\n").unwrap_err().to_string();
    assert!(e.contains("`bots`"), "{e}");

    // A name is a folder of its own, never the results folder's parent.
    for name in ["..", ".", "", "a/b"] {
        let src = TWO_BOTS.replace("name = \"t\"", &format!("name = \"{name}\""));
        let e = parse(&src).unwrap_err().to_string();
        assert!(e.contains(":2:") && e.contains("name"), "{name}: {e}");
    }

    let src = format!("{TWO_BOTS}\ngauntlet = \"zed\"\n");
    let e = parse(&src).unwrap_err().to_string();
    assert!(
        e.contains("gauntlet") && e.contains("`zed` is not one of the league's bots (a, b)"),
        "{e}"
    );
    // A misspelt name: the one it could be.
    let src = TWO_BOTS.replace("\"a\"", "\"probe-bot\"") + "\ngauntlet = \"probebot\"\n";
    let e = parse(&src).unwrap_err().to_string();
    assert!(e.contains("did you mean `probe-bot`?"), "{e}");

    // A zero where the time control needs a time: its key's line.
    for key in ["watchdog_ms", "startup_ms"] {
        let src = format!("{TWO_BOTS}\n[time_control]\ndecision_ms = 50\n{key} = 0\n");
        let e = parse(&src).unwrap_err().to_string();
        assert!(
            e.contains(&format!(":10: `time_control.{key}`: must be positive")),
            "{e}"
        );
    }
}

/// The flags go through the same checks as the file, and their errors
/// name the flag, not a line of the file.
#[test]
fn flags_are_checked_like_the_file() {
    let with = |src: &str, flags: RunSettings| {
        Tournament::parse_with(Path::new("/tmp/t/tournaments/x.toml"), src, &flags)
    };
    let src = format!("{TWO_BOTS}\nconcurrency = 4\nrounds = 2\nseed = 5\n");
    let e = with(
        &src,
        RunSettings {
            concurrency: Some(5000),
            ..Default::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert_eq!(e, "--concurrency: must be between 1 and 1024, got 5000");

    let t = with(
        &src,
        RunSettings {
            concurrency: Some(2),
            games_per_pairing: Some(6),
            output: Some(PathBuf::from("elsewhere")),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!((t.concurrency, t.rounds, t.seed), (2, 3, 5));
    assert_eq!(t.output, PathBuf::from("elsewhere"));

    for (flags, want) in [
        (
            RunSettings {
                games_per_pairing: Some(3),
                ..Default::default()
            },
            "--games-per-pairing: must be even",
        ),
        (
            RunSettings {
                watchdog_ms: Some(0),
                ..Default::default()
            },
            "--watchdog-ms: must be positive",
        ),
        (
            RunSettings {
                bots: Some(vec!["a".into(), "zed".into()]),
                ..Default::default()
            },
            "--bots: `zed` is not a bot",
        ),
        (
            RunSettings {
                bots: Some(vec!["a".into(), "a".into()]),
                ..Default::default()
            },
            "--bots: `a` is named twice",
        ),
        (
            RunSettings {
                variants: Some(vec!["chess".into()]),
                ..Default::default()
            },
            "--variants: unknown variant `chess` (known: filo, tricala, tricala3 (also tricala-3p",
        ),
        (
            // Refused as in the file: each game would be played twice
            // under one id, and the folder could not be read back.
            RunSettings {
                variants: Some(vec!["tricala3".into(), "tricala-3p".into()]),
                ..Default::default()
            },
            "--variants: variant `tricala-3p` appears twice",
        ),
        (
            RunSettings {
                gauntlet: Some("zed".into()),
                ..Default::default()
            },
            "--gauntlet: `zed` is not one",
        ),
    ] {
        let e = with(&src, flags).unwrap_err().to_string();
        assert!(e.starts_with(want), "{e}");
    }
    // A watchdog of 0 in the file is the file's error.
    let e = parse(&format!("{TWO_BOTS}\n[time_control]\nwatchdog_ms = 0\n"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("x.toml") && e.contains("watchdog_ms"), "{e}");
    // So is a start-up time of 0 (no bot could answer its hello).
    let e = parse(&format!("{TWO_BOTS}\n[time_control]\nstartup_ms = 0\n"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("x.toml") && e.contains("startup_ms"), "{e}");
}

/// A file named without a folder (`arena run t.toml`) lives in the
/// working directory: its bots run there, not in "" (which no process
/// can enter).
#[test]
fn a_bare_file_name_means_the_working_directory() {
    let t = Tournament::parse(Path::new("t.toml"), TWO_BOTS).unwrap();
    assert_eq!(t.bots[0].cwd.as_deref(), Some(Path::new(".")));
}

#[test]
fn the_sandbox_is_on_unless_said_off() {
    assert_eq!(parse(TWO_BOTS).unwrap().sandbox, Sandbox::On);
    let off = parse(&format!("{TWO_BOTS}\nsandbox = \"off\"\n")).unwrap();
    assert_eq!(off.sandbox, Sandbox::Off);
    let e = parse(&format!("{TWO_BOTS}\nsandbox = \"maybe\"\n"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(":8:") && e.contains("`sandbox`") && e.contains("maybe"),
        "{e}"
    );
    let flag = RunSettings {
        sandbox: Some("off".into()),
        ..Default::default()
    };
    let t = Tournament::parse_with(Path::new("/tmp/t/x.toml"), TWO_BOTS, &flag).unwrap();
    assert_eq!(t.sandbox, Sandbox::Off);
}

#[test]
fn limits_have_defaults_and_bounds() {
    assert_eq!(parse(TWO_BOTS).unwrap().limits, LimitSettings::default());
    let t = parse(&format!(
        "{TWO_BOTS}\n[limits]\nmemory_mb = 256\ncpus = 2\n"
    ))
    .unwrap();
    assert_eq!(
        (t.limits.memory_mb, t.limits.cpus, t.limits.processes),
        (Some(256), Some(2), None)
    );
    let e = parse(&format!("{TWO_BOTS}\n[limits]\nmemory_mb = 0\n"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("limits.memory_mb") && e.contains("between 1"),
        "{e}"
    );
    let flags = RunSettings {
        memory_mb: Some(512),
        processes: Some(0),
        ..Default::default()
    };
    let e = Tournament::parse_with(Path::new("/tmp/t/x.toml"), TWO_BOTS, &flags)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("--processes: must be between 1"), "{e}");
    let e = parse(&format!("{TWO_BOTS}\n[limits]\nram = 5\n"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("ram"), "{e}");
}

/// `openings_file` is the league file's folder's, `--openings-file`
/// the working directory's; errors name the book's line.
#[test]
fn an_openings_book_is_read_and_checked() {
    let dir = tempfile::tempdir().unwrap();
    let league = dir.path().join("t.toml");
    let first = |v: &str| {
        let s = parse_variant(v).unwrap();
        crate::engine::Game::new(s.variant, &s.settings(100))
            .unwrap()
            .legal()[0]
            .clone()
    };
    std::fs::write(
        dir.path().join("book.txt"),
        format!(
            "# two\nfilo: {}\nkisolo: {}\n",
            first("filo"),
            first("kisolo")
        ),
    )
    .unwrap();
    let src = format!(
            "{TWO_BOTS}\nvariants = [\"filo\", \"kisolo\"]\nopenings_file = \"book.txt\"\nopenings_order = \"random\"\n"
        );
    let t = Tournament::parse(&league, &src).unwrap();
    let book = t.book.expect("a book");
    assert_eq!(book.order, BookOrder::Random);
    assert_eq!(book.line(1, 5), [first("kisolo")]);

    let e = Tournament::parse(&league, &src.replace("\"random\"", "\"shuffled\""))
        .unwrap_err()
        .to_string();
    assert!(e.contains(":10: `openings_order`: expected"), "{e}");
    let e = Tournament::parse(&league, &src.replace("book.txt", "none.txt"))
        .unwrap_err()
        .to_string();
    // A book that cannot be read, or an empty name, is told at its line.
    assert!(
        e.contains(":9: `openings_file`: cannot read") && e.contains("none.txt"),
        "{e}"
    );
    let e = Tournament::parse(&league, &src.replace("book.txt", " "))
        .unwrap_err()
        .to_string();
    assert!(e.contains(":9: `openings_file`: is empty"), "{e}");
    let e = Tournament::parse(&league, &src.replace("openings_file", "opening_file"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("opening_file") && e.contains("openings_file"),
        "{e}"
    );

    std::fs::write(dir.path().join("bad.txt"), "filo: zz\n").unwrap();
    let flags = RunSettings {
        openings_file: Some(dir.path().join("bad.txt")),
        openings_order: Some("sequential".into()),
        ..Default::default()
    };
    let e = Tournament::parse_with(&league, &src, &flags)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("bad.txt:1: move 1 `zz` is not legal here"),
        "{e}"
    );
    let flags = RunSettings {
        openings_order: Some("random".into()),
        ..Default::default()
    };
    let e = Tournament::parse_with(&league, TWO_BOTS, &flags)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("--openings-order: orders the lines"), "{e}");
}

#[test]
fn variant_keys() {
    let three_bots = TWO_BOTS.replace(
        "bots = [",
        "bots = [\n  { name = \"c\", command = \"python3 c.py\" },",
    );
    let src =
        format!("{three_bots}\nvariants = [\"tricala\", \"tricala3\"]\ngames_per_pairing = 4\n");
    let t = parse(&src).unwrap();
    assert_eq!(t.variants[1].players, 3);
    assert_eq!(t.variants[1].key, "tricala");
    assert_eq!(t.variants[1].label(), "tricala-3p");
    let src = format!("{three_bots}\nvariants = [\"tricala3\", \"tricala-3p\"]\n");
    let e = parse(&src).unwrap_err().to_string();
    assert!(e.contains("appears twice"), "{e}");
    // Two tables whose names differ only in case: a book's `kisolo6:` line
    // would go to both.
    let src = format!(
        "{TWO_BOTS}\nvariants = [{{ game = \"kisolo\", name = \"Kisolo6\", options = {{ columns = 6 }} }}, {{ game = \"kisolo\", name = \"kisolo6\", options = {{ columns = 6 }} }}]\n"
    );
    let e = parse(&src).unwrap_err().to_string();
    assert!(
        e.contains("`kisolo6` appears twice (as `Kisolo6` before it"),
        "{e}"
    );
    assert_eq!(t.rounds, 2);
    // Two bots cannot fill three seats: no game, so an error, not an
    // empty league.
    let src = format!("{TWO_BOTS}\nvariants = [\"filo\", \"tricala3\"]\n");
    let e = parse(&src).unwrap_err().to_string();
    assert!(
        e.contains("variant `tricala-3p` needs 3 bots, one a seat; this league has 2"),
        "{e}"
    );
}

mod sandbox_table {
    use super::super::sandbox::SandboxSettings;
    use super::super::{ConfigError, RunSettings, Tournament};
    use crate::bot::Sandbox;
    use std::path::Path;

    const TWO_BOTS: &str = r#"
name = "t"
bots = [
  { name = "a", command = "python3 a.py" },
  { name = "b", command = "python3 b.py" },
]
"#;

    fn parse_in(dir: &Path, extra: &str) -> Result<Tournament, ConfigError> {
        Tournament::parse(&dir.join("x.toml"), &format!("{TWO_BOTS}{extra}"))
    }

    #[test]
    fn the_table_gives_mode_and_settings() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("data")).unwrap();
        let t = parse_in(
            dir.path(),
            "ponder = true\n[sandbox]\nmode = \"off\"\nexpose = [\"data\"]\nbuild_network = true\nbuild_seconds = 90\nbuild_mb = 300\nbuild_files = 5000\nuid_range = [100000, 65536]\n",
        )
        .unwrap();
        assert_eq!(t.sandbox, Sandbox::Off);
        assert!(t.ponder);
        let want = std::fs::canonicalize(dir.path().join("data")).unwrap();
        assert_eq!(
            t.sandbox_settings,
            SandboxSettings {
                expose: vec![want],
                build_network: true,
                build_seconds: Some(90),
                build_mb: Some(300),
                build_files: Some(5000),
                uid_range: Some((100_000, 65_536)),
            }
        );
        // The defaults: on, nothing exposed, no network, no range, no ponder.
        let t = parse_in(dir.path(), "[sandbox]\n").unwrap();
        assert_eq!(t.sandbox, Sandbox::On);
        assert_eq!(t.sandbox_settings, SandboxSettings::default());
        assert!(!t.ponder);
        let err = parse_in(dir.path(), "[sandbox]\nbuild_seconds = 0\n").unwrap_err();
        assert!(err.to_string().contains("build_seconds"), "{err}");
        for bad in ["build_mb = 0", "build_files = 3", "build_mb = -1"] {
            let err = parse_in(dir.path(), &format!("[sandbox]\n{bad}\n")).unwrap_err();
            let key = bad.split(' ').next().unwrap();
            assert!(err.to_string().contains(key), "{err}");
        }
        // The flag overrides the table's mode.
        let flags = RunSettings {
            sandbox: Some("on".into()),
            ponder: Some(true),
            ..Default::default()
        };
        let src = format!("{TWO_BOTS}[sandbox]\nmode = \"off\"\n");
        let t = Tournament::parse_with(&dir.path().join("x.toml"), &src, &flags).unwrap();
        assert_eq!((t.sandbox, t.ponder), (Sandbox::On, true));
    }

    #[test]
    fn errors_name_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let err = |extra: &str| parse_in(dir.path(), extra).unwrap_err().to_string();
        let e = err("[sandbox]\nexpose = [\n  \"nowhere\",\n]\n");
        assert!(
            e.contains(":9:") && e.contains("sandbox.expose") && e.contains("nowhere"),
            "{e}"
        );
        let e = err("[sandbox]\nmode = \"maybe\"\n");
        assert!(e.contains(":8:") && e.contains("`sandbox`"), "{e}");
        for range in ["[0, 10]", "[10, 0]", "[-1, 10]", "[10]", "[4294967290, 5]"] {
            let e = err(&format!("[sandbox]\nuid_range = {range}\n"));
            assert!(
                e.contains(":8:") && e.contains("sandbox.uid_range"),
                "{range}: {e}"
            );
        }
        assert!(parse_in(dir.path(), "[sandbox]\nuid_range = [4294967290, 4]\n").is_ok());
        let e = err("[sandbox]\nnetwork = true\n");
        assert!(e.contains("network"), "{e}");
        let e = err("ponder = \"yes\"\n");
        assert!(e.contains("ponder"), "{e}");
    }
}

mod ladder_table {
    use crate::league::config::Tournament;
    use std::path::Path;

    fn ladder(lines: &str) -> Result<Tournament, String> {
        let src = format!("name = \"l\"\nvariants = [\"kisolo\"]\n[ladder]\n{lines}\n");
        Tournament::parse(Path::new("ladder.toml"), &src).map_err(|e| e.to_string())
    }

    #[test]
    fn max_games_is_none_by_default_and_a_positive_count_when_given() {
        let t = ladder("").unwrap();
        assert_eq!(t.ladder.unwrap().max_games, None);
        let t = ladder("max_games = 300").unwrap();
        assert_eq!(t.ladder.unwrap().max_games, Some(300));
        let e = ladder("max_games = 0").err().unwrap();
        assert!(
            e.contains("ladder.max_games") && e.contains("0 is out of bounds"),
            "{e}"
        );
    }

    #[test]
    fn the_time_share_keys_have_defaults_and_bounds() {
        let l = ladder("").unwrap().ladder.unwrap();
        assert_eq!(l.maintenance_games_per_hour, 600);
        assert_eq!(l.record_days, 14);
        assert_eq!(l.pace_lead, 4.0);
        let l = ladder("maintenance_games_per_hour = 60\nrecord_days = 3\npace_lead = 10.5")
            .unwrap()
            .ladder
            .unwrap();
        assert_eq!(
            (l.maintenance_games_per_hour, l.record_days, l.pace_lead),
            (60, 3, 10.5)
        );
        for (line, key) in [
            (
                "maintenance_games_per_hour = 0",
                "ladder.maintenance_games_per_hour",
            ),
            ("record_days = 0", "ladder.record_days"),
            ("pace_lead = 0.5", "ladder.pace_lead"),
        ] {
            let e = ladder(line).err().unwrap();
            assert!(e.contains(key) && e.contains("out of bounds"), "{e}");
        }
    }
}

#[test]
fn format_defaults_to_round_robin_and_a_swiss_reads_its_rounds() {
    assert_eq!(parse(TWO_BOTS).unwrap().format, Format::RoundRobin);
    let rr = parse(&format!(
        "{TWO_BOTS}\nformat = \"round-robin\"\nrounds = 3\n"
    ))
    .unwrap();
    assert_eq!((rr.format, rr.rounds), (Format::RoundRobin, 3));
    // Two bots: log2(2) + 2 rounds, one seat-swap group per mini-match.
    let s = parse(&format!("{TWO_BOTS}\nformat = \"swiss\"\n")).unwrap();
    assert_eq!((s.format, s.rounds), (Format::Swiss { rounds: 3 }, 1));
    let s = parse(&format!(
        "{TWO_BOTS}\nformat = \"swiss\"\nrounds = 7\ngames_per_pairing = 6\n"
    ))
    .unwrap();
    assert_eq!((s.format, s.rounds), (Format::Swiss { rounds: 7 }, 3));
    let flags = RunSettings {
        rounds: Some(2),
        ..RunSettings::default()
    };
    let s = Tournament::parse_with(
        Path::new("x.toml"),
        &format!("{TWO_BOTS}\nformat = \"swiss\"\n"),
        &flags,
    )
    .unwrap();
    assert_eq!(s.format, Format::Swiss { rounds: 2 });
}

#[test]
fn bad_formats_name_the_key_and_the_line() {
    let err = |extra: &str| {
        parse(&format!("{TWO_BOTS}{extra}"))
            .unwrap_err()
            .to_string()
    };
    let e = err("format = \"dutch\"\n");
    assert!(
        e.contains("x.toml:7: `format`: must be \"round-robin\""),
        "{e}"
    );
    let k = parse(&format!("{TWO_BOTS}format = \"knockout\"\n")).unwrap();
    assert_eq!(
        (k.format, k.rounds),
        (
            Format::Knockout {
                seeds: vec![],
                stage: 0
            },
            1
        )
    );
    // `--rounds` is a flag: no `rounds` to leave out of the file.
    let e = Tournament::parse_with(
        Path::new("x.toml"),
        &format!("{TWO_BOTS}format = \"knockout\"\n"),
        &RunSettings {
            rounds: Some(3),
            ..Default::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("--rounds: a knockout's rounds follow from its bots (log2, rounded up): the flag does not apply to a knockout: leave it out (the file's format = \"knockout\" is at line 7)"),
        "{e}"
    );
    let e = err("format = \"knockout\"\nrounds = 2\n");
    assert!(e.contains("x.toml:8: `rounds`: a knockout's rounds follow from its bots (log2, rounded up): leave `rounds` out"), "{e}");
    let e = err("format = \"knockout\"\nvariants = [\"filo\", \"tricala3\"]\n");
    assert!(
        e.contains("`format`: a knockout match is between two bots"),
        "{e}"
    );
    let k = parse(&format!(
        "{TWO_BOTS}format = \"knockout\"\nvariants = [\"filo\"]\nseeds = [\"b\", \"a\"]\ngames_per_pairing = 6\n"
    ))
    .unwrap();
    assert_eq!(
        (k.format, k.rounds),
        (
            Format::Knockout {
                seeds: vec![1, 0],
                stage: 0
            },
            3
        )
    );
    let e = err("format = \"swiss\"\nseeds = [\"a\", \"b\"]\n");
    assert!(
        e.contains("x.toml:8: `seeds`: only a knockout is seeded"),
        "{e}"
    );
    let e = err("format = \"swiss\"\ngames_per_pairing = 5\n");
    assert!(
        e.contains("x.toml:8: `games_per_pairing`: must be even"),
        "{e}"
    );
    let e = err("format = \"swiss\"\nrounds = 1001\n");
    assert!(
        e.contains("`rounds`: must be between 1 and 1000, got 1001"),
        "{e}"
    );
    let e = err("format = \"swiss\"\n[sprt]\nelo0 = 0\nelo1 = 5\n");
    assert!(e.contains("`format`: a Swiss has no `[sprt]`"), "{e}");
    let e = err("format = 3\n");
    assert!(e.contains("format"), "{e}");
    // A knockout seeded by a first Swiss: its rounds given, or log2 of
    // the bots rounded up; with `seeds`, or outside a knockout, refused.
    let k = parse(&format!(
        "{TWO_BOTS}format = \"knockout\"\nseeding = \"swiss\"\nseeding_rounds = 3\n"
    ))
    .unwrap();
    assert_eq!(
        k.format,
        Format::Knockout {
            seeds: vec![],
            stage: 3
        }
    );
    let k = parse(&format!(
        "{TWO_BOTS}format = \"knockout\"\nseeding = \"swiss\"\n"
    ))
    .unwrap();
    assert_eq!(
        k.format,
        Format::Knockout {
            seeds: vec![],
            stage: 1
        }
    );
    let e = err("format = \"knockout\"\nseeding = \"swiss\"\nseeds = [\"a\", \"b\"]\n");
    assert!(e.contains("x.toml:8: `seeding`: seeding = \"swiss\" seeds the bracket by a first Swiss: leave `seeds` out"), "{e}");
    let e = err("format = \"knockout\"\nseeding = \"elo\"\n");
    assert!(
        e.contains("`seeding`: must be \"seeds\"") && e.contains("got \"elo\""),
        "{e}"
    );
    let e = err("format = \"knockout\"\nseeding_rounds = 2\n");
    assert!(
        e.contains("`seeding_rounds`: a first stage's rounds need seeding = \"swiss\""),
        "{e}"
    );
    let e = err("format = \"knockout\"\nseeding = \"swiss\"\nseeding_rounds = 0\n");
    assert!(
        e.contains("`seeding_rounds`: must be between 1 and 1000, got 0"),
        "{e}"
    );
    let e = err("format = \"swiss\"\nseeding = \"swiss\"\n");
    assert!(
        e.contains("x.toml:8: `seeding`: only a knockout is seeded"),
        "{e}"
    );
    let e = err("seeding_rounds = 2\n");
    assert!(
        e.contains("x.toml:7: `seeding_rounds`: only a knockout seeded by a Swiss"),
        "{e}"
    );
}

/// A variant table's name labels its rows: not empty, a word that can be
/// part of a game id, read as a name in games.csv (neither `NA` nor a
/// number nor a formula), and not another game's name.
#[test]
fn a_variant_tables_name_is_a_word_of_its_own() {
    for (name, want) in [
        ("", "must not be empty"),
        (" ", "is not allowed"),
        ("kisolo six", "is not allowed"),
        ("filo", "is the name of the game filo"),
        ("NA", "as a missing value"),
        ("1.10", "as a number"),
        ("-k6", "run as a formula"),
    ] {
        let src = format!(
            "{TWO_BOTS}\nvariants = [{{ game = \"kisolo\", name = \"{name}\", options = {{ columns = 6 }} }}]\n"
        );
        let e = parse(&src).unwrap_err().to_string();
        assert!(
            e.contains("variants.name") && e.contains(want),
            "{name:?}: {e}"
        );
    }
    let src = format!(
        "{TWO_BOTS}\nvariants = [{{ game = \"kisolo\", name = \"kisolo\", options = {{ columns = 6 }} }}]\n"
    );
    assert!(parse(&src).is_ok());
}

/// A variant table named `all` or `X-3p` would be taken for a table of
/// the ratings (every variant; 3-player games): refused, naming why.
#[test]
fn a_variant_named_as_a_ratings_table_is_refused() {
    for name in ["all", "All", "kisolo-3p"] {
        let src = TWO_BOTS.replace(
            "bots = [",
            &format!("variants = [{{ game = \"kisolo\", name = \"{name}\" }}]\nbots = ["),
        );
        let e = parse(&src).unwrap_err().to_string();
        assert!(e.contains("names a table of the ratings"), "{name}: {e}");
    }
}

/// `--variants` names the file's own variants by their tables' names
/// (`kisolo6`), as books do; an unknown one lists them.
#[test]
fn variants_flag_names_the_files_own_variants() {
    let src = TWO_BOTS.replace(
        "bots = [",
        "variants = [\"filo\", { game = \"kisolo\", name = \"kisolo6\", options = { columns = 6 } }]\nbots = [",
    );
    let with = |names: &[&str]| {
        Tournament::parse_with(
            Path::new("/tmp/t/x.toml"),
            &src,
            &RunSettings {
                variants: Some(names.iter().map(|s| s.to_string()).collect()),
                ..Default::default()
            },
        )
    };
    let t = with(&["kisolo6"]).unwrap();
    assert_eq!(t.variants.len(), 1);
    assert_eq!(t.variants[0].key, "kisolo6");
    assert_eq!(
        t.variants[0].options.get("columns").map(|v| v.to_string()),
        Some("6".into())
    );
    let e = with(&["kisolo7"]).unwrap_err().to_string();
    assert!(
        e.contains("unknown variant `kisolo7`") && e.contains("the file's own: kisolo6"),
        "{e}"
    );
}

/// Two bots whose names are made the same file name (`x/y`, `x_y`) would
/// write into each other's logs: refused, naming both.
#[test]
fn two_bots_whose_log_files_would_be_one_are_refused() {
    let src = r#"
name = "t"
bots = [
  { name = "x/y", command = "python3 a.py" },
  { name = "x_y", command = "python3 b.py" },
]
"#;
    let e = parse(src).unwrap_err().to_string();
    assert!(
        e.contains("`x/y` and `x_y` would share their log files"),
        "{e}"
    );
}

/// Two bots whose names look alike (`café` composed and as `e` and an
/// accent; `R1` and `r1`; a Cyrillic `а` for a Latin `a`; full-width
/// letters; `ǆ` and `dž`) could not be told apart in any table or log:
/// refused, naming both. Names that only share letters are fine.
#[test]
fn two_bots_whose_names_look_alike_are_refused() {
    for (a, b) in [
        ("caf\u{e9}", "cafe\u{301}"),
        ("R1", "r1"),
        ("ra", "r\u{430}"),
        ("ra", "\u{ff52}\u{ff41}"),
        ("\u{1c6}", "d\u{17e}"),
    ] {
        let src = format!(
            "name = \"t\"\nbots = [\n  {{ name = \"{a}\", command = \"python3 a.py\" }},\n  {{ name = \"{b}\", command = \"python3 b.py\" }},\n]\n"
        );
        let e = parse(&src).unwrap_err().to_string();
        assert!(e.contains(&format!("`{a}` and `{b}` look alike")), "{e}");
    }
    let src = "name = \"t\"\nbots = [\n  { name = \"cafe\", command = \"python3 a.py\" },\n  { name = \"caf\u{e9}\", command = \"python3 b.py\" },\n]\n";
    assert!(parse(src).is_ok());
}

/// Random openings as long as the ply cap would end every game before a
/// bot is asked: refused, naming both.
#[test]
fn openings_that_reach_the_ply_cap_are_refused() {
    let e = parse(&format!("{TWO_BOTS}\nopenings = 10\nmax_plies = 10\n"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("openings") && e.contains("max_plies (10)"),
        "{e}"
    );
    assert!(parse(&format!("{TWO_BOTS}\nopenings = 9\nmax_plies = 10\n")).is_ok());
}

/// A file in the working folder keeps its results in `results/NAME`,
/// named without a `./` (what `arena match` prints).
#[test]
fn a_file_in_the_working_folder_has_its_results_without_a_dot() {
    let t = Tournament::parse(Path::new("match.toml"), TWO_BOTS).unwrap();
    assert_eq!(t.output, PathBuf::from("results/t"));
}

/// The same for a file's own `output`.
#[test]
fn a_files_own_output_in_the_working_folder_is_without_a_dot() {
    let text = format!("{TWO_BOTS}\noutput = \"out\"\n");
    let t = Tournament::parse(Path::new("match.toml"), &text).unwrap();
    assert_eq!(t.output, PathBuf::from("out"));
    let t = Tournament::parse(Path::new("leagues/match.toml"), &text).unwrap();
    assert_eq!(t.output, PathBuf::from("leagues/out"));
}

/// An `output` (or `-o`) that is a file, or under one, is named with its
/// line or its flag before anything is written, not left to the results
/// folder's "Not a directory".
#[test]
fn an_output_that_is_a_file_is_named_where_it_was_given() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("x.toml");
    std::fs::write(dir.path().join("notes.txt"), "x").unwrap();
    let text = format!("{TWO_BOTS}\noutput = \"notes.txt\"\n");
    let e = Tournament::parse(&file, &text).unwrap_err().to_string();
    assert!(e.contains("x.toml:8: `output`"), "{e}");
    assert!(e.contains("notes.txt is a file, not a folder"), "{e}");
    let text = format!("{TWO_BOTS}\noutput = \"notes.txt/league\"\n");
    let e = Tournament::parse(&file, &text).unwrap_err().to_string();
    assert!(e.contains("x.toml:8: `output`"), "{e}");
    assert!(e.contains("notes.txt is a file"), "{e}");
    let flags = RunSettings {
        output: Some(dir.path().join("notes.txt")),
        ..Default::default()
    };
    let e = Tournament::parse_with(&file, TWO_BOTS, &flags)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("--output: "), "{e}");
    // A folder there, or none yet, is fine.
    let text = format!("{TWO_BOTS}\noutput = \"new/league\"\n");
    assert!(Tournament::parse(&file, &text).is_ok());
}

#[test]
fn a_name_too_long_for_a_folder_is_named_at_its_line() {
    let long = "a".repeat(MAX_NAME + 1);
    let src = TWO_BOTS.replace("name = \"t\"", &format!("name = \"{long}\""));
    let e = parse(&src).unwrap_err().to_string();
    assert!(e.contains(":2: `name`") && e.contains("at most 200"), "{e}");
    let ok = "a".repeat(MAX_NAME);
    let src = TWO_BOTS.replace("name = \"t\"", &format!("name = \"{ok}\""));
    assert_eq!(parse(&src).unwrap().name, ok);
}

#[test]
fn a_bot_tables_limits_have_the_files_bounds() {
    let src = TWO_BOTS.replace(
        "env = { X = \"1\" } }",
        "env = { X = \"1\" }, limits = { cpus = 1000000000 } }",
    );
    let e = parse(&src).unwrap_err().to_string();
    assert!(
        e.contains(":5: `bots[1].limits.cpus`: must be between 1 and 1024"),
        "{e}"
    );
}

/// A value the flags gave is named by the flag, not the file's line.
#[test]
fn flags_that_clash_with_the_files_format_name_the_flag() {
    let three = r#"
name = "t"
format = "knockout"
seeds = ["a", "b", "c"]
bots = [
  { name = "a", command = "x" },
  { name = "b", command = "x" },
  { name = "c", command = "x" },
]
"#;
    let with = |flags: RunSettings, src: &str| {
        Tournament::parse_with(Path::new("/tmp/t/tournaments/x.toml"), src, &flags)
            .unwrap_err()
            .to_string()
    };
    let e = with(
        RunSettings {
            rounds: Some(2),
            ..Default::default()
        },
        three,
    );
    assert!(e.starts_with("--rounds:"), "{e}");
    let e = with(
        RunSettings {
            variants: Some(vec!["tricala3".into()]),
            ..Default::default()
        },
        three,
    );
    assert!(
        e.starts_with("--variants:") && e.contains("tricala-3p"),
        "{e}"
    );
    let e = with(
        RunSettings {
            gauntlet: Some("a".into()),
            ..Default::default()
        },
        three,
    );
    assert!(e.starts_with("--gauntlet:") && e.contains("line 3"), "{e}");
    let e = with(
        RunSettings {
            bots: Some(vec!["a".into(), "b".into()]),
            ..Default::default()
        },
        three,
    );
    assert!(
        e.starts_with("--bots:") && e.contains("\"c\"") && e.contains("line 4"),
        "{e}"
    );
    let swiss = three
        .replace("knockout", "swiss")
        .replace("seeds = [\"a\", \"b\", \"c\"]\n", "");
    let e = with(
        RunSettings {
            sprt: Some("elo0=0,elo1=5".into()),
            ..Default::default()
        },
        &swiss,
    );
    assert!(e.starts_with("--sprt:") && e.contains("Swiss"), "{e}");
    // A 3-player variant of the file, with fewer bots kept by --bots.
    let rr = three.replace("format = \"knockout\"\nseeds = [\"a\", \"b\", \"c\"]\n", "")
        + "variants = [\"tricala3\"]\n";
    let e = with(
        RunSettings {
            bots: Some(vec!["a".into(), "b".into()]),
            ..Default::default()
        },
        &rr,
    );
    assert!(e.starts_with("--bots:") && e.contains("line 8"), "{e}");
}

/// An increment without a per-game clock would be ignored: refused, at
/// the file's line or the flag.
#[test]
fn an_increment_without_a_clock_is_refused_where_it_was_given() {
    let src = format!("{TWO_BOTS}\n[time_control]\nincrement_ms = 100\n");
    let e = parse(&src).unwrap_err().to_string();
    assert!(
        e.contains("`time_control.increment_ms`") && e.contains("give base_ms too"),
        "{e}"
    );
    let src = format!("{TWO_BOTS}\n[time_control]\nbase_ms = 60000\nincrement_ms = 100\n");
    let t = parse(&src).unwrap();
    assert_eq!((t.time.base_ms, t.time.increment_ms), (60000, 100));
    let flags = RunSettings {
        increment_ms: Some(5),
        ..Default::default()
    };
    let e = Tournament::parse_with(Path::new("/tmp/t/tournaments/x.toml"), TWO_BOTS, &flags)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("--increment-ms:") && e.contains("give --base-ms too"),
        "{e}"
    );
}

/// A bot named with a leading dot gets log files that `ls` shows
/// (`_x-w0.log`), so it cannot share them with a bot named `_x`: refused,
/// naming both. Dots alone are no bot's name.
#[test]
fn a_leading_dot_is_no_hidden_log_and_dots_alone_no_name() {
    let layout = crate::league::folder::Layout::new(PathBuf::from("/r"));
    assert_eq!(layout.bot_log(".x", 0), PathBuf::from("/r/logs/_x-w0.log"));
    assert_eq!(layout.bot_log("..", 1), PathBuf::from("/r/logs/_.-w1.log"));
    let src = r#"
name = "t"
bots = [
  { name = ".x", command = "python3 a.py" },
  { name = "_x", command = "python3 b.py" },
]
"#;
    let e = parse(src).unwrap_err().to_string();
    assert!(
        e.contains("`.x` and `_x` would share their log files"),
        "{e}"
    );
    for name in [".", ".."] {
        let src = format!(
            "name = \"t\"\nbots = [\n  {{ name = \"{name}\", command = \"python3 a.py\" }},\n  {{ name = \"b\", command = \"python3 b.py\" }},\n]\n"
        );
        let e = parse(&src).unwrap_err().to_string();
        assert!(
            e.contains("x.toml:3") && e.contains("bots[0].name") && e.contains("dots alone"),
            "{e}"
        );
    }
}

/// A bot named as one of crosstable.csv's fixed columns would give it two
/// columns of one name: refused, naming the file, the line and the name.
#[test]
fn a_bot_named_as_a_crosstable_column_is_refused() {
    for name in ["variant", "bot"] {
        let src = format!(
            "name = \"t\"\nbots = [\n  {{ name = \"a\", command = \"python3 b.py\" }},\n  {{ name = \"{name}\", command = \"python3 a.py\" }},\n]\n"
        );
        let e = parse(&src).unwrap_err().to_string();
        assert!(
            e.contains("x.toml:4")
                && e.contains(&format!(
                    "bot name `{name}` is the name of one of crosstable.csv's fixed columns"
                ))
                && e.contains(&format!("`{name}.1`")),
            "{e}"
        );
    }
    let src = "name = \"t\"\nbots = [\n  { name = \"Variant\", command = \"python3 a.py\" },\n  { name = \"bots\", command = \"python3 b.py\" },\n]\n";
    assert!(parse(src).is_ok());
}

/// A bot's name that is not a string (a TOML date, a number) is refused
/// by its key, not read as its text.
#[test]
fn a_bot_name_that_is_no_string_is_refused() {
    for (value, kind) in [("2024-01-01", "datetime"), ("7", "integer")] {
        let src = format!(
            "name = \"t\"\n[[bots]]\nname = {value}\ncommand = \"python3 a.py\"\n[[bots]]\nname = \"b\"\ncommand = \"python3 b.py\"\n"
        );
        let e = parse(&src).unwrap_err().to_string();
        assert!(
            e.contains("x.toml:3")
                && e.contains("bots[0].name")
                && e.contains("must be a string")
                && e.contains(kind),
            "{e}"
        );
    }
}

/// A value of the wrong type inside a bot's table is named by its place in
/// it (`bots[1].env.X`, `bots[0].args[1]`), at its key's line, not by the
/// bot alone.
#[test]
fn a_value_of_the_wrong_type_in_a_bot_table_is_named_by_its_path() {
    let src = TWO_BOTS.replace("env = { X = \"1\" } }", "env = { X = 1 } }");
    let e = parse(&src).unwrap_err().to_string();
    assert!(e.contains(":5: `bots[1].env.X`"), "{e}");
    assert!(e.contains("expected a string"), "{e}");
    let src = TWO_BOTS.replace(
        "env = { X = \"1\" } }",
        "env = { X = \"1\" }, args = [\"a\", 2] }",
    );
    let e = parse(&src).unwrap_err().to_string();
    assert!(e.contains(":5: `bots[1].args[1]`"), "{e}");
}

/// `bots = "all"` with no bots folder to read is that line's error.
#[test]
fn all_bots_of_a_missing_folder_names_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let src = "name = \"t\"\nbots_dir = \"nowhere\"\nbots = \"all\"\n";
    let e = Tournament::parse(&dir.path().join("x.toml"), src)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("x.toml:3: `bots`") && e.contains("cannot read bots folder"),
        "{e}"
    );
}

/// A seed above TOML's largest integer says where TOML stops and how to
/// write it; written as a string, it is taken.
#[test]
fn a_seed_above_tomls_integers_says_how_to_write_it() {
    let e = parse(&format!("{TWO_BOTS}seed = 18446744073709551615\n"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("TOML integers stop at 9223372036854775807: write a larger `seed` as a string (seed = \"18446744073709551615\"), or give it with --seed"),
        "{e}"
    );
    let t = parse(&format!("{TWO_BOTS}seed = \"18446744073709551615\"\n")).unwrap();
    assert_eq!(t.seed, u64::MAX);
    assert_eq!(parse(&format!("{TWO_BOTS}seed = 5\n")).unwrap().seed, 5);
    let e = parse(&format!("{TWO_BOTS}seed = \"x\"\n"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("expected a whole number (0 or more)"), "{e}");
}

/// A bad key of `[sprt]` is named at its own line, as the file's other
/// fields are (it was the table's line and a TOML parse error).
#[test]
fn a_bad_sprt_key_is_named_at_its_line() {
    let err = |extra: &str| {
        parse(&format!("{TWO_BOTS}variants = [\"filo\"]\n[sprt]\n{extra}"))
            .unwrap_err()
            .to_string()
    };
    let e = err("elo0 = 0\nelo1 = 5\nalpha = 0.5\n");
    assert!(
        e.contains("x.toml:11: `sprt.alpha`: SPRT alpha must be between 0 and 0.5 (both excluded), got 0.5"),
        "{e}"
    );
    let e = err("elo0 = 5\nelo1 = 5\n");
    assert!(
        e.contains("x.toml:10: `sprt.elo1`: SPRT elo0 must be less than elo1"),
        "{e}"
    );
    let e = err("elo0 = -300\nelo1 = 5\n");
    assert!(
        e.contains("x.toml:9: `sprt.elo0`: SPRT elo0 must be within"),
        "{e}"
    );
    let e = err("elo0 = 0\nelo1 = 5\nbeta = 0\n");
    assert!(e.contains("x.toml:11: `sprt.beta`: "), "{e}");
    let e = err("elo0 = 0\n");
    assert!(e.contains("missing field `elo1`"), "{e}");
    let ok = parse(&format!(
        "{TWO_BOTS}variants = [\"filo\"]\n[sprt]\nelo0 = 0\nelo1 = 5\nbeta = 0.1\nmodel = \"logistic\"\n"
    ))
    .unwrap();
    let s = ok.sprt.unwrap();
    assert_eq!(
        (s.alpha, s.beta, s.model),
        (0.05, 0.1, crate::ratings::sprt::Model::Logistic)
    );
}
