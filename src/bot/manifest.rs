//! Bot manifests: `bots/<folder>/bot.toml`, how a submitted bot says who it
//! is, how it is built and how it is started.
//!
//! Owns the manifest format and the placeholders of commands; it does not
//! build or start anything.
//!
//! ```toml
//! name = "random-py"          # default: the folder name
//! author = "mancala-arena"
//! language = "python"
//! command = ["python3", "bot.py"]   # run in the bot's folder
//! build = ["make"]                  # optional, run once in the folder
//! env = { SEED = "1" }              # optional
//! broken = false                    # true: a test bot, never in "all"
//! template = false                  # true: a template (bots/templates), never in "all"
//! ```
//!
//! Commands may use `{bin_dir}` (the folder of the running `arena`
//! executable, where cargo puts this package's other binaries),
//! `{arena}` (the `arena` executable itself) and `{cargo_profile}` (`release`
//! or `dev`, matching how `arena` was built).

use super::launch::BotCommand;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Longest bot name, in bytes (as for a hello's name).
pub const NAME_MAX: usize = 64;

/// Why `name` cannot name a bot in a league (a bot.toml `name` or a
/// tournament's inline bot), or `None` when it can: it becomes a CSV field, a
/// PGN tag and part of log file names, so it must be 1 to [`NAME_MAX`] bytes,
/// not only white space, without commas, quotes or control characters,
/// and not dots alone (`.` and `..` name folders, not bots; other
/// characters a file name cannot hold, `/` among them, are replaced in
/// the log files' names, `results::file_safe`).
pub fn name_problem(name: &str) -> Option<&'static str> {
    if name.trim().is_empty() {
        Some("must not be empty")
    } else if name.chars().all(|c| c == '.') {
        Some("must not be dots alone (`.` and `..` name folders)")
    } else if name.len() > NAME_MAX {
        Some("is longer than 64 bytes")
    } else if name.contains(',') || name.contains('"') {
        Some("must not hold commas or quotes")
    } else if name.chars().any(crate::text::is_hidden) {
        Some("must not hold control or invisible characters (tabs, new lines, escapes, zero-width spaces, direction overrides)")
    } else if crate::text::shows_nothing(name) {
        Some("must show something: not only white space, blanks (U+2800) or marks of no width")
    } else if name.trim() != name {
        Some("must not begin or end with white space")
    } else if crate::text::formula_lead(name).is_some() {
        // As a hello's name (protocol.md): it goes into games.csv.
        Some("must not begin with `=`, `+`, `-` or `@`, which a spreadsheet opening games.csv would run as a formula")
    } else if let Some(kind) = crate::text::csv_reads_as(name) {
        use crate::text::CsvReading;
        Some(match kind {
            CsvReading::Missing => "must not be a word R and pandas read in games.csv as a missing value (`NA`, `null`, `NaN`, `None`, `n/a` in any case): the bot's games would lose their seat",
            CsvReading::Boolean => "must not be a word R and pandas read in games.csv as a boolean (`TRUE`, `FALSE` in any case, `T`, `F`)",
            CsvReading::Number => "must not be a number (`123`, `1.10`, `1e5`, `inf`): R and pandas would read games.csv's seat columns as numbers, where `1.1` and `1.10` are one bot",
        })
    } else {
        None
    }
}

/// Why `words` cannot be a command (a bot.toml's or a tournament's
/// `command` or `build`), or `None` when they can: a process's program
/// and arguments are C strings, so none may hold a NUL byte (the start
/// would fail with "nul byte found in provided data", naming nothing), and
/// the program must be named (`[""]` is looked for on `PATH` as ``).
pub fn command_problem(words: &[String]) -> Option<String> {
    if let Some(w) = words.iter().find(|w| w.contains('\0')) {
        return Some(format!(
            "holds a NUL byte (\\u0000) in `{}`: no program or argument can",
            w.escape_debug()
        ));
    }
    match words.first() {
        Some(p) if p.trim().is_empty() => Some(
            "names no program: its first word is empty (command = [\"python3\", \"bot.py\"])"
                .into(),
        ),
        _ => None,
    }
}

