//! The limits an uploaded bot runs under, as its check report states them
//! (issue 47): the ladder's `[limits]` where its file gives them, else the
//! defaults; a bot.toml may ask for less, never more
//! ([`crate::bot::LimitSettings::capping`], which every launch of a
//! ladder's room applies).

use crate::bot::{LimitSettings, Limits};

/// The limits in force for a bot whose bot.toml asks for `asks`, in a
/// ladder whose file says `ladder`: every field given, and one line of
/// the check report saying each and where it came from.
pub fn in_force(ladder: LimitSettings, asks: LimitSettings) -> (LimitSettings, String) {
    let used = ladder.capping(asks);
    let d = Limits::new(0);
    let fields = [
        (
            "memory_mb",
            ladder.memory_mb,
            d.memory_mb,
            asks.memory_mb,
            used.memory_mb,
        ),
        (
            "processes",
            ladder.processes,
            d.processes,
            asks.processes,
            used.processes,
        ),
        (
            "cpus",
            ladder.cpus.map(u64::from),
            u64::from(d.cpus),
            asks.cpus.map(u64::from),
            used.cpus.map(u64::from),
        ),
        (
            "file_size_mb",
            ladder.file_size_mb,
            d.file_size_mb,
            asks.file_size_mb,
            used.file_size_mb,
        ),
    ];
    let said: Vec<String> = fields
        .iter()
        .map(|&(name, own, default, ask, used)| {
            let top = own.unwrap_or(default);
            let ceiling = match own {
                Some(n) => format!("the ladder's [limits]: {n}"),
                None => format!("the ladder's default: {default}"),
            };
            let from = match ask {
                Some(a) if a < top => format!("its bot.toml asks for less ({ceiling})"),
                Some(a) if a > top => {
                    format!("{ceiling}; its bot.toml asks for {a}, more is never given")
                }
                _ => ceiling,
            };
            format!("{name} = {} ({from})", used.unwrap_or(top))
        })
        .collect();
    (
        used,
        format!(
            "limits in force: {} (a bot.toml may ask for less than the ladder's limits, never more)",
            said.join(", ")
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bot_toml_gets_less_never_more_and_each_limit_says_whence() {
        let asks = LimitSettings {
            memory_mb: Some(8000),
            processes: Some(16),
            cpus: Some(2),
            file_size_mb: None,
        };
        let ladder = LimitSettings {
            cpus: Some(1),
            ..LimitSettings::default()
        };
        let (used, line) = in_force(ladder, asks);
        assert_eq!(
            used,
            LimitSettings {
                memory_mb: Some(1024),
                processes: Some(16),
                cpus: Some(1),
                file_size_mb: Some(64),
            }
        );
        assert!(line.contains("memory_mb = 1024 (the ladder's default: 1024; its bot.toml asks for 8000, more is never given)"), "{line}");
        assert!(
            line.contains("processes = 16 (its bot.toml asks for less (the ladder's default: 64))"),
            "{line}"
        );
        assert!(
            line.contains("cpus = 1 (the ladder's [limits]: 1; its bot.toml asks for 2"),
            "{line}"
        );
        assert!(
            line.contains("file_size_mb = 64 (the ladder's default: 64)"),
            "{line}"
        );
    }
}
