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

/// True when `program` (one word, no `/`) names an executable file on
/// `PATH`.
pub fn on_path(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let Some(path) = std::env::var_os("PATH") else {
        return false;
    };
    std::env::split_paths(&path).any(|d| {
        std::fs::metadata(d.join(program))
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
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

    #[test]
    fn sh_is_on_path_and_nonsense_is_not() {
        assert!(on_path("sh"));
        assert!(!on_path("no-such-program-anywhere"));
    }
}