/// Why `env` (a bot.toml's or a tournament's bot `env`) cannot be a
/// process's environment, or `None` when it can: a name is not empty and
/// holds no `=` (the environment is `NAME=VALUE` strings: `"A=B" = "c"`
/// would set `A` to `B=c`), and neither holds a NUL byte.
pub fn env_problem<'a>(env: impl IntoIterator<Item = (&'a String, &'a String)>) -> Option<String> {
    env.into_iter().find_map(|(k, v)| {
        let name = k.escape_debug();
        if k.is_empty() {
            Some("a variable has an empty name".to_string())
        } else if k.contains('=') {
            Some(format!("`{name}`: a variable's name cannot hold `=`"))
        } else if k.contains('\0') || v.contains('\0') {
            Some(format!(
                "`{name}`: a variable's name and value cannot hold a NUL byte (\\u0000)"
            ))
        } else {
            None
        }
    })
}

/// Why `key`, which holds `value`, is refused: it must be a string, in
/// quotes (`name = 2024-01-01` is a TOML date, `name = 7` a number).
pub fn not_text(key: &str, value: &toml::Value) -> String {
    let shown = value.to_string();
    let kind = value.type_str();
    let article = match kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
        true => "an",
        false => "a",
    };
    format!(
        "`{key}` must be a string, in quotes (`{key} = \"{}\"`), not {article} {kind}",
        shown.trim_matches('"').escape_debug(),
    )
}

/// The file name of a manifest inside a bot folder.
pub const MANIFEST: &str = "bot.toml";

/// A command in a manifest or tournament file: a string (split into words
/// as a POSIX shell splits a line, quotes and all, as a BOT on the command
/// line is) or an array of words.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum CommandValue {
    Line(String),
    Argv(Vec<String>),
}

impl CommandValue {
    pub fn into_argv(self) -> Result<Vec<String>, String> {
        match self {
            CommandValue::Line(s) => shlex::split(&s).ok_or_else(|| {
                format!(
                    "`{}` has a quote that is not closed (or ends in a backslash): a string is split into words as a shell would; or give the words as a list, [\"python3\", \"my bot.py\"]",
                    s.escape_debug()
                )
            }),
            CommandValue::Argv(v) => Ok(v),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("cannot read bots folder {path}: {source}")]
    Dir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
    /// As `Invalid`, at a line of the file.
    #[error("{path}:{line}: {message}")]
    InvalidAt {
        path: PathBuf,
        line: usize,
        message: String,
    },
}

/// A bot folder's manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifest {
    pub name: String,
    pub author: String,
    pub language: String,
    pub command: Vec<String>,
    pub build: Option<Vec<String>>,
    pub env: Vec<(String, String)>,
    /// Misbehaving test bots: never part of `bots = "all"`.
    pub broken: bool,
    /// A template for bot authors (bots/templates/): never in "all", since
    /// its build needs a compiler the machine may not have.
    pub template: bool,
    /// The bot's folder (absolute if the bots folder was given absolute).
    pub dir: PathBuf,
    /// What the bot asks for in its sandbox (`[limits]`); a league's
    /// `[limits]` and the flags override it.
    pub limits: super::launch::LimitSettings,
    /// The line of bot.toml where `command` is written (for messages).
    pub command_line: usize,
    /// The line of bot.toml where `build` is written, if it is.
    pub build_line: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    /// A string; anything else is refused by name (`name = 2024-01-01`,
    /// a date, is no text).
    name: Option<toml::Spanned<toml::Value>>,
    #[serde(default)]
    author: String,
    #[serde(default)]
    language: String,
    #[serde(default)]
    description: String,
    command: toml::Spanned<CommandValue>,
    build: Option<toml::Spanned<CommandValue>>,
    #[serde(default)]
    env: Option<toml::Spanned<BTreeMap<String, String>>>,
    #[serde(default)]
    broken: bool,
    #[serde(default)]
    template: bool,
    #[serde(default)]
    limits: Option<toml::Spanned<super::launch::LimitSettings>>,
}

impl Manifest {
    /// Reads `dir/bot.toml`.
    pub fn load(dir: &Path) -> Result<Manifest, ManifestError> {
        load(dir)
    }

    /// The start command: placeholders expanded, run in the bot's folder,
    /// with the manifest's environment.
    pub fn command(&self) -> BotCommand {
        let mut c = BotCommand::from_words(&expand(&self.command)).unwrap_or_default();
        c.cwd = Some(self.dir.clone());
        c.env = self.env.clone();
        c
    }
}

