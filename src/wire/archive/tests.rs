//! Tests of the bot folder archive: hostile archives built by hand with the
//! tar crate, each refused with the entry named, nothing written outside
//! the folder and the folder gone; packing and the manifest check.

use super::*;
use std::cell::Cell;
use std::rc::Rc;

type Tar = tar::Builder<GzEncoder<Vec<u8>>>;

/// A tar.gz made by `fill`.
fn targz(fill: impl FnOnce(&mut Tar)) -> Vec<u8> {
    let mut b = tar::Builder::new(GzEncoder::new(Vec::new(), flate2::Compression::fast()));
    fill(&mut b);
    b.into_inner().unwrap().finish().unwrap()
}

/// Appends an entry with its name (and link name) written raw into the old
/// header's fields, past the crate's checks.
fn raw(b: &mut Tar, name: &[u8], kind: tar::EntryType, link: &[u8], data: &[u8]) {
    let mut h = tar::Header::new_gnu();
    h.as_old_mut().name[..name.len()].copy_from_slice(name);
    h.as_old_mut().linkname[..link.len()].copy_from_slice(link);
    h.set_entry_type(kind);
    h.set_mode(0o644);
    h.set_size(data.len() as u64);
    h.set_cksum();
    b.append(&h, data).unwrap();
}

/// Appends a regular file through the crate's own setters.
fn file(b: &mut Tar, path: &str, data: &[u8], mode: u32) {
    let mut h = tar::Header::new_gnu();
    h.set_mode(mode);
    h.set_size(data.len() as u64);
    b.append_data(&mut h, path, data).unwrap();
}

/// Unpacks `gz` into a fresh `bot` folder of a new temporary folder and
/// returns the error; checks that the folder is gone and nothing else was
/// written beside it.
fn refused(gz: &[u8], limits: &Limits) -> ArchiveError {
    let root = tempfile::tempdir().unwrap();
    let dest = root.path().join("bot");
    let e = unpack(gz, &dest, limits).unwrap_err();
    assert!(!dest.exists(), "{e}: the folder is left behind");
    let left: Vec<_> = fs::read_dir(root.path()).unwrap().collect();
    assert!(left.is_empty(), "{e}: written beside the folder: {left:?}");
    e
}

/// [`unpack_into`] (which leaves what it wrote) into a fresh folder: the
/// error, the bytes of the files written and the number of entries.
fn partial(gz: &[u8], limits: &Limits) -> (ArchiveError, u64, usize) {
    let root = tempfile::tempdir().unwrap();
    let dest = root.path().join("bot");
    fs::create_dir(&dest).unwrap();
    let e = unpack_into(gz, &dest, limits).unwrap_err();
    let (mut bytes, mut count) = (0, 0);
    let mut stack = vec![dest];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let m = fs::symlink_metadata(e.path()).unwrap();
            count += 1;
            bytes += if m.is_file() { m.len() } else { 0 };
            if m.is_dir() {
                stack.push(e.path());
            }
        }
    }
    (e, bytes, count)
}

/// A reader that counts what it gave.
struct Counting<R> {
    inner: R,
    read: Rc<Cell<usize>>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.set(self.read.get() + n);
        Ok(n)
    }
}

fn repo_bots() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("bots")
}

