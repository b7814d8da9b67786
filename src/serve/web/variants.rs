//! A variant as a request names it: as the ladder file does (`tricala3`)
//! or as the standings do (`tricala-3p`); `tricala` is the 2-player game
//! alone, as in the standings (the rows' `variant` column says `tricala`
//! for both, their `players` column tells them apart); one the ladder
//! does not play is a 400 that names those it does.

use super::error::{ApiError, ApiResult};
use crate::serve::ladder::Ladder;
use axum::http::StatusCode;

/// The ladder's variants that `name` names (as the ladder file does,
/// `tricala3`, or as the standings do, `tricala-3p`), by index;
/// a 400 naming them for any other name.
pub fn named(l: &Ladder, name: &str) -> ApiResult<Vec<usize>> {
    let parsed = crate::league::config::parse_variant(name)
        .ok()
        .map(|s| s.label());
    let is = |label: &str| label == name || parsed.as_deref() == Some(label);
    let mut found: Vec<usize> =
        l.t.variants
            .iter()
            .enumerate()
            .filter(|(_, v)| is(&v.label()))
            .map(|(i, _)| i)
            .collect();
    // A variant the file no longer plays: its games are still there.
    found.extend(
        l.gone_variants
            .iter()
            .filter(|(_, g)| is(g))
            .map(|(i, _)| *i),
    );
    if found.is_empty() {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            format!(
                "this ladder has no variant `{name}`: it plays {}",
                names(l).join(", ")
            ),
        ));
    }
    Ok(found)
}

/// The label of variant number `i`: the ladder file's, or one it no
/// longer plays ([`Ladder::gone_variants`]).
pub fn label_of(l: &Ladder, i: usize) -> String {
    match l.t.variants.get(i) {
        Some(v) => v.label(),
        None => l
            .gone_variants
            .iter()
            .find(|(n, _)| *n == i)
            .map_or_else(|| format!("#{i}"), |(_, g)| g.clone()),
    }
}

/// The ladder's variants as the standings name them, with the ladder
/// file's own spelling where it differs (`tricala-3p (also tricala3)`).
fn names(l: &Ladder) -> Vec<String> {
    l.t.variants
        .iter()
        .map(|v| match v.players {
            3 if v.key == v.variant.name() => format!("{} (also {}3)", v.label(), v.key),
            _ => v.label(),
        })
        .collect()
}
