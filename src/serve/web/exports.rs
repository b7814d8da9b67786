//! The exports of every finished game, streamed a page of rows at a time:
//! `/api/games.csv` (the games.csv of a league), `.jsonl` and `.pgn`;
//! each takes `/api/games`'s filters ([`browse`]).

use super::browse::{self, Filter};
use super::error::{ApiResult, Shared};
use crate::serve::ladder::Ladder;
use crate::serve::store::browse::Order;
use axum::extract::{Query, State};
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use std::sync::Arc;

/// The routes of this resource.
pub fn router() -> Router<Arc<Ladder>> {
    Router::new()
        .route("/api/games.csv", get(games_csv))
        .route("/api/games.jsonl", get(games_jsonl))
        .route("/api/games.pgn", get(games_pgn))
}

/// Rows a page of an export holds.
const EXPORT_PAGE: usize = 2_000;

/// A response body fed by `produce`, which sends its chunks as it makes
/// them (the exports: a page of the store at a time, never every row at
/// once), holding one of the exports' slots until it is done (at most
/// `[ladder] exports_at_once` at once: each holds pages in memory and
/// reads the store for as long as its reader takes, and a reader may
/// take its time). An error after the first chunk can only cut the body
/// short: it is logged.
fn streamed<F, Fut>(l: Arc<Ladder>, what: &'static str, produce: F) -> ApiResult<axum::body::Body>
where
    F: FnOnce(Arc<Ladder>, tokio::sync::mpsc::Sender<Vec<u8>>) -> Fut,
    Fut: std::future::Future<Output = Result<(), String>> + Send + 'static,
{
    let slot = l.gates.exports.enter(0)?;
    let (tx, rx) = tokio::sync::mpsc::channel::<Vec<u8>>(4);
    let work = produce(l, tx);
    tokio::spawn(async move {
        let _slot = slot;
        if let Err(e) = work.await {
            tracing::error!("the export {what} was cut short: {e}");
        }
    });
    Ok(axum::body::Body::from_stream(futures_util::stream::unfold(
        rx,
        |mut rx| async move {
            rx.recv()
                .await
                .map(|chunk| (Ok::<_, std::convert::Infallible>(chunk), rx))
        },
    )))
}

/// Writes one page of rows as the export's bytes.
type PageWriter<'a> = dyn FnMut(&[crate::results::GameRow]) -> Result<Vec<u8>, String> + Send + 'a;

/// The finished games that pass a filter, a page of the store at a time,
/// in the filter's order (the order they finished by default), up to its
/// `limit` when one was asked.
struct Pages<'a> {
    l: &'a Ladder,
    only: Filter,
    after: Option<crate::serve::store::DoneKey>,
    /// Rows still to send.
    left: usize,
    done: bool,
}

impl<'a> Pages<'a> {
    fn new(l: &'a Ladder, mut only: Filter) -> Self {
        let left = only.limit;
        only.limit = EXPORT_PAGE.min(left);
        Pages {
            l,
            after: only.after.clone(),
            only,
            left,
            done: false,
        }
    }

    /// The next page; `None` after the last.
    async fn next(&mut self) -> Result<Option<Vec<crate::results::GameRow>>, String> {
        while !self.done && self.left > 0 {
            self.only.limit = EXPORT_PAGE.min(self.left);
            let page = browse::list(self.l, &self.only, self.after.clone())
                .await
                .map_err(|e| e.to_string())?;
            self.done = page.next.is_none();
            self.after = page.next;
            self.left -= page.games.len();
            if !page.games.is_empty() {
                return Ok(Some(page.games));
            }
        }
        Ok(None)
    }
}

/// The filters of an export's query ([`browse`]'s), every row by
/// default.
async fn export_filter(l: &Ladder, query: &[(String, String)]) -> ApiResult<Filter> {
    browse::filter_of(l, query, Order::Oldest, usize::MAX).await
}

