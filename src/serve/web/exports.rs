//! The exports of every finished game, streamed a page of rows at a time:
//! `/api/games.csv` (the games.csv of a league), `.jsonl` and `.pgn`.

use super::error::Shared;
use crate::serve::ladder::Ladder;
use crate::serve::store::GameFilter;
use axum::extract::State;
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
/// once). An error after the first chunk can only cut the body short: it
/// is logged.
fn streamed<F, Fut>(l: Arc<Ladder>, what: &'static str, produce: F) -> axum::body::Body
where
    F: FnOnce(Arc<Ladder>, tokio::sync::mpsc::Sender<Vec<u8>>) -> Fut,
    Fut: std::future::Future<Output = Result<(), String>> + Send + 'static,
{
    let (tx, rx) = tokio::sync::mpsc::channel::<Vec<u8>>(4);
    let work = produce(l, tx);
    tokio::spawn(async move {
        if let Err(e) = work.await {
            tracing::error!("the export {what} was cut short: {e}");
        }
    });
    axum::body::Body::from_stream(futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|chunk| (Ok::<_, std::convert::Infallible>(chunk), rx))
    }))
}

/// Writes one page of rows as the export's bytes.
type PageWriter<'a> = dyn FnMut(&[crate::results::GameRow]) -> Result<Vec<u8>, String> + Send + 'a;

/// The finished games, a page of the store at a time, in the order they
/// finished.
struct Pages<'a> {
    l: &'a Ladder,
    after: Option<crate::serve::store::DoneKey>,
}

impl<'a> Pages<'a> {
    fn new(l: &'a Ladder) -> Self {
        Pages { l, after: None }
    }

    /// The next page; `None` after the last.
    async fn next(&mut self) -> Result<Option<Vec<crate::serve::store::Done>>, String> {
        let page = self
            .l
            .db
            .done_page(self.after.as_ref(), EXPORT_PAGE, &GameFilter::default())
            .await
            .map_err(|e| e.to_string())?;
        self.after = page.last().map(|d| d.key.clone());
        Ok(self.after.is_some().then_some(page))
    }
}

/// Sends every finished game's row, a page of the store at a time, each
/// page written by `write`; stops when the reader went away.
async fn send_rows(
    l: &Ladder,
    tx: &tokio::sync::mpsc::Sender<Vec<u8>>,
    write: &mut PageWriter<'_>,
) -> Result<(), String> {
    let mut pages = Pages::new(l);
    while let Some(page) = pages.next().await? {
        let rows: Vec<crate::results::GameRow> = page
            .iter()
            .map(|d| {
                serde_json::from_str(&d.row_json)
                    .map_err(|e| format!("game {}: its row does not read: {e}", d.key.id))
            })
            .collect::<Result<_, _>>()?;
        if tx.send(write(&rows)?).await.is_err() {
            break;
        }
    }
    Ok(())
}

/// `GET /api/games.csv`: every finished game, as a league's games.csv
/// (same columns; the record columns empty: records are in the database).
async fn games_csv(State(l): Shared) -> impl IntoResponse {
    let body = streamed(l, "games.csv", |l, tx| async move {
        let mut header = true;
        send_rows(&l, &tx, &mut |rows| {
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
                .has_headers(std::mem::take(&mut header))
                .from_writer(Vec::new());
            for r in rows {
                w.serialize(r).map_err(|e| e.to_string())?;
            }
            w.into_inner().map_err(|e| e.to_string())
        })
        .await
    });
    ([(header::CONTENT_TYPE, "text/csv; charset=utf-8")], body)
}

/// `GET /api/games.jsonl`: every finished game's record, one after the
/// other, as `arena replay` reads them.
async fn games_jsonl(State(l): Shared) -> impl IntoResponse {
    let body = streamed(l, "games.jsonl", |l, tx| async move {
        let mut pages = Pages::new(&l);
        while let Some(page) = pages.next().await? {
            let mut out = Vec::new();
            for d in &page {
                if let Some(frame) = l.db.record(d.key.id).await.map_err(|e| e.to_string())? {
                    out.extend(crate::results::records::decode(&frame).map_err(|e| e.to_string())?);
                }
            }
            if tx.send(out).await.is_err() {
                break;
            }
        }
        Ok(())
    });
    ([(header::CONTENT_TYPE, "application/x-ndjson")], body)
}

/// `GET /api/games.pgn`: every finished 2-player game in PGN, as `arena
/// pgn` writes it.
async fn games_pgn(State(l): Shared) -> impl IntoResponse {
    let event = l.t.name.clone();
    let body = streamed(l, "games.pgn", |l, tx| async move {
        let mut w = crate::report::tables::PgnWriter::new(Vec::new(), &event);
        send_rows(&l, &tx, &mut |rows| {
            for r in rows {
                w.add(r).map_err(|e| e.to_string())?;
            }
            Ok(std::mem::take(w.out_mut()))
        })
        .await
    });
    ([(header::CONTENT_TYPE, "application/x-chess-pgn")], body)
}
