//! A worker's uploads (issue 49): the runner's `Store` hands each finished
//! game to the uploader's thread ([`Upload`]), so that play never waits
//! for the server; the uploader sends what has finished meanwhile in one
//! request (`POST /api/worker/games`), and each game's answer says what
//! became of it. A game the server cannot take now (unreachable, or its
//! store failing) waits in the spool on disk and is sent again every few
//! seconds, in batches too.

use super::hand::{Hand, Tally};
use super::http::{Call, Client};
use crate::league::folder::DoneSet;
use crate::results::records::Frame;
use crate::results::stderr::SeatStderr;
use crate::results::store::Store;
use crate::results::GameRow;
use crate::wire::worker::{Batch, BatchAnswer, GameUpload};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A finished game on its way: its game id and its upload (the spool's
/// file, as it has always been).
#[derive(serde::Serialize, serde::Deserialize)]
pub(super) struct Spooled {
    pub game_id: String,
    pub body: GameUpload,
}

/// The most games in one request: the server's most.
const BATCH_GAMES: usize = crate::wire::worker::BATCH_MOST;

/// The most bytes of records in one request (the server takes 64 MiB).
const BATCH_BYTES: usize = 16 << 20;

/// How long the first finished game of a batch waits for others.
const BATCH_WAIT: Duration = Duration::from_millis(100);

/// How often the spool is tried again while it holds games.
const SPOOL_EVERY: Duration = Duration::from_secs(2);

/// The uploader: sends the games `rx` brings, as many as have finished
/// meanwhile in one request, until every sender is gone; then sends the
/// spool a last time. Every line goes to `say`.
pub(super) fn uploader(
    client: &Client,
    spool: &Path,
    rx: mpsc::Receiver<Spooled>,
    hand: &Hand,
    tally: &Tally,
    say: &(dyn Fn(&str) + Sync),
) {
    let mut spool_tried = Instant::now();
    let mut spooled = !spooled_files(spool).is_empty();
    // The first finished game goes at once.
    let mut last_sent = Instant::now()
        .checked_sub(BATCH_WAIT)
        .unwrap_or_else(Instant::now);
    loop {
        match rx.recv_timeout(Duration::from_millis(500)) {
            Ok(first) => {
                let mut bytes = first.body.record.len();
                let mut batch = vec![first];
                let mut take = |batch: &mut Vec<Spooled>| {
                    while batch.len() < BATCH_GAMES && bytes < BATCH_BYTES {
                        match rx.try_recv() {
                            Ok(s) => {
                                bytes += s.body.record.len();
                                batch.push(s);
                            }
                            Err(_) => break,
                        }
                    }
                };
                take(&mut batch);
                // A moment for more to finish, asleep rather than woken by
                // each, unless a batch is there: at most one request every
                // BATCH_WAIT, or as fast as full batches come.
                let wait = BATCH_WAIT.saturating_sub(last_sent.elapsed());
                if batch.len() < BATCH_GAMES && !wait.is_zero() {
                    std::thread::sleep(wait);
                    take(&mut batch);
                }
                last_sent = Instant::now();
                spooled |= send_batch(client, spool, batch, hand, tally, say);
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        if spooled && spool_tried.elapsed() >= SPOOL_EVERY {
            spooled = send_spool(client, spool, tally, say);
            spool_tried = Instant::now();
        }
    }
    send_spool(client, spool, tally, say);
}

/// Sends `batch` fresh from play: each game counted or held is tallied,
/// each refused is said and discarded, and each the server cannot take
/// now goes to the spool (true when one did).
fn send_batch(
    client: &Client,
    spool: &Path,
    batch: Vec<Spooled>,
    hand: &Hand,
    tally: &Tally,
    say: &(dyn Fn(&str) + Sync),
) -> bool {
    let answers = post_batch(client, &batch);
    for s in &batch {
        if let Some(id) = crate::wire::worker::ladder_id(&s.game_id) {
            hand.sent(id as usize);
        }
    }
    let mut to_spool = false;
    match answers {
        Ok(answers) => {
            for (s, (status, msg)) in batch.into_iter().zip(answers) {
                match status {
                    201 => tally.uploaded.fetch_add(1, Ordering::Relaxed),
                    202 => tally.held.fetch_add(1, Ordering::Relaxed),
                    500.. => {
                        to_spool |= keep(spool, &s, &msg, tally, say);
                        continue;
                    }
                    _ => {
                        say(&format!(
                            "{}: discarded, the server refused it ({status}: {msg})",
                            s.game_id
                        ));
                        tally.refused.fetch_add(1, Ordering::Relaxed)
                    }
                };
            }
        }
        Err(Call::Refused(status, m)) => {
            for s in batch {
                say(&format!(
                    "{}: discarded, the server refused it ({status}: {m})",
                    s.game_id
                ));
                tally.refused.fetch_add(1, Ordering::Relaxed);
            }
        }
        Err(e @ (Call::Unreachable(_) | Call::Failing(..) | Call::Busy(..))) => {
            let why = e.to_string();
            for s in batch {
                to_spool |= keep(spool, &s, &why, tally, say);
            }
        }
    }
    to_spool
}

/// Puts `s` in the spool, saying why (true when it is there).
fn keep(spool: &Path, s: &Spooled, why: &str, tally: &Tally, say: &(dyn Fn(&str) + Sync)) -> bool {
    let path = spool.join(format!("{}.json", s.game_id));
    let written = serde_json::to_vec(s)
        .map_err(|e| e.to_string())
        .and_then(|b| {
            crate::league::folder::write_atomically(&path, &b).map_err(|e| e.to_string())
        });
    match written {
        Ok(()) => {
            tally.spooled.fetch_add(1, Ordering::Relaxed);
            say(&format!(
                "{}: kept in the spool ({}): {why}",
                s.game_id,
                path.display()
            ));
            true
        }
        Err(e) => {
            // Said once: the worker stops claiming (`Tally::spool_failed`)
            // and its summary counts the games lost.
            tally.lost.fetch_add(1, Ordering::Relaxed);
            let failure = format!("{}: {e}", spool.display());
            if tally.spool_failure.set(failure.clone()).is_ok() {
                say(&format!(
                    "{}: lost, it can be neither uploaded ({why}) nor spooled ({failure}): this worker claims no more games, finishes those being played, returns the others and stops; a game lost is played again by the server once its lease expires, and the summary counts them",
                    s.game_id,
                ));
            }
            false
        }
    }
}

/// Posts `batch`: each game's status and message, in order.
fn post_batch(client: &Client, batch: &[Spooled]) -> Result<Vec<(u16, String)>, Call> {
    let body = Batch {
        games: batch.iter().map(|s| s.body.clone()).collect(),
    };
    let bytes = client.post("/api/worker/games", &body)?;
    let answer: BatchAnswer = serde_json::from_slice(&bytes)
        .map_err(|e| Call::Unreachable(format!("the server's answer to a batch: {e}")))?;
    if answer.games.len() != batch.len() {
        return Err(Call::Unreachable(format!(
            "the server answered for {} games of a batch of {}",
            answer.games.len(),
            batch.len()
        )));
    }
    Ok(answer
        .games
        .into_iter()
        .map(|a| (a.status, a.error.or(a.held).unwrap_or_default()))
        .collect())
}

/// The spooled games' files, oldest name first.
pub(super) fn spooled_files(spool: &Path) -> Vec<PathBuf> {
    let Ok(dir) = std::fs::read_dir(spool) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = dir
        .flatten()
        .map(|e| e.path())
        .filter(|f| f.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

/// Sends the spooled games, in batches: each accepted or refused (a lease
/// gone) is removed, and said; the others wait for the next try. True
/// while games are left in the spool.
pub(super) fn send_spool(
    client: &Client,
    spool: &Path,
    tally: &Tally,
    say: &(dyn Fn(&str) + Sync),
) -> bool {
    let files = spooled_files(spool);
    let mut left = false;
    for chunk in files.chunks(BATCH_GAMES) {
        let mut batch = Vec::new();
        for f in chunk {
            match std::fs::read(f)
                .ok()
                .and_then(|b| serde_json::from_slice::<Spooled>(&b).ok())
            {
                Some(s) => batch.push((f, s)),
                None => say(&format!("{}: not a spooled game; left there", f.display())),
            }
        }
        let games: Vec<Spooled> = batch
            .iter()
            .map(|(_, s)| Spooled {
                game_id: s.game_id.clone(),
                body: s.body.clone(),
            })
            .collect();
        let answers = match post_batch(client, &games) {
            Ok(a) => a,
            Err(Call::Refused(status, m)) => vec![(status, m); games.len()],
            Err(Call::Unreachable(_) | Call::Failing(..) | Call::Busy(..)) => return true,
        };
        for ((f, s), (status, msg)) in batch.into_iter().zip(answers) {
            let counter = match status {
                201 => &tally.uploaded,
                202 => &tally.held,
                500.. => {
                    left = true;
                    continue;
                }
                _ => &tally.refused,
            };
            counter.fetch_add(1, Ordering::Relaxed);
            match status {
                201 | 202 => say(&format!("{}: uploaded from the spool", s.game_id)),
                _ => say(&format!(
                    "{}: discarded from the spool, the server refused it ({status}: {msg})",
                    s.game_id
                )),
            }
            let _ = std::fs::remove_file(f);
        }
    }
    left
}

/// The runner's `Store` on a worker: each finished game goes to the
/// uploader's thread (or, when it is gone, to the spool).
pub(super) struct Upload<'a> {
    pub tx: mpsc::SyncSender<Spooled>,
    pub spool: PathBuf,
    pub hand: &'a Hand,
    pub tally: &'a Tally,
    pub done: DoneSet,
    pub say: &'a (dyn Fn(&str) + Sync),
    /// The stderr offered for the next commit, by its game's index.
    pub stderr: Option<(usize, Vec<SeatStderr>)>,
}

/// `row`'s `started_at` moved by `offset_ms` onto the server's clock
/// (see `note_clock`); as it was when 0 or not a time.
pub(super) fn on_servers_clock(row: &mut GameRow, offset_ms: i64) {
    if offset_ms == 0 {
        return;
    }
    let Ok(at) = humantime::parse_rfc3339(&row.started_at) else {
        return;
    };
    let by = std::time::Duration::from_millis(offset_ms.unsigned_abs());
    let moved = match offset_ms > 0 {
        true => at.checked_add(by),
        false => at.checked_sub(by),
    };
    if let Some(t) = moved {
        row.started_at = humantime::format_rfc3339_millis(t).to_string();
    }
}

/// The error of the worker's store: a game that cannot be spooled.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SpoolError(String);

impl Store for Upload<'_> {
    type Error = SpoolError;

    fn commit(
        &mut self,
        record: &Frame,
        row: &mut GameRow,
        index: usize,
    ) -> Result<(), SpoolError> {
        let Some((game_id, lease)) = self.hand.finished(index) else {
            return Err(SpoolError(format!("game {index} was not claimed")));
        };
        let text = crate::results::records::decode(record.bytes())
            .map_err(|e| SpoolError(format!("the record of {game_id}: {e}")))?;
        on_servers_clock(row, self.tally.clock_offset_ms.load(Ordering::Relaxed));
        let body = GameUpload {
            lease,
            record: String::from_utf8_lossy(&text).into_owned(),
            row: row.clone(),
            stderr: match self.stderr.take() {
                Some((i, seats)) if i == index => seats,
                _ => Vec::new(),
            },
        };
        self.done.insert(index);
        self.tally.played.fetch_add(1, Ordering::Relaxed);
        if let Err(mpsc::SendError(s)) = self.tx.send(Spooled { game_id, body }) {
            self.hand.sent(index);
            let why = "the uploader has stopped";
            if !keep(&self.spool, &s, why, self.tally, self.say) {
                return Err(SpoolError(format!("{}: cannot be spooled", s.game_id)));
            }
        }
        Ok(())
    }

    fn offer_stderr(&mut self, index: usize, stderr: Vec<SeatStderr>) {
        self.stderr = Some((index, stderr));
    }

    fn sync(&mut self) -> Result<(), SpoolError> {
        Ok(())
    }

    fn done(&self) -> &DoneSet {
        &self.done
    }

    fn record(&self, game_id: &str) -> Result<String, SpoolError> {
        Err(SpoolError(format!(
            "a worker keeps no records: {game_id} is on the server"
        )))
    }
}
