//! No circle of imports between the files of src/ (issues 29 and 46): every
//! path to another module of the crate is an arrow from its file to the file
//! that defines the module it names, and the arrows must not go round. A path
//! counts wherever it is written: in a `use` declaration, and inline in an
//! expression, a type or a pattern (`super::leases::ticket(..)`,
//! `crate::league::build::build_bots(..)`), when it starts at `crate::`,
//! `super::`, `self::` or a child module. A module's `pub use` of its own
//! descendants (its door to the floors below) is not an arrow; neither is
//! `mod x;`. Comments and string literals are not read.
//!
//! Inside the ladder service (`src/serve/`), the wings (its folders: the
//! store, the schedule, the intake, the shared handles) sit below the core
//! (the files of `serve/` itself: `mod.rs`, `ladder.rs`, ...) and the web
//! layer (`serve/web/`): no file of a wing has an arrow to either.

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

/// A line's item without its visibility, and whether it had one (`pub`,
/// `pub(crate)`, `pub(super)`).
fn unpub(t: &str) -> (&str, bool) {
    let bare = t
        .strip_prefix("pub(crate) ")
        .or_else(|| t.strip_prefix("pub(super) "))
        .or_else(|| t.strip_prefix("pub "));
    (bare.unwrap_or(t), bare.is_some())
}

/// The name of the inline module a line opens (`mod tests {`), if it does.
fn opens_mod(bare: &str) -> Option<&str> {
    Some(bare.strip_prefix("mod ")?.strip_suffix(" {")?.trim())
}

/// The inline modules (`mod tests { ... }`) the lines of a formatted file
/// stand in, followed by indentation.
#[derive(Default)]
struct Inline(Vec<(usize, String)>);

impl Inline {
    /// Follows `line`: true when it is a `mod` line (it opens an inline
    /// module, or names a file's) or closes an inline module, and holds
    /// no path.
    fn follow(&mut self, line: &str) -> bool {
        let indent = line.len() - line.trim_start().len();
        let t = line.trim();
        if t == "}" && self.0.last().is_some_and(|(i, _)| *i == indent) {
            self.0.pop();
            return true;
        }
        let bare = unpub(t).0;
        if let Some(name) = opens_mod(bare) {
            self.0.push((indent, name.to_string()));
        }
        bare.starts_with("mod ")
    }

    /// The inline modules a line stands in, outermost first.
    fn names(&self) -> Vec<String> {
        self.0.iter().map(|(_, m)| m.clone()).collect()
    }
}

