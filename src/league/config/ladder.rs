//! The `[ladder]` table of a ladder file (docs/ladder.md): a league file
//! whose bots come over HTTP (`arena serve`), with how many games are in
//! flight, how new versions are placed, how often ratings are refitted and
//! what an owner may upload. Every key is optional; each bound is checked
//! here with the file's line.

use super::ctx::{ConfigError, Ctx};
use serde::Deserialize;
use toml::Spanned;

/// The ladder's settings, checked ([`super::Tournament::ladder`]).
#[derive(Clone, Debug, PartialEq)]
pub struct LadderSettings {
    /// Games played at once by the server itself (`games_in_flight`,
    /// default: the league's `concurrency`).
    pub games_in_flight: usize,
    /// Games a new version plays before it counts as placed
    /// (`placement_games`, default 20)...
    pub placement_games: u32,
    /// ...and the 95% interval half-width, in Elo, it must be under
    /// (`placement_width`, default 50).
    pub placement_width: f64,
    /// The share of pairings drawn uniformly at random (`random_share`,
    /// default 0.1), so that the comparison graph stays connected.
    pub random_share: f64,
    /// Ratings are refitted after this many new games (`refit_games`,
    /// default 100)...
    pub refit_games: u64,
    /// ...or this many seconds after the first game the last fit lacks
    /// (`refit_seconds`, default 10), whichever comes first.
    pub refit_seconds: u64,
    /// Bots one owner may have entered (`bots_per_owner`, default 5).
    pub bots_per_owner: u32,
    /// Uploads one owner may make in an hour (`uploads_per_hour`,
    /// default 20).
    pub uploads_per_hour: u32,
    /// The largest upload, compressed (`upload_mb`, default 16).
    pub upload_mb: u64,
    /// The largest bot folder once unpacked (`unpacked_mb`, default 64).
    pub unpacked_mb: u64,
    /// The most files in one upload (`upload_files`, default 2000).
    pub upload_files: usize,
    /// Owners' uploads handled at once (`uploads_at_once`, default 4);
    /// past it, 503 before the body is read.
    pub uploads_at_once: usize,
    /// Workers' game uploads handled at once (`game_uploads_at_once`,
    /// default 8); past it, 503 before the body is read.
    pub game_uploads_at_once: usize,
    /// Exports (`/api/games.csv`, `.jsonl`, `.pgn`) streamed at once
    /// (`exports_at_once`, default 4); past it, 503 with `Retry-After`.
    pub exports_at_once: usize,
    /// Live feeds (`/api/events`) open at once (`feeds_at_once`, default
    /// 1,024: each holds about 100 KB); past it, 503 with `Retry-After`.
    pub feeds_at_once: usize,
    /// Uploads built and checked at once (`builds_at_once`, default 2),
    /// taken fairly between owners (`serve::intake::pool`).
    pub builds_at_once: usize,
    /// The most games one worker may play at once (`worker_jobs_max`,
    /// default 32): a worker registering a larger `-j`, or more than the
    /// cores it reports, is refused, and a worker holds at most its `-j`
    /// leases.
    pub worker_jobs_max: u32,
    /// The most games the ladder schedules (`max_games`, default none:
    /// for ever); once that many are in the store, no new one is queued
    /// and the ladder stops when they are played (issue 31, a set of N
    /// games for a test or an event).
    pub max_games: Option<u64>,
    /// Games the ladder plays in an hour once every version is placed and
    /// no test runs (`maintenance_games_per_hour`, default 600), instead
    /// of as many as its slots can.
    pub maintenance_games_per_hour: u64,
    /// Days a finished game's record is kept (`record_days`, default 14);
    /// older ones are pruned, their rows kept (the ratings do not change).
    pub record_days: u64,
    /// How many games a version's pace may run ahead of the slowest's
    /// before it waits for it (`pace_lead`, default 4).
    pub pace_lead: f64,
    /// Tests between versions (`test_*` keys; docs/ladder.md "Tests
    /// between versions").
    /// Bytes of each bot's stderr kept per game, for its owner
    /// (`stderr_kb`, default 64 KiB; 0: none kept).
    pub stderr_kb: u64,
    /// Games' analyses an owner may ask for in an hour
    /// (`analyses_per_hour`, default 10; 0: none).
    pub analyses_per_hour: u32,
    /// Seconds of search a game's analysis takes, shared out between its
    /// decisions (`analysis_seconds`, default 20).
    pub analysis_seconds: u64,
    pub tests: TestSettings,
    /// Seconds a request's head (its request line and headers) may take
    /// from its first byte (from the connection's opening, for its first
    /// request), however it trickles (`request_head_seconds`, default 30);
    /// then 408 and the connection is closed.
    pub request_head_seconds: u64,
    /// Connections one client address may hold open at once
    /// (`connections_per_address`, default 128); past it, 503 and closed.
    pub connections_per_address: usize,
}

