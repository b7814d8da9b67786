//! A game's analysis kept in its results folder (issue 51):
//! `analysis/GAME_ID.jsonl`, written by `arena analyse RESULTS GAME_ID
//! --save`, one JSON object a decision (the lines `arena analyse --json`
//! prints; docs/tables.md documents the fields). The report and `arena
//! view` show it beside the game's decisions; this module only says where
//! the file is and reads it back, knowing nothing of what a verdict means.

use super::file_safe;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The folder of a results folder's analyses.
pub const FOLDER: &str = "analysis";

/// The most an analysis file may hold: a game of 10,000 decisions at
/// about 300 bytes each is 3 MB.
pub const MOST_BYTES: u64 = 16 << 20;

/// The file of game `game_id`'s analysis in `dir` (a results folder's
/// `analysis/`): its id made [`file_safe`], `.jsonl`.
pub fn file_of(dir: &Path, game_id: &str) -> PathBuf {
    dir.join(format!("{}.jsonl", file_safe(game_id)))
}

/// The ids of the games analysed in `dir`, made [`file_safe`] (the files'
/// stems); none when there is no such folder.
pub fn analysed(dir: &Path) -> std::collections::HashSet<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Default::default();
    };
    entries
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            Some(name.strip_suffix(".jsonl")?.to_string())
        })
        .collect()
}

/// The analysis in `path` as a JSON array of its lines' objects: `None`
/// when there is no such file, `Err` (what is wrong, and the line) when
/// it cannot be read or a line is not a JSON object.
pub fn read(path: &Path) -> Option<Result<Value, String>> {
    let size = std::fs::metadata(path).ok()?.len();
    if size > MOST_BYTES {
        return Some(Err(format!(
            "{}: {size} bytes, more than an analysis holds ({MOST_BYTES})",
            path.display()
        )));
    }
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => return Some(Err(format!("{}: {e}", path.display()))),
    };
    Some(parse(&text).map_err(|e| format!("{}: {e}", path.display())))
}

/// JSON lines of objects as an array; blank lines are skipped.
pub fn parse(text: &str) -> Result<Value, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(line) {
            Ok(v @ Value::Object(_)) => out.push(v),
            Ok(_) => return Err(format!("line {}: not a JSON object", i + 1)),
            Err(e) => return Err(format!("line {}: {e}", i + 1)),
        }
    }
    Ok(Value::Array(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_game_id_names_its_file_safely() {
        let dir = Path::new("r/analysis");
        assert_eq!(file_of(dir, "r002-filo-p1"), dir.join("r002-filo-p1.jsonl"));
        assert_eq!(file_of(dir, "../x y"), dir.join("_._x_y.jsonl"));
    }

    #[test]
    fn lines_are_read_as_objects_and_a_bad_line_is_named() {
        let v = parse("{\"decision\":1}\n\n{\"decision\":2}\n").unwrap();
        assert_eq!(v.as_array().map(Vec::len), Some(2));
        assert_eq!(
            parse("{\"a\":1}\n[1]\n").unwrap_err(),
            "line 2: not a JSON object"
        );
        assert!(parse("{\"a\":1}\n{oops\n")
            .unwrap_err()
            .starts_with("line 2: "));
    }
}