fn load(dir: &Path) -> Result<Manifest, ManifestError> {
    let path = dir.join(MANIFEST);
    let src = crate::text::read_utf8(&path).map_err(|source| ManifestError::Read {
        path: path.clone(),
        source,
    })?;
    let raw: RawManifest = toml::from_str(&src).map_err(|e| ManifestError::Invalid {
        path: path.clone(),
        message: crate::text::plain_toml(&e.to_string()),
    })?;
    let _ = raw.description;
    let line_of = |at: usize| src[..at.min(src.len())].matches('\n').count() + 1;
    // Each fault names the line of its key.
    let at = |line: usize, message: String| ManifestError::InvalidAt {
        path: path.clone(),
        line,
        message,
    };
    let folder = dir
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let (name, name_line) = match raw.name {
        None => (folder, None),
        Some(n) => {
            let line = line_of(n.span().start);
            match n.into_inner() {
                toml::Value::String(s) => (s, Some(line)),
                other => return Err(at(line, not_text("name", &other))),
            }
        }
    };
    if let Some(why) = name_problem(&name) {
        let message = format!("`name`: `{}` {why}", crate::text::shown_name(&name));
        return Err(match name_line {
            Some(line) => at(line, message),
            // The folder's name, for want of a `name`.
            None => ManifestError::Invalid { path, message },
        });
    }
    let command_line = line_of(raw.command.span().start);
    let build_line = raw.build.as_ref().map(|b| line_of(b.span().start));
    let command = raw
        .command
        .into_inner()
        .into_argv()
        .map_err(|why| at(command_line, format!("`command`: {why}")))?;
    if command.is_empty() {
        return Err(at(command_line, "`command` is empty".into()));
    }
    let build = match raw.build {
        Some(b) => Some(
            CommandValue::into_argv(b.into_inner())
                .map_err(|why| at(build_line.unwrap_or(1), format!("`build`: {why}")))?,
        ),
        None => None,
    };
    if let Some(why) = command_problem(&command) {
        return Err(at(command_line, format!("`command` {why}")));
    }
    if let Some(why) = build.as_deref().and_then(command_problem) {
        return Err(at(build_line.unwrap_or(1), format!("`build` {why}")));
    }
    let (env, env_line) = match raw.env {
        Some(e) => {
            let line = line_of(e.span().start);
            (e.into_inner(), line)
        }
        None => (BTreeMap::new(), 1),
    };
    if let Some(why) = env_problem(&env) {
        return Err(at(env_line, format!("`env`: {why}")));
    }
    let limits = match raw.limits {
        Some(l) => {
            let at = l.span().start;
            let l = l.into_inner();
            // The line of the key, from the table on; else of the table.
            let line = |key: &str| line_of(at + src[at..].find(key).unwrap_or(0));
            if let Some(field) = l.zero() {
                return Err(ManifestError::InvalidAt {
                    line: line(field),
                    path,
                    message: format!("`limits.{field}`: must be at least 1"),
                });
            }
            if let Some((field, n, max)) = l.too_high() {
                return Err(ManifestError::InvalidAt {
                    line: line(field),
                    path,
                    message: format!("`limits.{field}`: must be between 1 and {max}, got {n}"),
                });
            }
            l
        }
        None => Default::default(),
    };
    Ok(Manifest {
        name,
        author: raw.author,
        language: raw.language,
        command,
        build,
        env: env.into_iter().collect(),
        broken: raw.broken,
        template: raw.template,
        dir: dir.to_path_buf(),
        limits,
        command_line,
        build_line,
    })
}

/// Every folder of `bots_dir` that holds a `bot.toml` (recursively, so
/// `bots/broken/*` is found too), sorted by path.
pub fn discover(bots_dir: &Path) -> Result<Vec<Manifest>, ManifestError> {
    let (found, mut bad) = discover_all(bots_dir)?;
    match bad.is_empty() {
        true => Ok(found),
        false => Err(bad.remove(0)),
    }
}

