//! What the server keeps in memory of the finished games: the counts the
//! ratings are fitted from ([`Tally`]), the latest games, and per version
//! its latest games and faults. It grows with the versions and the pairs
//! that met, not with the games (a ladder of 1,000 bots and 10 M games,
//! issue 34); the rows themselves stay in the store, which the exports and
//! `/api/games` read a page at a time ([`crate::serve::store::Db::games_page`]).

use super::browse::Order;
use crate::ratings::{RateOptions, Tally};
use crate::results::GameRow;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, LazyLock};

/// Games listed as the latest, on the standings page and per bot.
pub const RECENT: usize = 20;

/// The ladder's rating options: `arena rate`'s defaults, so that `arena
/// rate` of the export gives the standings shown.
static OPTIONS: LazyLock<RateOptions> = LazyLock::new(RateOptions::default);

/// The finished games, summed up.
pub struct Finished {
    /// Games added.
    games: usize,
    /// Every game's counts, for the next fit.
    tally: Tally<'static>,
    /// The latest [`RECENT`] games, oldest first, with their order (a
    /// row shared with its players' lists: one copy per game).
    recent: VecDeque<(usize, Arc<GameRow>)>,
    /// By player (`BOT@N`).
    players: HashMap<String, Player>,
    /// How far the store's finished games were read (a server for the
    /// pages only reads on from there).
    pub read_to: Option<crate::serve::store::DoneKey>,
    /// Rows read from the store so far, those that did not read included.
    pub read: usize,
    /// How many times the finished games were read again whole
    /// ([`crate::serve::ladder::Ladder::replace_finished`]): a fit of an
    /// older generation is out of date whatever its count.
    pub generation: u64,
}

/// One player's latest games (oldest first, with their order) and its
/// forfeits by reason.
#[derive(Default)]
struct Player {
    recent: VecDeque<(usize, Arc<GameRow>)>,
    faults: BTreeMap<String, u64>,
}

impl Default for Finished {
    fn default() -> Self {
        Finished {
            games: 0,
            tally: Tally::new(&OPTIONS),
            recent: VecDeque::new(),
            players: HashMap::new(),
            read_to: None,
            read: 0,
            generation: 0,
        }
    }
}

impl Finished {
    /// Adds a finished game. A ladder's game is a seat-swap group of its
    /// own (its group is its unique id), so the counts need not remember
    /// its group ([`Tally::add_unpaired`]).
    pub fn add(&mut self, row: &GameRow) {
        let n = self.games;
        self.games += 1;
        self.tally.add_unpaired(row);
        let row = Arc::new(row.clone());
        keep_latest(&mut self.recent, n, &row);
        for (seat, name) in row.seats().into_iter().enumerate() {
            let p = self.players.entry(name.to_string()).or_default();
            // A bot seated twice (a ladder never does it) counts once.
            if p.recent.back().is_none_or(|(m, _)| *m != n) {
                keep_latest(&mut p.recent, n, &row);
            }
            if row.offender == Some(seat as u8) {
                *p.faults.entry(row.reason.clone()).or_default() += 1;
            }
        }
    }

    /// Games finished.
    pub fn games(&self) -> usize {
        self.games
    }

    /// The latest games, newest first.
    pub fn recent(&self) -> Vec<GameRow> {
        self.recent
            .iter()
            .rev()
            .map(|(_, r)| GameRow::clone(r))
            .collect()
    }

    /// The latest games of any of `players` (newest first, at most
    /// [`RECENT`]) and their forfeits by reason.
    pub fn of_players(&self, players: &[String]) -> (Vec<GameRow>, BTreeMap<String, u64>) {
        let mut games: Vec<&(usize, Arc<GameRow>)> = Vec::new();
        let mut faults = BTreeMap::new();
        for p in players.iter().filter_map(|p| self.players.get(p)) {
            games.extend(&p.recent);
            for (reason, n) in &p.faults {
                *faults.entry(reason.clone()).or_default() += n;
            }
        }
        games.sort_by_key(|(n, _)| std::cmp::Reverse(*n));
        games.dedup_by_key(|(n, _)| *n);
        let recent = games
            .into_iter()
            .take(RECENT)
            .map(|(_, r)| GameRow::clone(r))
            .collect();
        (recent, faults)
    }

    /// A copy of the counts, to fit outside the lock.
    pub fn tally(&self) -> Tally<'static> {
        self.tally.clone()
    }
}