/// Sends every finished game's row, a page of the store at a time, each
/// page written by `write`; stops when the reader went away.
async fn send_rows(
    l: &Ladder,
    only: Filter,
    tx: &tokio::sync::mpsc::Sender<Vec<u8>>,
    write: &mut PageWriter<'_>,
) -> Result<(), String> {
    let mut pages = Pages::new(l, only);
    while let Some(rows) = pages.next().await? {
        if tx.send(write(&rows)?).await.is_err() {
            break;
        }
    }
    Ok(())
}

/// `GET /api/games.csv`: every finished game (or those `/api/games`'s
/// filters keep), as a league's games.csv (same columns; the record
/// columns empty: records are in the database).
async fn games_csv(
    State(l): Shared,
    Query(q): Query<Vec<(String, String)>>,
) -> ApiResult<impl IntoResponse> {
    let only = export_filter(&l, &q).await?;
    let body = streamed(l, "games.csv", |l, tx| async move {
        // The header first, even of an export with no row: a reader
        // (pandas, `arena rate`) takes an empty file for no table at all.
        let header = crate::results::csvio::all_columns()
            .collect::<Vec<_>>()
            .join(",")
            + "\n";
        if tx.send(header.into_bytes()).await.is_err() {
            return Ok(());
        }
        send_rows(&l, only, &tx, &mut |rows| {
            // A row that would not read back (a store written before its
            // fields were checked) is left out, as from the standings.
            let rows: Vec<_> = rows
                .iter()
                .filter(|r| crate::results::csvio::rateable(r).is_ok())
                .collect();
            if rows.is_empty() {
                return Ok(Vec::new());
            }
            let mut w = csv::WriterBuilder::new()
                .has_headers(false)
                .from_writer(Vec::new());
            for r in rows {
                w.serialize(r).map_err(|e| e.to_string())?;
            }
            w.into_inner().map_err(|e| e.to_string())
        })
        .await
    })?;
    Ok(([(header::CONTENT_TYPE, "text/csv; charset=utf-8")], body))
}

/// `GET /api/games.jsonl`: every finished game's record (or those the
/// filters keep), one after the other, as `arena replay` reads them.
async fn games_jsonl(
    State(l): Shared,
    Query(q): Query<Vec<(String, String)>>,
) -> ApiResult<impl IntoResponse> {
    let only = export_filter(&l, &q).await?;
    let body = streamed(l, "games.jsonl", |l, tx| async move {
        let mut pages = Pages::new(&l, only);
        while let Some(page) = pages.next().await? {
            let mut out = Vec::new();
            for row in &page {
                let Some(id) = crate::wire::worker::ladder_id(&row.game_id) else {
                    continue;
                };
                if let Some(frame) = l.db.record(id).await.map_err(|e| e.to_string())? {
                    out.extend(crate::results::records::decode(&frame).map_err(|e| e.to_string())?);
                }
            }
            if tx.send(out).await.is_err() {
                break;
            }
        }
        Ok(())
    })?;
    Ok(([(header::CONTENT_TYPE, "application/x-ndjson")], body))
}

/// `GET /api/games.pgn`: every finished 2-player game (or those the
/// filters keep) in PGN, as `arena pgn` writes it.
async fn games_pgn(
    State(l): Shared,
    Query(q): Query<Vec<(String, String)>>,
) -> ApiResult<impl IntoResponse> {
    let only = export_filter(&l, &q).await?;
    let event = l.t.name.clone();
    let body = streamed(l, "games.pgn", |l, tx| async move {
        let mut w = crate::report::tables::PgnWriter::new(Vec::new(), &event);
        send_rows(&l, only, &tx, &mut |rows| {
            for r in rows {
                w.add(r).map_err(|e| e.to_string())?;
            }
            Ok(std::mem::take(w.out_mut()))
        })
        .await
    })?;
    Ok(([(header::CONTENT_TYPE, "application/x-chess-pgn")], body))
}