/// What becomes of the old version at the end of a test
/// (`test_outcome`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TestOutcome {
    /// `retire-on-h1`: retired when the test ends with H1; kept beside
    /// the new one otherwise.
    RetireOnH1,
    /// `keep-both`: both versions stay, whatever the result.
    KeepBoth,
    /// `owner`: both stay until the owner decides (`POST
    /// /api/tests/ID/decide`).
    Owner,
}

impl TestOutcome {
    pub const ALL: [TestOutcome; 3] = [
        TestOutcome::RetireOnH1,
        TestOutcome::KeepBoth,
        TestOutcome::Owner,
    ];

    /// The word of the ladder file, the API and the store.
    pub fn as_str(self) -> &'static str {
        match self {
            TestOutcome::RetireOnH1 => "retire-on-h1",
            TestOutcome::KeepBoth => "keep-both",
            TestOutcome::Owner => "owner",
        }
    }

    /// The outcome a word names.
    pub fn from_word(word: &str) -> Option<TestOutcome> {
        TestOutcome::ALL.into_iter().find(|o| o.as_str() == word)
    }

    /// The words, for messages.
    pub fn words() -> String {
        TestOutcome::ALL
            .iter()
            .map(|o| format!("`{}`", o.as_str()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// How a new version is tested against the version it would replace.
#[derive(Clone, Debug, PartialEq)]
pub struct TestSettings {
    /// Whether an upload of a bot with an entered version starts a test
    /// (`test_versions`, default true); when false (or the upload says
    /// `test=no`), the new version replaces the old one at once.
    pub on: bool,
    /// The SPRT's bounds, in normalized Elo as `arena sprt`'s default
    /// (`test_elo0`, default 0; `test_elo1`, default 10).
    pub elo0: f64,
    pub elo1: f64,
    /// Its error rates (`test_alpha`, `test_beta`, default 0.05).
    pub alpha: f64,
    pub beta: f64,
    /// The test's budget: the most games it plays (`test_max_games`,
    /// default 10000); at the budget without a decision it ends, `budget`.
    pub max_games: u64,
    /// What becomes of the old version (`test_outcome`, default
    /// `retire-on-h1`).
    pub outcome: TestOutcome,
}

impl Default for TestSettings {
    fn default() -> TestSettings {
        TestSettings {
            on: true,
            elo0: 0.0,
            elo1: 10.0,
            alpha: 0.05,
            beta: 0.05,
            max_games: 10_000,
            outcome: TestOutcome::RetireOnH1,
        }
    }
}

impl LadderSettings {
    /// The stderr kept per seat and game, in bytes; `None` when none is.
    pub fn stderr_cap(&self) -> Option<u64> {
        (self.stderr_kb > 0).then_some(self.stderr_kb << 10)
    }
}

impl Default for LadderSettings {
    fn default() -> LadderSettings {
        LadderSettings {
            games_in_flight: 1,
            placement_games: 20,
            placement_width: 50.0,
            random_share: 0.1,
            refit_games: 100,
            refit_seconds: 10,
            bots_per_owner: 5,
            uploads_per_hour: 20,
            upload_mb: 16,
            unpacked_mb: 64,
            upload_files: 2000,
            uploads_at_once: 4,
            game_uploads_at_once: 8,
            exports_at_once: 4,
            feeds_at_once: 1024,
            builds_at_once: 2,
            worker_jobs_max: 32,
            max_games: None,
            stderr_kb: crate::results::stderr::DEFAULT_CAP >> 10,
            analyses_per_hour: 10,
            analysis_seconds: 20,
            maintenance_games_per_hour: 600,
            record_days: 14,
            pace_lead: 4.0,
            tests: TestSettings::default(),
            request_head_seconds: 30,
            connections_per_address: 128,
        }
    }
}

/// Refuses a ladder file (one with a `[ladder]` table) that names bots:
/// a ladder's bots are uploaded by their owners (`arena submit`, `POST
/// /api/bots`), so a `bots` key would be ignored. Named at its line. A
/// file that is not TOML, or not a ladder's, is left to
/// [`super::Tournament::load`] to judge.
pub fn refuse_bots(path: &std::path::Path, src: &str) -> Result<(), ConfigError> {
    #[derive(Deserialize)]
    struct Keys {
        bots: Option<Spanned<toml::Value>>,
        ladder: Option<toml::Value>,
    }
    let Ok(keys) = toml::from_str::<Keys>(src) else {
        return Ok(());
    };
    match (keys.ladder, keys.bots) {
        (Some(_), Some(bots)) => Err(Ctx { path, src }.field(
            bots.span(),
            "bots",
            "a ladder's bots are uploaded by their owners (`arena submit`, POST /api/bots), not named in its file: remove `bots` (docs/ladder.md, \"The ladder file\")",
        )),
        _ => Ok(()),
    }
}

/// `[ladder]` as written.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLadder {
    games_in_flight: Option<Spanned<i64>>,
    placement_games: Option<Spanned<i64>>,
    placement_width: Option<Spanned<f64>>,
    random_share: Option<Spanned<f64>>,
    refit_games: Option<Spanned<i64>>,
    refit_seconds: Option<Spanned<i64>>,
    bots_per_owner: Option<Spanned<i64>>,
    uploads_per_hour: Option<Spanned<i64>>,
    upload_mb: Option<Spanned<i64>>,
    unpacked_mb: Option<Spanned<i64>>,
    upload_files: Option<Spanned<i64>>,
    uploads_at_once: Option<Spanned<i64>>,
    game_uploads_at_once: Option<Spanned<i64>>,
    exports_at_once: Option<Spanned<i64>>,
    feeds_at_once: Option<Spanned<i64>>,
    builds_at_once: Option<Spanned<i64>>,
    worker_jobs_max: Option<Spanned<i64>>,
    max_games: Option<Spanned<i64>>,
    stderr_kb: Option<Spanned<i64>>,
    analyses_per_hour: Option<Spanned<i64>>,
    analysis_seconds: Option<Spanned<i64>>,
    maintenance_games_per_hour: Option<Spanned<i64>>,
    record_days: Option<Spanned<i64>>,
    pace_lead: Option<Spanned<f64>>,
    test_versions: Option<Spanned<bool>>,
    test_elo0: Option<Spanned<f64>>,
    test_elo1: Option<Spanned<f64>>,
    test_alpha: Option<Spanned<f64>>,
    test_beta: Option<Spanned<f64>>,
    test_max_games: Option<Spanned<i64>>,
    test_outcome: Option<Spanned<String>>,
    request_head_seconds: Option<Spanned<i64>>,
    connections_per_address: Option<Spanned<i64>>,
}

/// Checks `[ladder]`: each count within its bounds, with the file's line;
/// `games_in_flight` defaults to the league's `concurrency`.
pub(super) fn section(
    ctx: &Ctx<'_>,
    raw: &RawLadder,
    concurrency: usize,
) -> Result<LadderSettings, ConfigError> {
    let count = |v: &Option<Spanned<i64>>, field: &str, min: i64, max: i64, default: i64| {
        v.as_ref().map_or(Ok(default), |s| {
            let n = *s.get_ref();
            if n < min || n > max {
                return Err(ctx.field(
                    s.span(),
                    &format!("ladder.{field}"),
                    format!("{n} is out of bounds: give a whole number from {min} to {max}"),
                ));
            }
            Ok(n)
        })
    };
    let share = |v: &Option<Spanned<f64>>, field: &str, min: f64, max: f64, default: f64| {
        v.as_ref().map_or(Ok(default), |s| {
            let x = *s.get_ref();
            if !(min..=max).contains(&x) {
                return Err(ctx.field(
                    s.span(),
                    &format!("ladder.{field}"),
                    format!("{x} is out of bounds: give a number from {min} to {max}"),
                ));
            }
            Ok(x)
        })
    };
    let d = LadderSettings::default();
    Ok(LadderSettings {
        games_in_flight: count(
            &raw.games_in_flight,
            "games_in_flight",
            0,
            1024,
            concurrency as i64,
        )? as usize,
        placement_games: count(&raw.placement_games, "placement_games", 0, 100_000, 20)? as u32,
        placement_width: share(&raw.placement_width, "placement_width", 1.0, 10_000.0, 50.0)?,
        random_share: share(&raw.random_share, "random_share", 0.0, 1.0, d.random_share)?,
        refit_games: count(&raw.refit_games, "refit_games", 1, 10_000_000, 100)? as u64,
        refit_seconds: count(&raw.refit_seconds, "refit_seconds", 1, 86_400, 10)? as u64,
        bots_per_owner: count(&raw.bots_per_owner, "bots_per_owner", 1, 10_000, 5)? as u32,
        uploads_per_hour: count(&raw.uploads_per_hour, "uploads_per_hour", 1, 100_000, 20)? as u32,
        upload_mb: count(&raw.upload_mb, "upload_mb", 1, 4096, 16)? as u64,
        unpacked_mb: count(&raw.unpacked_mb, "unpacked_mb", 1, 65_536, 64)? as u64,
        upload_files: count(&raw.upload_files, "upload_files", 1, 1_000_000, 2000)? as usize,
        uploads_at_once: count(&raw.uploads_at_once, "uploads_at_once", 1, 1024, 4)? as usize,
        game_uploads_at_once: count(
            &raw.game_uploads_at_once,
            "game_uploads_at_once",
            1,
            1024,
            8,
        )? as usize,
        exports_at_once: count(&raw.exports_at_once, "exports_at_once", 1, 1024, 4)? as usize,
        feeds_at_once: count(&raw.feeds_at_once, "feeds_at_once", 1, 1_000_000, 1024)? as usize,
        builds_at_once: count(&raw.builds_at_once, "builds_at_once", 1, 64, 2)? as usize,
        worker_jobs_max: count(&raw.worker_jobs_max, "worker_jobs_max", 1, 1024, 32)? as u32,
        max_games: match raw.max_games {
            Some(_) => Some(count(&raw.max_games, "max_games", 1, i64::MAX, 0)? as u64),
            None => None,
        },
        stderr_kb: count(&raw.stderr_kb, "stderr_kb", 0, 16_384, d.stderr_kb as i64)? as u64,
        analyses_per_hour: count(
            &raw.analyses_per_hour,
            "analyses_per_hour",
            0,
            10_000,
            i64::from(d.analyses_per_hour),
        )? as u32,
        analysis_seconds: count(
            &raw.analysis_seconds,
            "analysis_seconds",
            1,
            600,
            d.analysis_seconds as i64,
        )? as u64,
        maintenance_games_per_hour: count(
            &raw.maintenance_games_per_hour,
            "maintenance_games_per_hour",
            1,
            100_000_000,
            d.maintenance_games_per_hour as i64,
        )? as u64,
        record_days: count(
            &raw.record_days,
            "record_days",
            1,
            36_500,
            d.record_days as i64,
        )? as u64,
        pace_lead: share(&raw.pace_lead, "pace_lead", 1.0, 1_000_000.0, d.pace_lead)?,
        tests: test_section(ctx, raw)?,
        request_head_seconds: count(
            &raw.request_head_seconds,
            "request_head_seconds",
            1,
            3600,
            30,
        )? as u64,
        connections_per_address: count(
            &raw.connections_per_address,
            "connections_per_address",
            1,
            1_000_000,
            d.connections_per_address as i64,
        )? as usize,
    })
}

/// The `test_*` keys of `[ladder]`: the SPRT's bounds as `arena sprt`
/// checks them (named at `test_elo1`'s or `test_alpha`'s line), the
/// budget, the outcome.
fn test_section(ctx: &Ctx<'_>, raw: &RawLadder) -> Result<TestSettings, ConfigError> {
    let d = TestSettings::default();
    let num = |v: &Option<Spanned<f64>>, default: f64| v.as_ref().map_or(default, |s| *s.get_ref());
    let (elo0, elo1) = (num(&raw.test_elo0, d.elo0), num(&raw.test_elo1, d.elo1));
    let (alpha, beta) = (num(&raw.test_alpha, d.alpha), num(&raw.test_beta, d.beta));
    let model = crate::ratings::sprt::Model::Normalized;
    if let Err(e) = crate::ratings::sprt::SprtConfig::new(elo0, elo1, alpha, beta, model) {
        let (span, key) = [
            (&raw.test_elo1, "test_elo1"),
            (&raw.test_elo0, "test_elo0"),
            (&raw.test_alpha, "test_alpha"),
            (&raw.test_beta, "test_beta"),
        ]
        .into_iter()
        .find_map(|(v, k)| v.as_ref().map(|s| (s.span(), k)))
        .unwrap_or((0..0, "test_elo1"));
        return Err(ctx.field(span, &format!("ladder.{key}"), e.to_string()));
    }
    let max_games = match &raw.test_max_games {
        Some(s) if !(2..=100_000_000).contains(s.get_ref()) => {
            return Err(ctx.field(
                s.span(),
                "ladder.test_max_games",
                format!(
                    "{} is out of bounds: give a whole number from 2 to 100000000",
                    s.get_ref()
                ),
            ))
        }
        Some(s) => *s.get_ref() as u64,
        None => d.max_games,
    };
    let outcome = match &raw.test_outcome {
        Some(s) => TestOutcome::from_word(s.get_ref()).ok_or_else(|| {
            ctx.field(
                s.span(),
                "ladder.test_outcome",
                format!(
                    "`{}` is not an outcome: give one of {}",
                    s.get_ref(),
                    TestOutcome::words()
                ),
            )
        })?,
        None => d.outcome,
    };
    Ok(TestSettings {
        on: raw.test_versions.as_ref().is_none_or(|s| *s.get_ref()),
        elo0,
        elo1,
        alpha,
        beta,
        max_games,
        outcome,
    })
}