/// Every manifest under `bots_dir` that loads, and the error of every one
/// that does not (so that one bad bot.toml does not hide the others).
/// Fails only when `bots_dir` cannot be read.
pub fn discover_all(bots_dir: &Path) -> Result<(Vec<Manifest>, Vec<ManifestError>), ManifestError> {
    let mut out = Vec::new();
    let mut bad = Vec::new();
    walk(bots_dir, &mut out, &mut bad, 0)?;
    out.sort_by(|a, b| a.dir.cmp(&b.dir));
    Ok((out, bad))
}

fn walk(
    dir: &Path,
    out: &mut Vec<Manifest>,
    bad: &mut Vec<ManifestError>,
    depth: usize,
) -> Result<(), ManifestError> {
    let entries = std::fs::read_dir(dir).map_err(|source| ManifestError::Dir {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for d in dirs {
        if d.join(MANIFEST).is_file() {
            match Manifest::load(&d) {
                Ok(m) => out.push(m),
                Err(e) => bad.push(e),
            }
        } else if depth < 2 {
            walk(&d, out, bad, depth + 1)?;
        }
    }
    Ok(())
}

/// The files a bot's command names: its program (found on `PATH` when
/// the command names it bare, as `python3`) and every argument that is a
/// file, relative to `cwd` (the bot's folder; else the current one).
pub fn program_files(argv: &[String], cwd: Option<&Path>) -> Vec<PathBuf> {
    let here = cwd.map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let Some((program, args)) = argv.split_first() else {
        return Vec::new();
    };
    let program = if program.contains('/') {
        Some(here.join(program))
    } else {
        std::env::var_os("PATH").and_then(|path| {
            std::env::split_paths(&path)
                .map(|d| d.join(program))
                .find(|p| p.is_file())
        })
    };
    program
        .into_iter()
        .chain(args.iter().map(|a| here.join(a)))
        .filter(|p| p.is_file())
        .collect()
}

/// SHA-256 (hex) of each file of [`program_files`], by path as named: what
/// `league.json` keeps so that a resume can say which bot changed. `seen`
/// holds the files hashed so far (bots of one program share it: each file
/// is read once). A file over [`WHOLE_HASH_MAX`] is hashed by its size,
/// modification time and first [`HEAD_HASHED`] bytes ([`file_hash`]).
pub fn program_hashes(
    argv: &[String],
    cwd: Option<&Path>,
    seen: &mut std::collections::HashMap<PathBuf, Option<String>>,
) -> std::collections::BTreeMap<String, String> {
    let mut out = std::collections::BTreeMap::new();
    for file in program_files(argv, cwd) {
        let hex = seen.entry(file.clone()).or_insert_with(|| file_hash(&file));
        if let Some(hex) = hex {
            out.insert(file.display().to_string(), hex.clone());
        }
    }
    out
}

/// Largest file [`file_hash`] reads whole: a bot's program, a script, a
/// model of its own. A larger one (a data file named in its command, a
/// sparse file of 20 GB) would stall every start and resume.
pub const WHOLE_HASH_MAX: u64 = 64 << 20;
/// How much of a file over [`WHOLE_HASH_MAX`] is read.
pub const HEAD_HASHED: u64 = 1 << 20;

/// SHA-256 (hex) of a file up to [`WHOLE_HASH_MAX`] bytes, whole; of a
/// larger one, of its size, modification time (nanoseconds since the
/// epoch) and first [`HEAD_HASHED`] bytes, written `size+mtime+head:HEX`
/// (a change of its middle that keeps its size and time is not seen).
/// `None` when it cannot be read.
fn file_hash(file: &Path) -> Option<String> {
    use sha2::{Digest, Sha256};
    let f = std::fs::File::open(file).ok()?;
    let meta = f.metadata().ok()?;
    let mut h = Sha256::new();
    let whole = meta.len() <= WHOLE_HASH_MAX;
    let read = if whole {
        meta.len()
    } else {
        let mtime = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        h.update(format!("size {} mtime {mtime}\n", meta.len()).as_bytes());
        HEAD_HASHED
    };
    let mut f = std::io::Read::take(f, read);
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match std::io::Read::read(&mut f, &mut buf) {
            Ok(0) => break,
            Ok(n) => h.update(&buf[..n]),
            Err(_) => return None,
        }
    }
    let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    Some(match whole {
        true => hex,
        false => format!("size+mtime+head:{hex}"),
    })
}

/// Replaces the placeholders `{arena}`, `{bin_dir}` and `{cargo_profile}`
/// in a command.
pub fn expand(argv: &[String]) -> Vec<String> {
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("arena"));
    let bin_dir = exe
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    // Test harnesses live in target/<profile>/deps, examples in
    // target/<profile>/examples; the binaries one up.
    let bin_dir = if bin_dir
        .file_name()
        .is_some_and(|n| n == "deps" || n == "examples")
    {
        bin_dir.parent().map(Path::to_path_buf).unwrap_or(bin_dir)
    } else {
        bin_dir
    };
    let profile = if bin_dir.file_name().is_some_and(|n| n == "release") {
        "release"
    } else {
        "dev"
    };
    argv.iter()
        .map(|a| {
            a.replace("{arena}", &exe.to_string_lossy())
                .replace("{bin_dir}", &bin_dir.to_string_lossy())
                .replace("{cargo_profile}", profile)
        })
        .collect()
}

