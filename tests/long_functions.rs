//! No function of src/ over 120 lines (issue 29) unless its doc comment
//! says why: a line of it that starts with `Long` ("Long (about 150
//! lines): ..."). Tests are left out: the files declared under
//! `#[cfg(test)]` and the inline `#[cfg(test)] mod x { ... }`.
//!
//! A function is counted from its `fn` line to its closing brace, found as
//! rustfmt writes it: the first `}` alone on a line at the indentation of
//! the `fn` (the source is kept formatted by `cargo fmt`).

use std::path::{Path, PathBuf};

/// The most lines a function of src/ may have without saying why.
const MOST: usize = 120;

/// Every .rs file under `dir`.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("src/ is readable") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The files that `#[cfg(test)] mod x;` in `file` declares.
fn test_files(file: &Path, text: &str) -> Vec<PathBuf> {
    let name = file.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    let dir = file.parent().unwrap_or(Path::new("."));
    // `a/mod.rs` (or lib.rs, main.rs) declares `a/x.rs`; `a/b.rs`, `a/b/x.rs`.
    let base = match name {
        "mod" | "lib" | "main" => dir.to_path_buf(),
        _ => dir.join(name),
    };
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for pair in lines.windows(2) {
        if pair[0].trim() != "#[cfg(test)]" {
            continue;
        }
        let decl = pair[1].trim();
        let decl = decl.strip_prefix("pub(crate) ").unwrap_or(decl);
        if let Some(m) = decl.strip_prefix("mod ").and_then(|m| m.strip_suffix(';')) {
            out.push(base.join(format!("{m}.rs")));
            out.push(base.join(m).join("mod.rs"));
        }
    }
    out
}

/// The name of the function that `line` starts, if it starts one.
fn fn_name(line: &str) -> Option<&str> {
    let mut rest = line.trim_start();
    for word in [
        "pub(crate) ",
        "pub(super) ",
        "pub ",
        "const ",
        "async ",
        "unsafe ",
    ] {
        rest = rest.strip_prefix(word).unwrap_or(rest);
    }
    if let Some(r) = rest.strip_prefix("extern \"C\" ") {
        rest = r;
    }
    let rest = rest.strip_prefix("fn ")?;
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

/// Whether the doc comment above line `at` has a line starting with `Long`.
fn says_why(lines: &[&str], at: usize) -> bool {
    lines[..at]
        .iter()
        .rev()
        .map(|l| l.trim())
        .take_while(|l| l.starts_with("///") || l.starts_with("#[") || l.starts_with("//"))
        .filter_map(|l| l.strip_prefix("///"))
        .any(|doc| doc.trim_start().starts_with("Long"))
}

/// The functions of one file over `MOST` lines that do not say why:
/// `(line, name, lines)`.
fn long_functions(text: &str) -> Vec<(usize, String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let indent = &line[..line.len() - line.trim_start().len()];
        // An inline test module: skipped to its closing brace.
        let test_mod = i > 0
            && lines[i - 1].trim() == "#[cfg(test)]"
            && line.trim_start().starts_with("mod ")
            && line.ends_with('{');
        if test_mod {
            let close = format!("{indent}}}");
            i += lines[i..].iter().position(|l| *l == close).unwrap_or(0) + 1;
            continue;
        }
        let Some(name) = fn_name(line) else {
            i += 1;
            continue;
        };
        // The signature ends with the body's `{`, or with `;` (no body).
        let Some(open) = lines[i..]
            .iter()
            .position(|l| l.ends_with('{') || l.ends_with(';') || l.ends_with('}'))
        else {
            break;
        };
        let sig_end = i + open;
        if !lines[sig_end].ends_with('{') {
            i = sig_end + 1;
            continue;
        }
        let close = format!("{indent}}}");
        let Some(body) = lines[sig_end + 1..].iter().position(|l| *l == close) else {
            panic!("line {}: `fn {name}` has no closing brace at its indentation: is the file formatted (cargo fmt)?", i + 1);
        };
        let n = sig_end + 1 + body - i + 1;
        if n > MOST && !says_why(&lines, i) {
            out.push((i + 1, name.to_string(), n));
        }
        // Functions nested in this one are counted too.
        i += 1;
    }
    out
}

#[test]
fn no_function_of_src_is_over_120_lines_without_saying_why() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = rust_files(&src);
    let mut tests = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).expect("a source file");
        tests.extend(test_files(f, &text));
    }
    let mut long = Vec::new();
    for f in files.iter().filter(|f| !tests.contains(f)) {
        let text = std::fs::read_to_string(f).expect("a source file");
        for (line, name, n) in long_functions(&text) {
            let path = f.strip_prefix(&src).unwrap_or(f).display().to_string();
            long.push(format!("src/{path}:{line}: fn {name}: {n} lines"));
        }
    }
    assert!(
        long.is_empty(),
        "functions over {MOST} lines whose doc comment does not say why (a line starting with `Long`): split them, or say why they stay long\n{}",
        long.join("\n")
    );
}

#[test]
fn the_counter_finds_a_long_function_and_its_reason() {
    let body = "    x();\n".repeat(MOST);
    let long = format!("/// Does x.\npub fn a() {{\n{body}}}\n");
    assert_eq!(long_functions(&long), vec![(2, "a".to_string(), MOST + 2)]);
    let said =
        format!("/// Does x.\n///\n/// Long (a table): ...\n#[inline]\npub fn a() {{\n{body}}}\n");
    assert!(long_functions(&said).is_empty());
    let short = format!("fn b() {{\n{}}}\n", "    x();\n".repeat(MOST - 2));
    assert!(long_functions(&short).is_empty());
    let tests = format!("#[cfg(test)]\nmod tests {{\n    fn c() {{\n{body}    }}\n}}\n");
    assert!(long_functions(&tests).is_empty());
    let nested = format!(
        "impl A {{\n    pub(crate) async fn d(\n        x: u8,\n    ) -> u8 {{\n{body}    }}\n}}\n"
    );
    assert_eq!(
        long_functions(&nested),
        vec![(2, "d".to_string(), MOST + 4)]
    );
}