/// Pushes game `n` onto `latest`, which keeps [`RECENT`].
fn keep_latest(latest: &mut VecDeque<(usize, Arc<GameRow>)>, n: usize, row: &Arc<GameRow>) {
    if latest.len() == RECENT {
        latest.pop_front();
    }
    latest.push_back((n, row.clone()));
}

/// Reads the games finished after `after` (from the first when `None`), a
/// page at a time, and passes each row to `each`; returns where it ended
/// (`after` when there was none) and how many it read. A row that does
/// not read is logged and left out (and counted).
pub async fn read_finished(
    db: &super::Db,
    after: Option<super::DoneKey>,
    each: &mut (dyn FnMut(GameRow) + Send),
) -> Result<(Option<super::DoneKey>, usize), super::DbError> {
    let mut to = after;
    let mut read = 0;
    loop {
        let page = db
            .games_page(to.as_ref(), Order::Oldest, 5_000, &Default::default())
            .await?;
        let Some(last) = page.last() else {
            return Ok((to, read));
        };
        to = Some(last.key.clone());
        read += page.len();
        for done in page {
            match serde_json::from_str::<GameRow>(&done.row_json) {
                Ok(r) => match crate::results::csvio::rateable(&r) {
                    Ok(()) => each(r),
                    // Named at every start: left out of the standings and
                    // the exports, which must rate as `arena rate` does.
                    Err(e) => tracing::error!(
                        "finished game {} ({}) has a row that cannot be rated, left out of the standings and exports: {e}",
                        done.key.id,
                        r.game_id.escape_debug()
                    ),
                },
                Err(e) => tracing::error!(
                    "finished game {} has a row that does not read: {e}",
                    done.key.id
                ),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(n: usize, a: &str, b: &str, offender: Option<u8>) -> GameRow {
        GameRow {
            game_id: format!("G{n}"),
            group: format!("G{n}"),
            variant: "kisolo".into(),
            players: 2,
            seat0: a.into(),
            seat1: b.into(),
            score0: 1.0,
            score1: 0.0,
            reason: if offender.is_some() {
                "illegal"
            } else {
                "store"
            }
            .into(),
            offender,
            ..GameRow::default()
        }
    }

    #[test]
    fn keeps_the_latest_games_and_every_fault() {
        let mut f = Finished::default();
        for n in 0..50 {
            let (a, b) = if n % 2 == 0 {
                ("a@1", "b@1")
            } else {
                ("a@2", "c@1")
            };
            f.add(&row(n, a, b, (n % 5 == 0).then_some(1)));
        }
        assert_eq!(f.games(), 50);
        let recent = f.recent();
        assert_eq!(recent.len(), RECENT);
        assert_eq!(recent[0].game_id, "G49");
        assert_eq!(recent[RECENT - 1].game_id, "G30");
        // Bot a's two versions: its latest 20 games of 50, newest first.
        let (games, faults) = f.of_players(&["a@1".into(), "a@2".into()]);
        let ids: Vec<&str> = games.iter().map(|r| r.game_id.as_str()).collect();
        let want: Vec<String> = (30..50).rev().map(|n| format!("G{n}")).collect();
        assert_eq!(ids, want);
        // Its opponents forfeited (seat 1); a itself never did.
        assert!(faults.is_empty());
        let (games, faults) = f.of_players(&["b@1".into()]);
        assert_eq!(games.len(), RECENT);
        assert_eq!(games[0].game_id, "G48");
        // Games 0, 10, 20, 30, 40 (every tenth: even and a multiple of 5).
        assert_eq!(faults.get("illegal"), Some(&5));
        assert_eq!(f.of_players(&["c@1".into()]).1.get("illegal"), Some(&5));
    }

    #[test]
    fn fits_the_same_as_rate_of_the_rows() {
        let mut f = Finished::default();
        let mut rows = Vec::new();
        for n in 0..40 {
            let mut r = row(
                n,
                ["x@1", "y@1", "z@1"][n % 3],
                ["y@1", "z@1", "x@1"][n % 3],
                None,
            );
            if n % 4 == 0 {
                (r.score0, r.score1) = (0.5, 0.5);
                r.reason = "tie".into();
            } else if n % 7 == 0 {
                (r.score0, r.score1) = (0.0, 1.0);
            }
            f.add(&r);
            rows.push(r);
        }
        let fitted = f.tally().report().expect("fits");
        let rated = crate::ratings::rate(&rows, &RateOptions::default()).expect("fits");
        assert_eq!(
            serde_json::to_string(&fitted.overall).expect("serialises"),
            serde_json::to_string(&rated.overall).expect("serialises")
        );
    }
}
