//! Where finished games go, and where a resume reads what is done: the
//! seam between the game pipeline and its storage. A league's results
//! folder (`league::folder::ResultsDir`) is one store; a ladder service's
//! database would be another.

use super::records::Frame;
use super::stderr::SeatStderr;
use super::GameRow;

/// A store of finished games, written by one writer in the order games
/// finish.
pub trait Store {
    type Error: std::error::Error + Send + Sync + 'static;

    /// Makes a finished game part of the results: its record (compressed,
    /// `records::encode`), then its row, completed with where the record
    /// went (a results folder's log and offset; a database needs none). A
    /// game is done once this returns, and only then.
    fn commit(
        &mut self,
        record: &Frame,
        row: &mut GameRow,
        index: usize,
    ) -> Result<(), Self::Error>;

    /// The stderr of the next game to be committed (`index`), offered
    /// just before its [`Store::commit`]: one entry per seat whose stderr
    /// was kept and wrote something. A store that keeps it (the ladder's)
    /// holds it until that commit; the default drops it.
    fn offer_stderr(&mut self, _index: usize, _stderr: Vec<SeatStderr>) {}

    /// Puts what is committed on stable storage.
    fn sync(&mut self) -> Result<(), Self::Error>;

    /// The games done, by their place in the schedule.
    fn done(&self) -> &DoneSet;

    /// The record of `game_id` (its JSON lines), as committed.
    fn record(&self, game_id: &str) -> Result<String, Self::Error>;
}

/// A set of games by their index in the schedule, one bit each: the done
/// games of a league of a million games in 125 KB.
#[derive(Clone, Debug, Default)]
pub struct DoneSet {
    pub(crate) bits: Vec<u64>,
    len: usize,
}

impl DoneSet {
    /// Adds game `index`; false if it was there.
    pub fn insert(&mut self, index: usize) -> bool {
        let (w, b) = (index / 64, 1u64 << (index % 64));
        if w >= self.bits.len() {
            self.bits.resize(w + 1, 0);
        }
        let new = self.bits[w] & b == 0;
        self.bits[w] |= b;
        self.len += usize::from(new);
        new
    }

    pub fn remove(&mut self, index: usize) {
        let (w, b) = (index / 64, 1u64 << (index % 64));
        if let Some(word) = self.bits.get_mut(w) {
            if *word & b != 0 {
                *word &= !b;
                self.len -= 1;
            }
        }
    }

    pub fn contains(&self, index: usize) -> bool {
        self.bits
            .get(index / 64)
            .is_some_and(|w| w & (1 << (index % 64)) != 0)
    }

    /// How many games are in the set.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}
