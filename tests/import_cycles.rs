//! No circle of imports between the files of src/ (issue 29): every `use`
//! of `crate::`, `super::`, `self::` or a child module is an arrow from its
//! file to the file that defines the module it names, and the arrows must
//! not go round. A module's `pub use` of its own descendants (its door to
//! the floors below) is not an arrow; neither is `mod x;`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every .rs file under src/, by module path (`["league", "config"]`).
fn modules(src: &Path) -> BTreeMap<Vec<String>, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("src/ is readable") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(src).expect("under src/");
            let mut parts: Vec<String> = rel
                .iter()
                .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
                .collect();
            if parts.first().is_some_and(|p| p == "bin") {
                continue;
            }
            if matches!(
                parts.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                parts.pop();
            }
            out.insert(parts, path);
        }
    }
    out
}

/// The `use` declarations of a file, whole (joined across lines), each with
/// the inline modules (`mod tests { ... }`) it stands in and whether it is a
/// `pub use`.
fn uses(text: &str) -> Vec<(String, Vec<String>, bool)> {
    let mut out = Vec::new();
    let mut inline: Vec<(usize, String)> = Vec::new();
    let mut pending: Option<(String, Vec<String>, bool)> = None;
    for line in text.lines() {
        let indent = line.len() - line.trim_start().len();
        let t = line.trim();
        if let Some((text, mods, public)) = pending.as_mut() {
            text.push_str(t);
            if t.ends_with(';') {
                out.push((text.clone(), mods.clone(), *public));
                pending = None;
            }
            continue;
        }
        if t == "}" && inline.last().is_some_and(|(i, _)| *i == indent) {
            inline.pop();
            continue;
        }
        let bare = t
            .strip_prefix("pub(crate) ")
            .or_else(|| t.strip_prefix("pub(super) "))
            .or_else(|| t.strip_prefix("pub "));
        let public = bare.is_some();
        let bare = bare.unwrap_or(t);
        if let Some(rest) = bare.strip_prefix("mod ") {
            if let Some(name) = rest.strip_suffix(" {") {
                inline.push((indent, name.trim().to_string()));
            }
            continue;
        }
        if let Some(rest) = bare.strip_prefix("use ") {
            let mods: Vec<String> = inline.iter().map(|(_, m)| m.clone()).collect();
            if rest.ends_with(';') {
                out.push((rest.to_string(), mods, public));
            } else {
                pending = Some((rest.to_string(), mods, public));
            }
        }
    }
    out
}

/// The paths a use tree names: `a::{b, c::d}` is `a::b` and `a::c::d`.
fn expand(tree: &str) -> Vec<Vec<String>> {
    let tree: String = tree
        .trim_end_matches(';')
        .replace(" as ", "@")
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let Some(open) = tree.find('{') else {
        let path = tree.split('@').next().unwrap_or(&tree);
        return vec![path.split("::").map(String::from).collect()];
    };
    let prefix: Vec<String> = tree[..open]
        .trim_end_matches("::")
        .split("::")
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect();
    let inner = &tree[open + 1..tree.len() - 1];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    let mut out = Vec::new();
    for part in parts.into_iter().filter(|p| !p.is_empty()) {
        for sub in expand(part) {
            let mut path = prefix.clone();
            path.extend(sub.into_iter().filter(|s| s != "self"));
            out.push(path);
        }
    }
    out
}

/// The module a use path names, absolute, or `None` for another crate.
fn absolute(
    module: &[String],
    path: &[String],
    files: &BTreeMap<Vec<String>, PathBuf>,
) -> Option<Vec<String>> {
    let mut at: Vec<String> = module.to_vec();
    let mut rest = path;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            at.clear();
            rest = &rest[1..];
        }
        Some("super" | "self") => {
            while let Some(first) = rest.first() {
                match first.as_str() {
                    "super" => {
                        at.pop();
                    }
                    "self" => {}
                    _ => break,
                }
                rest = &rest[1..];
            }
        }
        Some(first) => {
            let mut child = at.clone();
            child.push(first.to_string());
            if !files.keys().any(|k| k.starts_with(&child)) {
                return None;
            }
        }
        None => return None,
    }
    at.extend(rest.iter().cloned());
    Some(at)
}

/// The file that defines the longest prefix of `path`.
fn file_of<'a>(path: &[String], files: &'a BTreeMap<Vec<String>, PathBuf>) -> Option<&'a PathBuf> {
    (0..=path.len()).rev().find_map(|n| files.get(&path[..n]))
}

#[test]
fn the_files_of_src_import_no_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = modules(&src);
    let mut arrows: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    for (module, file) in &files {
        let text = std::fs::read_to_string(file).expect("a source file");
        for (tree, inline, public) in uses(&text) {
            let mut here = module.clone();
            here.extend(inline);
            for path in expand(&tree) {
                let Some(target) = absolute(&here, &path, &files) else {
                    continue;
                };
                // A re-export of a descendant is the module's door.
                if public && target.len() > module.len() && target.starts_with(module) {
                    continue;
                }
                if let Some(to) = file_of(&target, &files) {
                    if to != file {
                        arrows.entry(file.clone()).or_default().insert(to.clone());
                    }
                }
            }
        }
    }
    // Depth-first search for a back edge.
    let mut state: BTreeMap<&PathBuf, u8> = BTreeMap::new();
    let mut circles = Vec::new();
    fn visit<'a>(
        at: &'a PathBuf,
        arrows: &'a BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        state: &mut BTreeMap<&'a PathBuf, u8>,
        trail: &mut Vec<&'a PathBuf>,
        circles: &mut Vec<String>,
    ) {
        state.insert(at, 1);
        trail.push(at);
        for next in arrows.get(at).into_iter().flatten() {
            match state.get(next) {
                Some(1) => {
                    let from = trail.iter().position(|p| *p == next).unwrap_or(0);
                    let names: Vec<String> = trail[from..]
                        .iter()
                        .chain([&next])
                        .map(|p| p.display().to_string())
                        .collect();
                    circles.push(names.join(" -> "));
                }
                Some(_) => {}
                None => visit(next, arrows, state, trail, circles),
            }
        }
        trail.pop();
        state.insert(at, 2);
    }
    for file in files.values() {
        if !state.contains_key(file) {
            visit(file, &arrows, &mut state, &mut Vec::new(), &mut circles);
        }
    }
    assert!(
        circles.is_empty(),
        "import circles:\n{}",
        circles.join("\n")
    );
}