/// Every file under `dir` by relative path, with its bytes and mode.
fn tree(dir: &Path) -> Vec<(String, Vec<u8>, u32)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(dir).unwrap().to_string_lossy().to_string();
            let m = fs::symlink_metadata(&p).unwrap();
            if m.is_dir() {
                if !SKIPPED.iter().any(|s| p.ends_with(s)) {
                    stack.push(p);
                }
            } else {
                let mode = m.permissions().mode() & 0o7777;
                out.push((rel, fs::read(&p).unwrap(), mode));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_packed_bot_unpacks_to_the_same_files() {
    let limits = Limits::default();
    let folder = repo_bots().join("random-python");
    let gz = pack(&folder, &limits).unwrap();
    assert_eq!(gz, pack(&folder, &limits).unwrap(), "not reproducible");
    let root = tempfile::tempdir().unwrap();
    let dest = root.path().join("bot");
    let got = unpack(gz.as_slice(), &dest, &limits).unwrap();
    let want: Vec<_> = tree(&folder).into_iter().map(|(p, b, _)| (p, b)).collect();
    let have: Vec<_> = tree(&dest).into_iter().map(|(p, b, _)| (p, b)).collect();
    assert_eq!(have, want);
    assert_eq!(got.files, want.len());
    assert_eq!(
        got.bytes,
        want.iter().map(|(_, b)| b.len() as u64).sum::<u64>()
    );
    check_manifest(&dest).unwrap();

    // A copy with an executable, a sub-folder, a link inside and what pack
    // leaves out; the execute bit is kept, nothing else of the mode.
    let copy = root.path().join("copy");
    fs::create_dir(&copy).unwrap();
    for (rel, bytes, _) in tree(&folder) {
        fs::write(copy.join(rel), bytes).unwrap();
    }
    fs::set_permissions(copy.join("bot.py"), fs::Permissions::from_mode(0o4775)).unwrap();
    fs::set_permissions(copy.join("bot.toml"), fs::Permissions::from_mode(0o600)).unwrap();
    fs::create_dir_all(copy.join("lib/deep")).unwrap();
    fs::write(copy.join("lib/deep/data.txt"), "x").unwrap();
    std::os::unix::fs::symlink("../../bot.py", copy.join("lib/deep/bot.py")).unwrap();
    for skipped in SKIPPED {
        fs::create_dir_all(copy.join("lib").join(skipped)).unwrap();
        fs::write(copy.join("lib").join(skipped).join("junk"), "j").unwrap();
    }
    let dest = root.path().join("copy-unpacked");
    let got = unpack(pack(&copy, &limits).unwrap().as_slice(), &dest, &limits).unwrap();
    assert_eq!(got.files, 3);
    let modes: Vec<_> = tree(&dest).into_iter().map(|(p, _, m)| (p, m)).collect();
    assert_eq!(
        modes,
        [
            ("bot.py".to_string(), 0o755),
            ("bot.toml".into(), 0o644),
            ("lib/deep/bot.py".into(), 0o777),
            ("lib/deep/data.txt".into(), 0o644),
        ]
    );
    let link = fs::read_link(dest.join("lib/deep/bot.py")).unwrap();
    assert_eq!(link, Path::new("../../bot.py"));
    let dir_mode = fs::metadata(dest.join("lib")).unwrap().permissions().mode();
    assert_eq!(dir_mode & 0o7777, 0o755);
}

/// The results of the author's own games at the folder's top are left
/// out; a `results` folder of anything else, or deeper down, is the bot's.
#[test]
fn the_authors_own_results_are_left_out() {
    let limits = Limits::default();
    let root = tempfile::tempdir().unwrap();
    let bot = root.path().join("bot");
    fs::create_dir_all(bot.join("results/match-1")).unwrap();
    fs::write(bot.join("bot.toml"), "name = \"b\"\ncommand = [\"./b\"]\n").unwrap();
    fs::write(bot.join("results/match-1/games.csv"), "game_id\n").unwrap();
    fs::create_dir_all(bot.join("data/results")).unwrap();
    fs::write(bot.join("data/results/games.csv"), "x").unwrap();
    assert_eq!(local_results(&bot), Some(bot.join("results")));
    let dest = root.path().join("unpacked");
    unpack(pack(&bot, &limits).unwrap().as_slice(), &dest, &limits).unwrap();
    let paths: Vec<_> = tree(&dest).into_iter().map(|(p, _, _)| p).collect();
    assert_eq!(paths, ["bot.toml", "data/results/games.csv"]);

    // A `results` folder that holds no games is the bot's own data.
    fs::remove_dir_all(bot.join("results/match-1")).unwrap();
    fs::write(bot.join("results/book.txt"), "e4").unwrap();
    assert_eq!(local_results(&bot), None);
    let dest = root.path().join("unpacked-2");
    unpack(pack(&bot, &limits).unwrap().as_slice(), &dest, &limits).unwrap();
    let paths: Vec<_> = tree(&dest).into_iter().map(|(p, _, _)| p).collect();
    assert_eq!(
        paths,
        ["bot.toml", "data/results/games.csv", "results/book.txt"]
    );
}

#[test]
fn a_gzip_bomb_stops_at_the_limit() {
    const BIG: u64 = 200_000_000;
    let gz = targz(|b| {
        let mut h = tar::Header::new_gnu();
        h.set_mode(0o644);
        h.set_size(BIG);
        b.append_data(&mut h, "zeros.bin", io::repeat(0).take(BIG))
            .unwrap();
    });
    assert!(gz.len() < 1_000_000, "{}", gz.len());
    let limits = Limits {
        unpacked_bytes: 10 * MIB,
        ..Limits::default()
    };
    let read = Rc::new(Cell::new(0));
    let root = tempfile::tempdir().unwrap();
    let dest = root.path().join("bot");
    let reader = Counting {
        inner: gz.as_slice(),
        read: read.clone(),
    };
    let e = unpack(reader, &dest, &limits).unwrap_err();
    assert!(matches!(e, ArchiveError::UnpackedTooLarge { .. }), "{e}");
    assert!(e.too_large() && e.http_status() == 413);
    assert!(e.to_string().contains("more than 10 MiB"), "{e}");
    assert!(!dest.exists());
    assert!(
        read.get() < gz.len() / 4,
        "read {} of {}",
        read.get(),
        gz.len()
    );

    // Many files, each under the limit: the running total stops them, with
    // at most the limit written.
    let gz = targz(|b| {
        for i in 0..30 {
            file(b, &format!("f{i}"), &vec![0; MIB as usize], 0o644);
        }
    });
    let (e, bytes, _) = partial(&gz, &limits);
    assert!(matches!(e, ArchiveError::UnpackedTooLarge { .. }), "{e}");
    assert!(bytes <= limits.unpacked_bytes, "{bytes} written");
    assert!(bytes >= 9 * MIB, "{bytes} written");
    refused(&gz, &limits);
}

#[test]
fn too_many_files_are_refused() {
    let gz = targz(|b| {
        for i in 0..5000 {
            file(b, &format!("f{i}"), b"x", 0o644);
        }
    });
    let limits = Limits::default();
    let e = refused(&gz, &limits);
    assert!(
        matches!(e, ArchiveError::TooManyFiles { limit: 2000 }),
        "{e}"
    );
    assert!(e.too_large() && e.to_string().contains("2000"), "{e}");
    let (_, _, count) = partial(&gz, &limits);
    assert!(count <= 2000, "{count} written");
}

#[test]
fn a_large_upload_is_refused_while_read() {
    // Incompressible bytes.
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let noise: Vec<u8> = (0..100_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    let gz = targz(|b| file(b, "noise.bin", &noise, 0o644));
    let limits = Limits {
        compressed_bytes: 20_000,
        ..Limits::default()
    };
    let e = refused(&gz, &limits);
    assert!(matches!(e, ArchiveError::CompressedTooLarge { .. }), "{e}");
    assert!(e.to_string().contains("19.5 KiB"), "{e}");
    assert_eq!(e.http_status(), 413);
    let (_, bytes, _) = partial(&gz, &limits);
    assert!(bytes < noise.len() as u64, "{bytes}");
}

#[test]
fn paths_out_of_the_folder_are_refused() {
    let limits = Limits::default();
    for (name, absolute) in [
        ("../escape", false),
        ("/abs/path", true),
        ("a/../../b", false),
        ("ok/./../../../../escape2", false),
    ] {
        let gz = targz(|b| {
            file(b, "bot.toml", b"command = [\"true\"]\n", 0o644);
            raw(b, name.as_bytes(), tar::EntryType::Regular, b"", b"pwned");
        });
        let e = refused(&gz, &limits);
        match absolute {
            true => assert!(matches!(e, ArchiveError::Absolute { .. }), "{e}"),
            false => assert!(matches!(e, ArchiveError::DotDot { .. }), "{e}"),
        }
        assert!(e.to_string().contains(&format!("entry `{name}`")), "{e}");
        assert_eq!(e.http_status(), 400);
    }
    assert!(!Path::new("/abs/path").exists());
}

#[test]
fn links_out_of_the_folder_are_refused() {
    let limits = Limits::default();
    let outside = tempfile::tempdir().unwrap();
    let out = outside.path().to_str().unwrap().as_bytes().to_vec();
    type Case = (Vec<(&'static str, tar::EntryType, Vec<u8>)>, &'static str);
    let sym = tar::EntryType::Symlink;
    let cases: Vec<Case> = vec![
        (vec![("etc", sym, b"/etc".to_vec())], "etc"),
        (vec![("x", sym, b"../../..".to_vec())], "x"),
        (vec![("a/x", sym, b"../..".to_vec())], "a/x"),
        (
            vec![("d", sym, b".".to_vec()), ("e", sym, b"d/d/..".to_vec())],
            "e",
        ),
        (
            vec![
                ("link", sym, out.clone()),
                ("link/planted", tar::EntryType::Regular, vec![]),
            ],
            "link",
        ),
        (
            vec![("passwd", tar::EntryType::Link, b"/etc/passwd".to_vec())],
            "passwd",
        ),
        (
            vec![("bot2", tar::EntryType::Link, b"bot.toml".to_vec())],
            "bot2",
        ),
    ];
    for (entries, named) in cases {
        let gz = targz(|b| {
            file(b, "bot.toml", b"command = [\"true\"]\n", 0o644);
            for (name, kind, link) in &entries {
                let data: &[u8] = if *kind == tar::EntryType::Regular {
                    b"pwned"
                } else {
                    b""
                };
                raw(b, name.as_bytes(), *kind, link, data);
            }
        });
        let e = refused(&gz, &limits);
        let hard = entries.iter().any(|(_, k, _)| *k == tar::EntryType::Link);
        match hard {
            true => assert!(matches!(e, ArchiveError::HardLink { .. }), "{e}"),
            false => assert!(matches!(e, ArchiveError::LinkOutside { .. }), "{e}"),
        }
        assert!(e.to_string().contains(&format!("entry `{named}`")), "{e}");
    }
    assert_eq!(fs::read_dir(outside.path()).unwrap().count(), 0);

    // A link inside is fine, but nothing is written through it.
    let gz = targz(|b| {
        raw(b, b"sub/", tar::EntryType::Directory, b"", b"");
        raw(b, b"inner", sym, b"sub", b"");
        raw(b, b"inner/file", tar::EntryType::Regular, b"", b"x");
    });
    let e = refused(&gz, &limits);
    assert!(matches!(e, ArchiveError::ThroughLink { .. }), "{e}");
    assert!(e.to_string().contains("entry `inner/file`"), "{e}");
    // Nor over it: a file entry at a link's path is not written through it.
    let gz = targz(|b| {
        raw(b, b"inner", sym, b"sub", b"");
        raw(b, b"inner", tar::EntryType::Regular, b"", b"x");
    });
    let e = refused(&gz, &limits);
    assert!(matches!(e, ArchiveError::Clash { .. }), "{e}");
    // Nor a file twice (an archive appended to): which copy is the bot's?
    let gz = targz(|b| {
        raw(
            b,
            b"bot.toml",
            tar::EntryType::Regular,
            b"",
            b"name = \"a\"\n",
        );
        raw(
            b,
            b"bot.toml",
            tar::EntryType::Regular,
            b"",
            b"name = \"b\"\n",
        );
    });
    let e = refused(&gz, &limits);
    assert!(
        e.to_string().contains("entry `bot.toml`: a second copy"),
        "{e}"
    );
}

#[test]
fn devices_and_pipes_are_refused() {
    let limits = Limits::default();
    for (name, kind) in [
        ("dev/null0", tar::EntryType::Char),
        ("dev/sda9", tar::EntryType::Block),
        ("pipe", tar::EntryType::Fifo),
        ("volume", tar::EntryType::new(b'V')),
    ] {
        let gz = targz(|b| raw(b, name.as_bytes(), kind, b"", b""));
        let e = refused(&gz, &limits);
        let ok = match kind {
            tar::EntryType::Char | tar::EntryType::Block => {
                matches!(e, ArchiveError::Device { .. })
            }
            tar::EntryType::Fifo => matches!(e, ArchiveError::Fifo { .. }),
            _ => matches!(e, ArchiveError::OtherType { .. }),
        };
        assert!(ok, "{name}: {e}");
        assert!(e.to_string().contains(&format!("entry `{name}`")), "{e}");
    }
}

#[test]
fn long_deep_and_odd_names_are_refused() {
    let limits = Limits::default();
    let long = "a".repeat(300);
    let gz = targz(|b| file(b, &long, b"x", 0o644));
    let e = refused(&gz, &limits);
    assert!(
        matches!(e, ArchiveError::PathTooLong { len: 300, .. }),
        "{e}"
    );
    assert!(e.to_string().contains(&long), "{e}");

    let deep = format!("{}f", "d/".repeat(39));
    let gz = targz(|b| file(b, &deep, b"x", 0o644));
    let e = refused(&gz, &limits);
    assert!(
        matches!(e, ArchiveError::PathTooDeep { depth: 40, .. }),
        "{e}"
    );
    assert!(e.to_string().contains(&deep), "{e}");

    let gz = targz(|b| raw(b, b"caf\xe9.txt", tar::EntryType::Regular, b"", b"x"));
    let e = refused(&gz, &limits);
    assert!(matches!(e, ArchiveError::BadName { .. }), "{e}");
    assert!(e.to_string().contains("caf\u{fffd}.txt"), "{e}");

    // A NUL can only come through a pax name; it is named escaped.
    let gz = targz(|b| {
        b.append_pax_extensions([("path", &b"nul\0name"[..])])
            .unwrap();
        raw(b, b"placeholder", tar::EntryType::Regular, b"", b"x");
    });
    let e = refused(&gz, &limits);
    assert!(matches!(e, ArchiveError::BadName { .. }), "{e}");
    assert!(e.to_string().contains("nul\\0name"), "{e}");
}

/// Names with a control or invisible character (a new line, an escape,
/// a direction override) are refused, named escaped; so are two paths
/// that differ only in case, in an archive and in a folder to pack.
#[test]
fn hidden_characters_and_case_twins_are_refused() {
    let limits = Limits::default();
    for (name, code, shown) in [
        ("a\nb.txt", "U+000A", "a\\nb.txt"),
        ("a\u{1b}[31mb", "U+001B", "a\\u{1b}[31mb"),
        ("evil\u{202e}txt.exe", "U+202E", "evil\\u{202e}txt.exe"),
        ("x\u{2066}y", "U+2066", "x\\u{2066}y"),
    ] {
        let gz = targz(|b| raw(b, name.as_bytes(), tar::EntryType::Regular, b"", b"x"));
        let e = refused(&gz, &limits);
        assert!(matches!(e, ArchiveError::HiddenCharacter { .. }), "{e}");
        let text = e.to_string();
        assert!(
            text.contains(&format!("entry `{shown}`: a name holding {code}")),
            "{text}"
        );
        assert!(!text.contains(name), "{text}");
    }
    for (first, second) in [("README", "readme"), ("Src/a.py", "src/b.py")] {
        let gz = targz(|b| {
            file(b, first, b"x", 0o644);
            file(b, second, b"y", 0o644);
        });
        let e = refused(&gz, &limits);
        assert!(matches!(e, ArchiveError::CaseTwin { .. }), "{e}");
        let (twin, of) = match first.split_once('/') {
            Some((d, _)) => (second.split_once('/').unwrap().0, d),
            None => (second, first),
        };
        assert!(
            e.to_string().contains(&format!(
                "entry `{twin}`: its name differs from `{of}` only in case"
            )),
            "{e}"
        );
    }
    // A folder named twice, the same: not a twin.
    let gz = targz(|b| {
        file(b, "bot.toml", b"command = [\"true\"]\n", 0o644);
        file(b, "src/a", b"x", 0o644);
        file(b, "src/b", b"x", 0o644);
    });
    let root = tempfile::tempdir().unwrap();
    unpack(gz.as_slice(), &root.path().join("bot"), &limits).unwrap();

    let folder = root.path().join("twins");
    fs::create_dir(&folder).unwrap();
    fs::write(folder.join("bot.toml"), "command = [\"true\"]\n").unwrap();
    fs::write(folder.join("README"), "a").unwrap();
    fs::write(folder.join("readme"), "b").unwrap();
    let e = pack(&folder, &limits).unwrap_err();
    assert!(matches!(e, ArchiveError::CaseTwin { .. }), "{e}");
}

/// What follows the tar's end: its zeros are padding; anything else (a
/// second archive, garbage), or anything after the gzip stream, is
/// refused.
#[test]
fn data_after_the_end_of_the_archive_is_refused() {
    let limits = Limits::default();
    let tar_of = |name: &str| {
        let mut b = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_gnu();
        h.set_mode(0o644);
        h.set_size(1);
        b.append_data(&mut h, name, &b"x"[..]).unwrap();
        b.into_inner().unwrap()
    };
    let gzip = |bytes: &[u8]| {
        let mut enc = GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(bytes).unwrap();
        enc.finish().unwrap()
    };
    let root = tempfile::tempdir().unwrap();
    // Padding to a 10 KiB record, as GNU tar writes: accepted.
    let mut padded = tar_of("a");
    padded.resize(10240, 0);
    unpack(gzip(&padded).as_slice(), &root.path().join("ok"), &limits).unwrap();
    // A second archive after the first, or garbage: refused.
    for tail in [tar_of("b"), b"garbage".to_vec()] {
        let mut two = tar_of("a");
        two.extend_from_slice(&tail);
        let e = refused(&gzip(&two), &limits);
        assert!(
            e.to_string()
                .contains("data after the end of the tar archive"),
            "{e}"
        );
    }
    // Bytes after the gzip stream: refused.
    for tail in [gzip(&tar_of("b")), b"garbage".to_vec()] {
        let mut gz = gzip(&tar_of("a"));
        gz.extend_from_slice(&tail);
        let e = refused(&gz, &limits);
        assert!(
            e.to_string()
                .contains("data after the end of the gzip stream"),
            "{e}"
        );
    }
}

#[test]
fn what_is_not_a_tar_gz_is_refused() {
    let limits = Limits::default();
    let e = refused(b"name = \"bot\"\ncommand = [\"true\"]\n", &limits);
    assert!(matches!(e, ArchiveError::NotGzip { .. }), "{e}");
    assert!(e.to_string().contains("not a gzip-compressed tar"), "{e}");
    let e = refused(b"", &limits);
    assert!(matches!(e, ArchiveError::NotGzip { .. }), "{e}");

    let gz = pack(&repo_bots().join("random-python"), &limits).unwrap();
    let e = refused(&gz[..gz.len() / 2], &limits);
    assert!(matches!(e, ArchiveError::Corrupt { .. }), "{e}");
    let e = refused(&gz[..gz.len() - 4], &limits);
    assert!(matches!(e, ArchiveError::Corrupt { .. }), "{e}");
    // Gzip of something that is not tar.
    let mut enc = GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(&[b'x'; 1000]).unwrap();
    let e = refused(&enc.finish().unwrap(), &limits);
    assert!(matches!(e, ArchiveError::Corrupt { .. }), "{e}");
}

#[test]
fn an_existing_folder_is_not_unpacked_into() {
    let root = tempfile::tempdir().unwrap();
    fs::write(root.path().join("keep"), "k").unwrap();
    let gz = targz(|b| file(b, "x", b"x", 0o644));
    let e = unpack(gz.as_slice(), root.path(), &Limits::default()).unwrap_err();
    assert!(matches!(e, ArchiveError::DestExists { .. }), "{e}");
    assert_eq!(e.http_status(), 500);
    assert!(root.path().join("keep").exists());
}

#[test]
fn pack_refuses_what_unpack_would() {
    let limits = Limits::default();
    let root = tempfile::tempdir().unwrap();
    let folder = root.path().join("mybot");
    fs::create_dir(&folder).unwrap();
    fs::write(folder.join("bot.py"), "print()").unwrap();
    let e = pack(&folder, &limits).unwrap_err();
    assert!(matches!(e, ArchiveError::NoManifest { .. }), "{e}");
    assert!(e.to_string().contains("mybot"), "{e}");

    fs::write(
        folder.join("bot.toml"),
        "command = [\"python3\", \"bot.py\"]\n",
    )
    .unwrap();
    fs::write(folder.join("weights.bin"), vec![7u8; 2 * MIB as usize]).unwrap();
    fs::write(folder.join("small.bin"), vec![7u8; 1000]).unwrap();
    let small = Limits {
        unpacked_bytes: MIB,
        ..Limits::default()
    };
    let e = pack(&folder, &small).unwrap_err();
    assert!(matches!(e, ArchiveError::FolderTooLarge { .. }), "{e}");
    let text = e.to_string();
    assert!(
        text.contains("limit of 1 MiB") && text.contains("2 MiB"),
        "{e}"
    );
    assert!(text.contains("weights.bin (2 MiB)"), "{e}");
    assert!(e.too_large());

    // Compressible, so under the unpacked limit but over the upload's.
    let tiny = Limits {
        compressed_bytes: 100,
        ..Limits::default()
    };
    let e = pack(&folder, &tiny).unwrap_err();
    assert!(matches!(e, ArchiveError::PackedTooLarge { .. }), "{e}");
    assert!(e.to_string().contains("limit of 100 bytes"), "{e}");
    // Its largest files named, with their sizes, so the author knows
    // what to leave out.
    assert!(
        e.to_string()
            .contains("its largest files: weights.bin (2 MiB), small.bin (1000 bytes)"),
        "{e}"
    );

    let few = Limits {
        files: 2,
        ..Limits::default()
    };
    let e = pack(&folder, &few).unwrap_err();
    assert!(matches!(e, ArchiveError::FolderTooManyFiles { .. }), "{e}");

    std::os::unix::fs::symlink("/etc", folder.join("etc")).unwrap();
    let e = pack(&folder, &limits).unwrap_err();
    assert!(matches!(e, ArchiveError::LinkOutside { .. }), "{e}");
    assert!(e.to_string().contains("entry `etc`"), "{e}");
}

#[test]
fn manifests_naming_files_outside_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let write = |toml: &str| fs::write(dir.path().join("bot.toml"), toml).unwrap();
    for (toml, key, value) in [
        ("command = [\"/etc/passwd\"]", "command", "/etc/passwd"),
        (
            "command = [\"python3\", \"../../x.py\"]",
            "command",
            "../../x.py",
        ),
        (
            "command = \"python3 lib/../../x.py\"",
            "command",
            "lib/../../x.py",
        ),
        (
            "command = [\"python3\", \"--file=/etc/shadow\"]",
            "command",
            "--file=/etc/shadow",
        ),
        (
            "command = [\"./bot\"]\nbuild = [\"make\", \"-C\", \"/etc\"]",
            "build",
            "/etc",
        ),
        (
            "command = [\"{bin_dir}/../x\"]",
            "command",
            "{bin_dir}/../x",
        ),
    ] {
        write(toml);
        let e = check_manifest(dir.path()).unwrap_err();
        assert!(matches!(e, ArchiveError::ManifestPath { .. }), "{e}");
        let text = e.to_string();
        assert!(
            text.contains(&format!("`{key}`")) && text.contains(&format!("`{value}`")),
            "{e}"
        );
    }
    for toml in [
        "command = [\"python3\", \"bot.py\"]",
        "command = [\"python3\", \"-u\", \"bot.py\"]",
        "command = [\"./bot\", \"--depth=3\"]\nbuild = [\"cc\", \"-o\", \"bot\", \"src/bot.c\"]",
        "command = [\"{bin_dir}/search-bot\", \"--millis\", \"50\"]",
    ] {
        write(toml);
        check_manifest(dir.path()).unwrap();
    }
    write("command = []");
    let e = check_manifest(dir.path()).unwrap_err();
    assert!(matches!(e, ArchiveError::Manifest { .. }), "{e}");
    fs::remove_file(dir.path().join("bot.toml")).unwrap();
    let e = check_manifest(dir.path()).unwrap_err();
    assert!(e.to_string().contains("bot.toml: not found"), "{e}");
}

#[test]
fn the_shipped_bots_pass_the_manifest_check() {
    let (found, bad) = crate::bot::manifest::discover_all(&repo_bots()).unwrap();
    assert!(bad.is_empty());
    assert!(found.len() >= 10, "{} bots", found.len());
    for m in found {
        check_manifest(&m.dir).unwrap_or_else(|e| panic!("{}: {e}", m.dir.display()));
    }
}

#[test]
fn long_names_from_gnu_and_pax_headers_are_applied_and_their_size_bounded() {
    // A 150-byte path: the crate writes a GNU long-name entry for it; a
    // pax `path` and `linkpath` give another file's and a link's.
    let long = format!("{}/bot.py", "d".repeat(140));
    let gz = targz(|b| {
        file(b, "bot.toml", b"name = \"x\"\n", 0o644);
        file(b, &long, b"print(1)\n", 0o644);
        b.append_pax_extensions([("path", b"pax-named.txt".as_slice())])
            .unwrap();
        file(b, "short.txt", b"pax\n", 0o644);
        b.append_pax_extensions([("linkpath", b"pax-named.txt".as_slice())])
            .unwrap();
        raw(b, b"link", tar::EntryType::Symlink, b"bot.toml", b"");
    });
    let root = tempfile::tempdir().unwrap();
    let dest = root.path().join("bot");
    unpack(gz.as_slice(), &dest, &Limits::default()).unwrap();
    assert_eq!(fs::read(dest.join(&long)).unwrap(), b"print(1)\n");
    assert_eq!(fs::read(dest.join("pax-named.txt")).unwrap(), b"pax\n");
    assert!(!dest.join("short.txt").exists());
    let link = fs::read_link(dest.join("link")).unwrap();
    assert_eq!(link, Path::new("pax-named.txt"));
    // A pax header over the bound is refused by its declared size.
    let big = vec![b'a'; 70 * 1024];
    let gz = targz(|b| {
        b.append_pax_extensions([("comment", big.as_slice())])
            .unwrap();
        file(b, "bot.toml", b"name = \"x\"\n", 0o644);
    });
    let e = refused(&gz, &Limits::default());
    assert!(
        matches!(e, ArchiveError::HeaderTooLarge { index: 1, .. }),
        "{e}"
    );
    assert!(e.to_string().contains("pax extended header"), "{e}");
    // A header that describes nothing: damaged.
    let gz = targz(|b| {
        file(b, "bot.toml", b"name = \"x\"\n", 0o644);
        b.append_pax_extensions([("path", b"a".as_slice())])
            .unwrap();
    });
    let e = refused(&gz, &Limits::default());
    assert!(e.to_string().contains("describe no entry"), "{e}");
}