/// The placeholders [`expand`] replaces.
pub const PLACEHOLDERS: [&str; 3] = ["{arena}", "{bin_dir}", "{cargo_profile}"];

/// A word in braces left in an expanded command that looks like a
/// placeholder but is none (`{bindir}`, `{nope}`): it was taken as it is,
/// so the command names a file that is not there. Told with the
/// placeholders there are, where a bot cannot start.
pub fn unknown_placeholder(argv: &[String]) -> Option<String> {
    /// Each `{...}` of `a`, in order.
    fn braced(a: &str) -> Vec<&str> {
        let mut rest = a;
        let mut found = Vec::new();
        while let Some(at) = rest.find('{') {
            let Some(len) = rest[at..].find('}') else {
                break;
            };
            found.push(&rest[at..=at + len]);
            rest = &rest[at + len + 1..];
        }
        found
    }
    argv.iter().flat_map(|a| braced(a)).find_map(|word| {
        let name = &word[1..word.len() - 1];
        let looks = !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !PLACEHOLDERS.contains(&word);
        looks.then(|| {
            let near = crate::text::closest(word, PLACEHOLDERS)
                .map(|p| format!(" (did you mean `{p}`?)"))
                .unwrap_or_default();
            format!(
                "`{word}` is no placeholder{near}: a command may use {}",
                PLACEHOLDERS.map(|p| format!("`{p}`")).join(", ")
            )
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_in_braces_that_is_no_placeholder_is_named() {
        let argv = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            unknown_placeholder(&argv(&["{bindir}/random-bot"])).as_deref(),
            Some("`{bindir}` is no placeholder (did you mean `{bin_dir}`?): a command may use `{arena}`, `{bin_dir}`, `{cargo_profile}`")
        );
        // A placeholder the command may use is none of these, even
        // unexpanded (a bot that cannot start is shown with its command
        // as written), nor does it hide an unknown one after it.
        assert_eq!(unknown_placeholder(&argv(&["{bin_dir}/search-bot"])), None);
        assert!(unknown_placeholder(&argv(&["{bin_dir}/{nope}"]))
            .is_some_and(|m| m.starts_with("`{nope}`")));
        assert!(unknown_placeholder(&argv(&["x", "{nope}"]))
            .is_some_and(|w| w.starts_with("`{nope}` is no placeholder: ")));
        // JSON and empty braces are a bot's own arguments.
        assert_eq!(
            unknown_placeholder(&argv(&["bot", "{\"depth\": 3}", "{}"])),
            None
        );
        assert_eq!(
            unknown_placeholder(&expand(&argv(&["{bin_dir}/x", "{arena}"]))),
            None
        );
    }

    #[test]
    fn loads_and_discovers_manifests() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let broken = dir.path().join("broken").join("crash");
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&broken).unwrap();
        std::fs::write(
            a.join("bot.toml"),
            "author = \"me\"\nlanguage = \"python\"\ncommand = [\"python3\", \"bot.py\"]\n",
        )
        .unwrap();
        std::fs::write(
            broken.join("bot.toml"),
            "name = \"crash\"\ncommand = \"python3 crash.py\"\nbroken = true\n",
        )
        .unwrap();
        let found = discover(dir.path()).unwrap();
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].name, "a");
        assert_eq!(found[0].command, vec!["python3", "bot.py"]);
        assert!(found[1].broken);

        std::fs::write(a.join("bot.toml"), "command = []\n").unwrap();
        let e = Manifest::load(&a).unwrap_err().to_string();
        assert!(e.contains("bot.toml") && e.contains("command"), "{e}");
    }

    #[test]
    fn names_follow_the_hello_rule() {
        assert_eq!(name_problem("greedy-2"), None);
        assert_eq!(name_problem(&"x".repeat(NAME_MAX)), None);
        for bad in [
            "",
            "  ",
            "a,b",
            "a\"b",
            "tab\there",
            "new\nline",
            "esc\u{1b}[31m",
            "random-python\u{200b}",
            "\u{202e}evil",
            "random-python ",
            " x",
            "a\u{a0}",
            ".",
            "..",
            "...",
            "=cmd",
            "+SUM(1)",
            "-2",
            "@x",
            "\u{3164}",
            "\u{2800}\u{2800}",
            "\u{301}\u{301}",
            "NA",
            "null",
            "TRUE",
            "1.10",
            "1e5",
        ] {
            assert!(name_problem(bad).is_some(), "{bad:?} accepted");
        }
        assert_eq!(
            name_problem("\u{2800}"),
            Some("must show something: not only white space, blanks (U+2800) or marks of no width")
        );
        assert!(name_problem(&"x".repeat(NAME_MAX + 1)).is_some());

        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("bot.toml"),
            "name = \"evil\\u001b[2J\"\ncommand = [\"true\"]\n",
        )
        .unwrap();
        let e = Manifest::load(dir.path()).unwrap_err().to_string();
        assert!(
            e.contains("`name`") && e.contains("control or invisible characters"),
            "{e}"
        );
        assert!(
            !e.contains('\u{1b}'),
            "the error echoes the escape raw: {e:?}"
        );
    }

    /// A `name` that is not a string (a TOML date, a number) is refused,
    /// the file and the key named, not read as its text.
    #[test]
    fn a_name_that_is_no_string_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        for (value, kind) in [
            ("2024-01-01", "datetime"),
            ("1979-05-27T07:32:00Z", "datetime"),
            ("7", "integer"),
        ] {
            std::fs::write(
                dir.path().join("bot.toml"),
                format!("name = {value}\ncommand = [\"true\"]\n"),
            )
            .unwrap();
            let e = Manifest::load(dir.path()).unwrap_err().to_string();
            assert!(
                e.contains("bot.toml") && e.contains("`name` must be a string") && e.contains(kind),
                "{e}"
            );
        }
    }

    /// A command written as one string is split as a shell splits it
    /// (quotes keep a word with a space whole), as a BOT on the command
    /// line is; a quote left open is named.
    #[test]
    fn a_command_string_is_split_as_a_shell_would() {
        let dir = tempfile::tempdir().unwrap();
        let toml = "command = \"python3 'my bot.py' --depth 3\"\n";
        std::fs::write(dir.path().join("bot.toml"), toml).unwrap();
        let m = Manifest::load(dir.path()).unwrap();
        assert_eq!(m.command, ["python3", "my bot.py", "--depth", "3"]);
        std::fs::write(
            dir.path().join("bot.toml"),
            "command = \"python3 'bot.py\"\n",
        )
        .unwrap();
        let e = Manifest::load(dir.path()).unwrap_err().to_string();
        assert!(
            e.contains("`command`") && e.contains("a quote that is not closed"),
            "{e}"
        );
    }

    #[test]
    fn a_bot_asks_for_its_limits() {
        let dir = tempfile::tempdir().unwrap();
        let toml = "command = [\"true\"]\n[limits]\nmemory_mb = 2048\n";
        std::fs::write(dir.path().join("bot.toml"), toml).unwrap();
        let m = Manifest::load(dir.path()).unwrap();
        assert_eq!(m.limits.memory_mb, Some(2048));
        assert_eq!(m.limits.processes, None);
        // The league's setting wins over the bot's, the bot's over the default.
        let league = super::super::launch::LimitSettings {
            processes: Some(8),
            memory_mb: None,
            ..Default::default()
        };
        let mut l = super::super::launch::Limits::new(1 << 16);
        league.or(m.limits).apply(&mut l);
        assert_eq!((l.memory_mb, l.processes, l.cpus), (2048, 8, 1));
        // Raised over the defaults where the league sets nothing: said.
        assert_eq!(
            m.limits.raised_over_defaults(&league),
            ["memory_mb = 2048 (default 1024)"]
        );
        let capped = super::super::launch::LimitSettings {
            memory_mb: Some(512),
            ..Default::default()
        };
        assert!(m.limits.raised_over_defaults(&capped).is_empty());
        let toml = "command = [\"true\"]\n[limits]\ncpus = 0\n";
        std::fs::write(dir.path().join("bot.toml"), toml).unwrap();
        let e = Manifest::load(dir.path()).unwrap_err().to_string();
        assert!(
            e.ends_with("bot.toml:3: `limits.cpus`: must be at least 1"),
            "{e}"
        );
    }

    /// A bot.toml's limits have the bounds of the flags and of a league
    /// file's `[limits]`, said at their line: 5000000 processes would
    /// stop the sandbox (misread as no user namespace), a memory of 2^63
    /// MiB be granted.
    #[test]
    fn a_bot_asks_for_limits_within_the_bounds_of_the_flags() {
        let dir = tempfile::tempdir().unwrap();
        for (limits, said) in [
            (
                "[limits]\nmemory_mb = 64\nprocesses = 5000000\n",
                "bot.toml:4: `limits.processes`: must be between 1 and 100000, got 5000000",
            ),
            (
                "[limits]\nmemory_mb = 9223372036854775807\n",
                "bot.toml:3: `limits.memory_mb`: must be between 1 and 1048576, got 9223372036854775807",
            ),
            (
                "limits = { cpus = 1000000 }\n",
                "bot.toml:2: `limits.cpus`: must be between 1 and 1024, got 1000000",
            ),
        ] {
            let toml = format!("command = [\"true\"]\n{limits}");
            std::fs::write(dir.path().join("bot.toml"), toml).unwrap();
            let e = Manifest::load(dir.path()).unwrap_err().to_string();
            assert!(e.ends_with(said), "{e}");
        }
        let toml = "command = [\"true\"]\n[limits]\nprocesses = 100000\ncpus = 1024\n";
        std::fs::write(dir.path().join("bot.toml"), toml).unwrap();
        assert_eq!(Manifest::load(dir.path()).unwrap().limits.cpus, Some(1024));
    }

    #[test]
    fn expands_placeholders() {
        let v = expand(&[
            "{bin_dir}/x".to_string(),
            "--profile={cargo_profile}".into(),
        ]);
        assert!(v[0].ends_with("/x") && !v[0].contains("{bin_dir}"));
        assert!(v[1] == "--profile=dev" || v[1] == "--profile=release");
    }

    /// A program's file is hashed whole (its SHA-256, as before); a file
    /// over 64 MiB named in the command (a sparse 20 GB one here) by its
    /// size, time and head, at once, and a change of any of them is seen.
    #[test]
    fn a_huge_file_in_the_command_is_hashed_by_size_time_and_head() {
        use sha2::Digest;
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("hb.py"), "print(1)\n").unwrap();
        let data = std::fs::File::create(dir.path().join("data")).unwrap();
        data.set_len(20 << 30).unwrap();
        let argv: Vec<String> = ["/bin/sh", "hb.py", "data"].map(String::from).into();
        let hashes = |seen: &mut _| program_hashes(&argv, Some(dir.path()), seen);
        let t0 = std::time::Instant::now();
        let before = hashes(&mut Default::default());
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(5),
            "{:?}",
            t0.elapsed()
        );
        let small = &before[&dir.path().join("hb.py").display().to_string()];
        let sha: String = sha2::Sha256::digest(b"print(1)\n")
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(small, &sha);
        let key = dir.path().join("data").display().to_string();
        assert!(before[&key].starts_with("size+mtime+head:"), "{before:?}");
        // Its head changed, its size and time put back: still seen.
        let mtime = data.metadata().unwrap().modified().unwrap();
        std::os::unix::fs::FileExt::write_at(&data, b"x", 10).unwrap();
        data.set_modified(mtime).unwrap();
        let head = hashes(&mut Default::default());
        assert_ne!(before[&key], head[&key]);
        // Its size changed.
        data.set_len(21 << 30).unwrap();
        let size = hashes(&mut Default::default());
        assert_ne!(head[&key], size[&key]);
    }
}
