//! The module maps (issue 46): the doc comment of `src/serve/mod.rs` and
//! of `src/bot/sandbox/mod.rs` names every file and folder below it, so
//! that a reader who starts there finds every room, and a file added
//! without a word in the map fails here.

use std::path::{Path, PathBuf};

/// The `//!` lines of `file`, joined.
fn module_doc(file: &Path) -> String {
    std::fs::read_to_string(file)
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every `.rs` file and folder under `dir`, as paths relative to it.
fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("a readable folder") {
            let p = e.expect("an entry").path();
            let rel = p.strip_prefix(dir).expect("below dir").to_path_buf();
            if p.is_dir() {
                stack.push(p);
                out.push(rel);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(rel);
            }
        }
    }
    out.sort();
    out
}

/// What the map must name for `entry`: `name.rs` for a file, `name/` for
/// a folder; a folder's own `mod.rs` is named by its folder.
fn named_as(dir: &Path, entry: &Path) -> Option<String> {
    let name = entry.file_name()?.to_str()?;
    if dir.join(entry).is_dir() {
        return Some(format!("`{name}/`"));
    }
    match (name, entry.parent()) {
        ("mod.rs", Some(p)) if p.as_os_str().is_empty() => None,
        ("mod.rs", _) => Some("`mod.rs`".to_string()),
        _ => Some(format!("`{name}`")),
    }
}

#[test]
fn each_module_map_names_every_file_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut missing = Vec::new();
    for folder in ["serve", "bot/sandbox"] {
        let dir = src.join(folder);
        let doc = module_doc(&dir.join("mod.rs"));
        for e in entries(&dir) {
            if let Some(want) = named_as(&dir, &e) {
                if !doc.contains(&want) {
                    missing.push(format!(
                        "src/{folder}/{}: no {want} in src/{folder}/mod.rs's map",
                        e.display()
                    ));
                }
            }
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
fn the_check_sees_a_file_left_out() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("wing")).unwrap();
    std::fs::write(tmp.path().join("mod.rs"), "//! `wing/`: `a.rs`.\n").unwrap();
    std::fs::write(tmp.path().join("wing/a.rs"), "").unwrap();
    std::fs::write(tmp.path().join("wing/b.rs"), "").unwrap();
    let doc = module_doc(&tmp.path().join("mod.rs"));
    let left_out: Vec<String> = entries(tmp.path())
        .iter()
        .filter_map(|e| named_as(tmp.path(), e))
        .filter(|w| !doc.contains(w))
        .collect();
    assert_eq!(left_out, vec!["`b.rs`".to_string()]);
}
