//! Hints for names a user mistyped: the closest known one.

/// The candidate closest to `word`, if one is close enough to be what was
/// meant (Jaro-Winkler similarity of at least 0.8, as clap's own
/// suggestions use).
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(word, c), c))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_finds_its_name_and_nonsense_finds_none() {
        let names = ["random-rust", "greedy-rust", "random-python"];
        assert_eq!(closest("radnom-rust", names), Some("random-rust"));
        assert_eq!(closest("greedy", names), Some("greedy-rust"));
        assert_eq!(closest("zzz", names), None);
    }
}
