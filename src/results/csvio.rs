//! Reading and writing `games.csv`: a malformed row is an error naming its
//! file and line; a torn last line (a run killed mid-write) is reported
//! separately so that the league runner can repair it.

use super::GameRow;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum CsvError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}: {why}")]
    Row {
        path: PathBuf,
        line: u64,
        why: String,
    },
}

/// Reads every row of a results CSV. Any malformed row is an error with the
/// file and line.
pub fn read_rows(path: &Path) -> Result<Vec<GameRow>, CsvError> {
    let file = std::fs::File::open(path).map_err(|source| CsvError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut reader = csv::ReaderBuilder::new().flexible(false).from_reader(file);
    let mut rows = Vec::new();
    for (i, rec) in reader.deserialize::<GameRow>().enumerate() {
        let row = rec.map_err(|e| CsvError::Row {
            path: path.to_path_buf(),
            line: e.position().map(|p| p.line()).unwrap_or(i as u64 + 2),
            why: e.to_string(),
        })?;
        check_row(&row).map_err(|why| CsvError::Row {
            path: path.to_path_buf(),
            line: i as u64 + 2,
            why,
        })?;
        rows.push(row);
    }
    Ok(rows)
}

/// Semantic checks beyond the column types.
pub fn check_row(row: &GameRow) -> Result<(), String> {
    if row.game_id.is_empty() {
        return Err("empty game_id".into());
    }
    if !(2..=3).contains(&row.players) {
        return Err(format!("players must be 2 or 3, got {}", row.players));
    }
    if row.players == 3 && (row.seat2.is_empty() || row.score2.is_none()) {
        return Err("3-player row without seat2/score2".into());
    }
    if row.players == 2 && (!row.seat2.is_empty() || row.score2.is_some()) {
        return Err("2-player row with seat2/score2".into());
    }
    let scores = row.scores();
    if scores.iter().any(|s| !(0.0..=1.0).contains(s)) {
        return Err(format!("scores must lie in [0, 1], got {scores:?}"));
    }
    let total: f64 = scores.iter().sum();
    let expect = row.players as f64 / 2.0;
    if (total - expect).abs() > 1e-6 {
        return Err(format!(
            "scores must add up to {expect} for {} players, got {total}",
            row.players
        ));
    }
    let seats = row.seats();
    if seats.iter().any(|s| s.is_empty()) {
        return Err("empty bot name in a seat".into());
    }
    Ok(())
}