/// The `use` declarations of a file, whole (joined across lines), each with
/// the inline modules (`mod tests { ... }`) it stands in and whether it is a
/// `pub use`.
fn uses(text: &str) -> Vec<(String, Vec<String>, bool)> {
    let mut out = Vec::new();
    let mut inline = Inline::default();
    let mut pending: Option<(String, Vec<String>, bool)> = None;
    for line in text.lines() {
        let t = line.trim();
        if let Some((text, mods, public)) = pending.as_mut() {
            text.push_str(t);
            if t.ends_with(';') {
                out.push((text.clone(), mods.clone(), *public));
                pending = None;
            }
            continue;
        }
        if inline.follow(line) {
            continue;
        }
        let (bare, public) = unpub(t);
        if let Some(rest) = bare.strip_prefix("use ") {
            let mods = inline.names();
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

/// The text with its comments and its string and character literals
/// blanked out (newlines kept, so lines stay where they were).
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let mut blank = |from: usize, to: usize| {
        for c in &mut out[from..to.min(b.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let at = |i: usize, s: &str| b[i..].starts_with(s.as_bytes());
    let mut i = 0;
    while i < b.len() {
        let start = i;
        if at(i, "//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if at(i, "/*") {
            let mut depth = 0usize;
            while i < b.len() {
                if at(i, "/*") {
                    depth += 1;
                    i += 2;
                } else if at(i, "*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if let Some((open, hashes)) = raw_string_start(&b[i..]) {
            let close = [b"\"".as_slice(), &vec![b'#'; hashes]].concat();
            i += open;
            while i < b.len() && !b[i..].starts_with(&close) {
                i += 1;
            }
            i += close.len();
        } else if b[i] == b'"'
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
            || at(i, "b\"")
        {
            i += if b[i] == b'b' { 2 } else { 1 };
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
        } else if let Some(len) = char_literal(&b[i..]) {
            i += len;
        } else {
            i += 1;
            continue;
        }
        blank(start, i);
    }
    String::from_utf8(out).expect("blanking keeps UTF-8")
}

/// `r"`, `r#"`, `br#"`...: where the string's text starts and how many
/// `#`s close it.
fn raw_string_start(s: &[u8]) -> Option<(usize, usize)> {
    let b = s.starts_with(b"b") as usize;
    if s.get(b) != Some(&b'r') {
        return None;
    }
    let hashes = s[b + 1..].iter().take_while(|c| **c == b'#').count();
    (s.get(b + 1 + hashes) == Some(&b'"')).then_some((b + 2 + hashes, hashes))
}

/// The length of a character literal starting here (`'a'`, `'\n'`,
/// `'\u{1F600}'`, `'é'`), or `None` for a lifetime or a label.
fn char_literal(s: &[u8]) -> Option<usize> {
    if s.first() != Some(&b'\'') {
        return None;
    }
    if s.get(1) == Some(&b'\\') {
        return s[2..].iter().position(|c| *c == b'\'').map(|e| e + 3);
    }
    // One character of up to four bytes, then the closing quote.
    (2..=5)
        .find(|n| {
            s.get(*n) == Some(&b'\'')
                && std::str::from_utf8(&s[1..*n]).is_ok_and(|c| c.chars().count() == 1)
        })
        .map(|n| n + 1)
}

/// The paths written inline in a file (outside its `use` declarations) that
/// start at `crate`, `super`, `self` or one of `children`, each with the
/// inline modules it stands in: `super::leases::ticket` is
/// `["super", "leases", "ticket"]`.
fn inline_paths(code: &str, children: &BTreeSet<String>) -> Vec<(Vec<String>, Vec<String>)> {
    let mut out = Vec::new();
    let mut inline = Inline::default();
    let mut in_use = false;
    for line in code.lines() {
        let t = line.trim();
        if in_use {
            in_use = !t.ends_with(';');
            continue;
        }
        if inline.follow(line) {
            continue;
        }
        if unpub(t).0.starts_with("use ") {
            in_use = !t.ends_with(';');
            continue;
        }
        let mods = inline.names();
        let bytes = line.as_bytes();
        let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
        let mut i = 0;
        while i < bytes.len() {
            if !word(bytes[i]) || (i > 0 && (word(bytes[i - 1]) || bytes[i - 1] == b':')) {
                i += 1;
                continue;
            }
            // A path: words joined by `::`.
            let mut segments = Vec::new();
            let mut j = i;
            loop {
                let start = j;
                while j < bytes.len() && word(bytes[j]) {
                    j += 1;
                }
                segments.push(line[start..j].to_string());
                if line[j..].starts_with("::")
                    && line[j + 2..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
                {
                    j += 2;
                } else {
                    break;
                }
            }
            let first = segments[0].as_str();
            let starts_here =
                matches!(first, "crate" | "super" | "self") || children.contains(first);
            if segments.len() > 1 && starts_here {
                out.push((segments, mods.clone()));
            }
            i = j.max(i + 1);
        }
    }
    out
}

/// The child modules of `module`: its sub-files and the modules it declares
/// inline, by name.
fn children(
    module: &[String],
    code: &str,
    files: &BTreeMap<Vec<String>, PathBuf>,
) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = files
        .keys()
        .filter(|k| k.len() == module.len() + 1 && k.starts_with(module))
        .map(|k| k[module.len()].clone())
        .collect();
    for line in code.lines() {
        if let Some(name) = opens_mod(unpub(line.trim()).0) {
            out.insert(name.to_string());
        }
    }
    out
}

/// Every arrow between the files of src/: from a file to each other file
/// whose module one of its paths names.
/// Each arrow keeps the first path that made it, for the failure's message.
fn arrows(files: &BTreeMap<Vec<String>, PathBuf>) -> Arrows {
    let mut arrows = Arrows::new();
    for (module, file) in files {
        let text = std::fs::read_to_string(file).expect("a source file");
        let code = code_only(&text);
        let mut paths: Vec<(Vec<String>, Vec<String>, bool)> = Vec::new();
        for (tree, inline, public) in uses(&code) {
            for path in expand(&tree) {
                paths.push((path, inline.clone(), public));
            }
        }
        let kids = children(module, &code, files);
        for (path, inline) in inline_paths(&code, &kids) {
            paths.push((path, inline, false));
        }
        for (path, inline, public) in paths {
            let mut here = module.clone();
            here.extend(inline);
            let Some(target) = absolute(&here, &path, files) else {
                continue;
            };
            // A re-export of a descendant is the module's door.
            if public && target.len() > module.len() && target.starts_with(module) {
                continue;
            }
            if let Some(to) = file_of(&target, files) {
                if to != file {
                    let by = arrows.entry(file.clone()).or_default();
                    by.entry(to.clone()).or_insert_with(|| path.join("::"));
                }
            }
        }
    }
    arrows
}

/// From a file, to each file it reaches, by the first path that does.
type Arrows = BTreeMap<PathBuf, BTreeMap<PathBuf, String>>;

#[test]
fn the_files_of_src_import_no_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = modules(&src);
    let arrows = arrows(&files);
    // Depth-first search for a back edge.
    let mut state: BTreeMap<&PathBuf, u8> = BTreeMap::new();
    let mut circles = Vec::new();
    fn visit<'a>(
        at: &'a PathBuf,
        arrows: &'a Arrows,
        state: &mut BTreeMap<&'a PathBuf, u8>,
        trail: &mut Vec<&'a PathBuf>,
        circles: &mut Vec<String>,
    ) {
        state.insert(at, 1);
        trail.push(at);
        for next in arrows.get(at).into_iter().flat_map(|m| m.keys()) {
            match state.get(next) {
                Some(1) => {
                    let from = trail.iter().position(|p| *p == next).unwrap_or(0);
                    let files: Vec<&PathBuf> =
                        trail[from..].iter().copied().chain([next]).collect();
                    let mut text = files[0].display().to_string();
                    for pair in files.windows(2) {
                        let by = &arrows[pair[0]][pair[1]];
                        text.push_str(&format!(" -({by})-> {}", pair[1].display()));
                    }
                    circles.push(text);
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

/// The service's wings (`serve/<wing>/`) sit below its core (the files of
/// `serve/` itself) and its web layer (`serve/web/`): a wing that reached
/// up would tie the store, the schedule or the intake to the way they are
/// started or served.
#[test]
fn no_wing_of_the_service_imports_its_core_or_its_web_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = modules(&src);
    let arrows = arrows(&files);
    let serve = src.join("serve");
    let web = serve.join("web");
    let core = |p: &Path| p.parent() == Some(serve.as_path());
    let mut wrong = Vec::new();
    for (from, tos) in &arrows {
        let Ok(rel) = from.strip_prefix(&serve) else {
            continue;
        };
        // Files in a folder of serve/ other than the web layer are wings.
        if rel.components().count() < 2 || from.starts_with(&web) {
            continue;
        }
        for to in tos.keys() {
            if core(to) || to.starts_with(&web) {
                wrong.push(format!("{} -> {}", from.display(), to.display()));
            }
        }
    }
    assert!(wrong.is_empty(), "wings reaching up:\n{}", wrong.join("\n"));
}

/// The scanner itself: paths inline count, comments and strings do not.
#[test]
fn inline_paths_are_read_and_comments_and_strings_are_not() {
    let text = "fn f() {\n    super::leases::ticket(1); // crate::no::comment\n    let s = \"crate::no::string\";\n    let t: crate::results::GameRow = todo!();\n    let c = 'x'; let r = r#\"self::no\"#;\n    db::unix_now();\n}\nmod tests {\n    fn g() { super::f(); }\n}\n";
    let code = code_only(text);
    let kids: BTreeSet<String> = ["db".to_string()].into();
    let found: Vec<String> = inline_paths(&code, &kids)
        .into_iter()
        .map(|(p, m)| format!("{}@{}", p.join("::"), m.join("::")))
        .collect();
    assert_eq!(
        found,
        [
            "super::leases::ticket@",
            "crate::results::GameRow@",
            "db::unix_now@",
            "super::f@tests"
        ]
    );
}
