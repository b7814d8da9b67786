//! The games browser: `GET /games` (a page of finished games, filtered
//! and paged) and the filters it shares with `/api/games` and the exports
//! (`/api/games.csv`, `.jsonl`, `.pgn`): a bot or one version, an
//! opponent, a variant (as the ladder file names it, `tricala3`, or as
//! the standings do, `tricala-3p`), the bot's result, the end's reason and who
//! forfeited. A filter is honoured or refused: an unknown bot, version or
//! game is 404, any other value it cannot take a 400 that names those it
//! can.

use super::error::{ApiError, ApiResult, Shared};
use crate::results::GameRow;
use crate::serve::ladder::Ladder;
use crate::serve::store::browse::{Order, SeatFilter};
use crate::serve::store::{DbError, DoneKey, Version};
use axum::extract::Query;
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The routes of this resource.
pub fn router() -> Router<Arc<Ladder>> {
    Router::new().route("/games", get(games_page))
}

/// The parameters the games' listings take.
pub const PARAMETERS: [&str; 11] = [
    "bot", "version", "opponent", "variant", "test", "result", "reason", "forfeit", "order",
    "after", "limit",
];

/// Every reason a game can end for, as the rows write it: the rules' and
/// the forfeits' (`results::csvio`, which the referee's tests hold to
/// [`crate::engine::Reason`] and [`crate::referee::ForfeitKind`]), and
/// `error`.
pub static REASONS: std::sync::LazyLock<Vec<&'static str>> = std::sync::LazyLock::new(|| {
    use crate::results::csvio::{FORFEIT_REASONS, RULE_REASONS};
    RULE_REASONS
        .iter()
        .chain(FORFEIT_REASONS)
        .copied()
        .chain([crate::referee::EndReason::Unplayable.name()])
        .collect()
});

/// Rows a request reads from the store at most while its row filters
/// (result, reason, forfeit) keep few: past them it answers with what it
/// found and where to go on (`next`).
const SCAN_MOST: usize = 50_000;

/// The bot's result in a game: its seat's score against 1/2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Win,
    Draw,
    Loss,
}

/// Who forfeited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Forfeit {
    /// Anyone: the game ended in a forfeit.
    Any,
    /// Nobody.
    None,
    /// The bot asked for.
    Bot,
    /// A seat other than the bot's.
    Opponent,
}

/// A listing's filters, checked against the ladder.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// What the store narrows by.
    pub seats: SeatFilter,
    /// The players (`BOT@N`) of `bot`, for its result and forfeits.
    players: Vec<String>,
    /// The players of `opponent`: with them, a result is the bot's
    /// against that opponent's seat.
    opponents: Vec<String>,
    result: Option<Outcome>,
    reason: Option<String>,
    forfeit: Option<Forfeit>,
    pub order: Order,
    /// Past this game, in the listing's order.
    pub after: Option<DoneKey>,
    pub limit: usize,
}

/// A page of a listing: its games and, when there may be more, the game
/// to go on after.
pub struct Listing {
    pub games: Vec<GameRow>,
    pub next: Option<DoneKey>,
}

fn bad(message: String) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, message)
}

/// One of `words` (`value` of parameter `name`), or a 400 naming them.
fn one_of<T: Copy>(name: &str, value: &str, words: &[(&str, T)]) -> ApiResult<T> {
    words
        .iter()
        .find(|(w, _)| *w == value)
        .map(|(_, t)| *t)
        .ok_or_else(|| {
            let all: Vec<&str> = words.iter().map(|(w, _)| *w).collect();
            bad(format!(
                "`{name}` cannot be `{value}`: it is one of {}",
                all.join(", ")
            ))
        })
}

/// The versions `name` names: every version of bot `name`, or the one
/// version `BOT@N` (or `N` of `version`); 404 for a bot or version the
/// ladder does not have.
async fn versions_named(
    l: &Ladder,
    what: &str,
    name: &str,
    number: Option<&str>,
) -> ApiResult<Vec<Version>> {
    let (bot, number) = match (name.rsplit_once('@'), number) {
        (Some(_), Some(_)) => {
            return Err(bad(format!(
                "`{what}` names a version already (`{name}`): leave `version` out"
            )))
        }
        (Some((b, n)), None) => (b, Some(n)),
        (None, n) => (name, n),
    };
    let versions = l.db.versions_of(bot).await.map_err(ApiError::internal)?;
    if versions.is_empty() {
        return Err(ApiError::not_found(format!("no bot named `{bot}`")));
    }
    let Some(n) = number else {
        return Ok(versions);
    };
    let n: i64 = n.parse().map_err(|_| {
        bad(format!(
            "`{n}` is not a version number: give a whole number, as in `{bot}@1`"
        ))
    })?;
    let numbers: Vec<String> = versions.iter().map(|v| v.number.to_string()).collect();
    let one: Vec<Version> = versions.into_iter().filter(|v| v.number == n).collect();
    if one.is_empty() {
        return Err(ApiError::not_found(format!(
            "bot `{bot}` has no version {n}: it has {}",
            numbers.join(", ")
        )));
    }
    Ok(one)
}

/// The parameters of `query` by name, each one of [`PARAMETERS`] and
/// given once; the empty ones (a form's empty fields) left out.
fn parameters(query: &[(String, String)]) -> ApiResult<BTreeMap<&str, &str>> {
    let mut given = BTreeMap::new();
    for (k, v) in query {
        if !PARAMETERS.contains(&k.as_str()) {
            return Err(bad(format!(
                "unknown parameter `{k}`: the games' filters are {}",
                PARAMETERS.join(", ")
            )));
        }
        if v.is_empty() {
            continue;
        }
        if given.insert(k.as_str(), v.as_str()).is_some() {
            return Err(bad(format!("`{k}` is given twice: give it once")));
        }
    }
    Ok(given)
}

/// The filters of `query` for a listing in `order` of `limit` games by
/// default (at most 10,000).
pub async fn filter_of(
    l: &Ladder,
    query: &[(String, String)],
    order: Order,
    limit: usize,
) -> ApiResult<Filter> {
    let given = parameters(query)?;
    let mut f = Filter {
        order,
        limit,
        ..Filter::default()
    };
    if let Some(v) = given.get("version") {
        if !given.contains_key("bot") {
            return Err(bad(format!(
                "`version={v}` needs `bot`: the version of which bot?"
            )));
        }
    }
    if let Some(bot) = given.get("bot") {
        let versions = versions_named(l, "bot", bot, given.get("version").copied()).await?;
        f.players = versions.iter().map(Version::player).collect();
        f.seats.versions = Some(versions.iter().map(|v| v.id).collect());
    }
    if let Some(o) = given.get("opponent") {
        let versions = versions_named(l, "opponent", o, None).await?;
        f.opponents = versions.iter().map(Version::player).collect();
        f.seats.against = Some(versions.iter().map(|v| v.id).collect());
    }
    if let Some(v) = given.get("variant") {
        f.seats.variants = Some(super::variants::named(l, v)?);
    }
    if let Some(t) = given.get("test") {
        // The games a test between versions queued, all of them: its
        // verdict counts those up to the game that made it.
        let id = t.parse::<i64>().ok().filter(|&id| id > 0).ok_or_else(|| {
            bad(format!(
                "`test` cannot be `{t}`: give a test's number (`/api/tests` lists them)"
            ))
        })?;
        l.db.version_test(id)
            .await
            .map_err(ApiError::internal)?
            .ok_or_else(|| ApiError::not_found(format!("no test {id}")))?;
        f.seats.test = Some(id);
    }
    row_filters(&given, &mut f)?;
    if let Some(o) = given.get("order") {
        f.order = one_of(
            "order",
            o,
            &[("oldest", Order::Oldest), ("newest", Order::Newest)],
        )?;
    }
    if let Some(n) = given.get("limit") {
        f.limit = n
            .parse()
            .ok()
            .filter(|n| (1..=10_000).contains(n))
            .ok_or_else(|| {
                bad(format!(
                    "`limit` cannot be `{n}`: give a whole number from 1 to 10000"
                ))
            })?;
    }
    if let Some(a) = given.get("after") {
        let id = a
            .parse::<i64>()
            .ok()
            .or_else(|| crate::wire::worker::ladder_id(a))
            .ok_or_else(|| {
                bad(format!(
                    "`after` cannot be `{a}`: give a game's id (`123` or `game-123`)"
                ))
            })?;
        f.after = Some(
            l.db.done_key(id)
                .await
                .map_err(ApiError::internal)?
                .ok_or_else(|| {
                    ApiError::not_found(format!("no finished game `{a}` to list after"))
                })?,
        );
    }
    Ok(f)
}

/// The filters of `given` that read the rows: `result`, `reason` and
/// `forfeit`.
fn row_filters(given: &BTreeMap<&str, &str>, f: &mut Filter) -> ApiResult<()> {
    let needs_bot = |what: &str| -> ApiResult<()> {
        match given.contains_key("bot") {
            true => Ok(()),
            false => Err(bad(format!("`{what}` needs `bot`: whose {what}?"))),
        }
    };
    if let Some(r) = given.get("result") {
        needs_bot("result")?;
        let words = [
            ("win", Outcome::Win),
            ("draw", Outcome::Draw),
            ("loss", Outcome::Loss),
        ];
        f.result = Some(one_of("result", r, &words)?);
    }
    if let Some(r) = given.get("reason") {
        if !REASONS.contains(r) {
            return Err(bad(format!(
                "`reason` cannot be `{r}`: a game ends for one of {}",
                REASONS.join(", ")
            )));
        }
        f.reason = Some(r.to_string());
    }
    if let Some(x) = given.get("forfeit") {
        let words = [
            ("any", Forfeit::Any),
            ("none", Forfeit::None),
            ("bot", Forfeit::Bot),
            ("opponent", Forfeit::Opponent),
        ];
        let x = one_of("forfeit", x, &words)?;
        if matches!(x, Forfeit::Bot | Forfeit::Opponent) {
            needs_bot("forfeit")?;
        }
        f.forfeit = Some(x);
    }
    Ok(())
}

impl Filter {
    /// Whether the filter looks into the rows (not only at the seats).
    fn reads_rows(&self) -> bool {
        self.result.is_some() || self.reason.is_some() || self.forfeit.is_some()
    }

    /// Whether `row` passes the row's own filters.
    pub fn keeps(&self, row: &GameRow) -> bool {
        let seats = row.seats();
        let mine = |seat: usize| {
            seats
                .get(seat)
                .is_some_and(|s| self.players.iter().any(|p| p == s))
        };
        if let Some(r) = &self.reason {
            if row.reason != *r {
                return false;
            }
        }
        if let Some(want) = self.result {
            let scores = row.scores();
            let theirs = |seat: usize| {
                seats
                    .get(seat)
                    .is_some_and(|s| self.opponents.iter().any(|p| p == s))
            };
            // Against 1/2, or with `opponent`, against that opponent's
            // score: in a 3-player game the bot and the opponent who both
            // lost to the third drew with each other.
            let outcome = |mine: f64, against: f64| match mine.partial_cmp(&against) {
                Some(std::cmp::Ordering::Greater) => Outcome::Win,
                Some(std::cmp::Ordering::Less) => Outcome::Loss,
                _ => Outcome::Draw,
            };
            let got =
                (0..seats.len())
                    .filter(|s| mine(*s))
                    .any(|s| match self.opponents.is_empty() {
                        true => want == outcome(scores[s], 0.5),
                        false => (0..seats.len())
                            .filter(|t| *t != s && theirs(*t))
                            .any(|t| want == outcome(scores[s], scores[t])),
                    });
            if !got {
                return false;
            }
        }
        match (self.forfeit, row.offender) {
            (None, _) => true,
            (Some(Forfeit::Any), o) => o.is_some(),
            (Some(Forfeit::None), o) => o.is_none(),
            (Some(Forfeit::Bot), Some(o)) => mine(o as usize),
            (Some(Forfeit::Opponent), Some(o)) => !mine(o as usize),
            (Some(_), None) => false,
        }
    }
}

/// [`list`] for a request: one that reads rows ([`Filter::reads_rows`])
/// holds a place of `[ladder] exports_at_once` (503 with `Retry-After`
/// past them), as an export does.
pub async fn listed(l: &Ladder, f: &Filter) -> ApiResult<Listing> {
    let _slot = match f.reads_rows() {
        true => Some(l.gates.listings.enter(0)?),
        false => None,
    };
    list(l, f, None).await.map_err(ApiError::internal)
}

/// A page of the games `f` keeps, past `f.after` (or `after`, which
/// overrides it).
pub async fn list(l: &Ladder, f: &Filter, after: Option<DoneKey>) -> Result<Listing, DbError> {
    let mut from = after.or_else(|| f.after.clone());
    let page = if f.reads_rows() {
        f.limit.clamp(500, 5_000)
    } else {
        f.limit
    };
    let mut games = Vec::new();
    let mut scanned = 0;
    loop {
        let done =
            l.db.games_page(from.as_ref(), f.order, page, &f.seats)
                .await?;
        scanned += done.len();
        let full = done.len() == page;
        for d in done {
            from = Some(d.key.clone());
            let key = d.key;
            let Ok(row) = serde_json::from_str::<GameRow>(&d.row_json) else {
                tracing::error!("finished game {} has a row that does not read", key.id);
                continue;
            };
            if f.keeps(&row) {
                games.push(row);
                if games.len() == f.limit {
                    return Ok(Listing {
                        games,
                        next: Some(key),
                    });
                }
            }
        }
        if !full {
            return Ok(Listing { games, next: None });
        }
        if scanned >= SCAN_MOST {
            return Ok(Listing { games, next: from });
        }
    }
}

/// What the games browser shows: the listing, the filters as asked and
/// what they can be.
#[derive(serde::Serialize)]
struct BrowsePage {
    games: Vec<GameRow>,
    /// The query of the next page, when there is one.
    next: Option<String>,
    /// The filters as asked (parameter, value).
    asked: std::collections::BTreeMap<String, String>,
    /// Whether any filter is set.
    filtered: bool,
    bots: Vec<String>,
    variants: Vec<String>,
    reasons: &'static [&'static str],
    /// Why the filters were refused, if they were.
    error: Option<String>,
}

/// Games the browser lists a page.
const BROWSE_PAGE: usize = 50;

/// `GET /games?bot=&version=&opponent=&variant=&result=&reason=&forfeit=&after=`:
/// the finished games, the latest first, a page of 50 at a time; a
/// refused filter is said on the page, with its status.
async fn games_page(
    axum::extract::State(l): Shared,
    Query(query): Query<Vec<(String, String)>>,
) -> Response {
    let asked: std::collections::BTreeMap<String, String> = query
        .iter()
        .filter(|(k, v)| !v.is_empty() && k != "after")
        .cloned()
        .collect();
    let bots = match l.db.versions(None).await {
        Ok(vs) => {
            let mut names: Vec<String> = vs.into_iter().map(|v| v.bot).collect();
            names.dedup();
            names.sort();
            names.dedup();
            names
        }
        Err(e) => return super::pages::page_of_error(ApiError::internal(e)),
    };
    let mut page = BrowsePage {
        games: Vec::new(),
        next: None,
        filtered: asked.keys().any(|k| k != "order" && k != "limit"),
        asked,
        bots,
        variants: l.t.variants.iter().map(|v| v.label()).collect(),
        reasons: REASONS.as_slice(),
        error: None,
    };
    let mut status = StatusCode::OK;
    match filter_of(&l, &query, Order::Newest, BROWSE_PAGE).await {
        Ok(f) => match listed(&l, &f).await {
            Ok(listing) => {
                page.games = listing.games;
                page.next = listing.next.map(|k| {
                    let mut q: Vec<(&str, &str)> = page
                        .asked
                        .iter()
                        .map(|(k, v)| (k.as_str(), v.as_str()))
                        .collect();
                    let id = k.id.to_string();
                    q.push(("after", &id));
                    query_text(&q)
                });
            }
            Err(e) => return super::pages::page_of_error(e),
        },
        Err(e) => {
            status = e.status;
            page.error = Some(e.message);
        }
    }
    let mut r = super::pages::page("games.html", &l, page);
    if r.status() == StatusCode::OK {
        *r.status_mut() = status;
    }
    r
}

/// `k=v&...`, each part percent-encoded.
fn query_text(q: &[(&str, &str)]) -> String {
    q.iter()
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// `s` percent-encoded for a query (all but unreserved characters).
fn encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(seats: [&str; 2], scores: [f64; 2], reason: &str, offender: Option<u8>) -> GameRow {
        GameRow {
            players: 2,
            seat0: seats[0].into(),
            seat1: seats[1].into(),
            score0: scores[0],
            score1: scores[1],
            reason: reason.into(),
            offender,
            ..GameRow::default()
        }
    }

    #[test]
    fn a_row_is_kept_by_the_bots_result_the_reason_and_who_forfeited() {
        let f = |result, reason: Option<&str>, forfeit| Filter {
            players: vec!["a@1".into(), "a@2".into()],
            result,
            reason: reason.map(str::to_string),
            forfeit,
            ..Filter::default()
        };
        let won = row(["b@1", "a@2"], [0.0, 1.0], "store", None);
        let drew = row(["a@1", "b@1"], [0.5, 0.5], "max_plies", None);
        let faulted = row(["a@1", "b@1"], [0.0, 1.0], "timeout", Some(0));
        let theirs = row(["a@1", "b@1"], [1.0, 0.0], "crash", Some(1));
        let keeps = |f: &Filter| -> Vec<bool> {
            [&won, &drew, &faulted, &theirs]
                .map(|r| f.keeps(r))
                .to_vec()
        };
        assert_eq!(
            keeps(&f(Some(Outcome::Win), None, None)),
            [true, false, false, true]
        );
        assert_eq!(
            keeps(&f(Some(Outcome::Draw), None, None)),
            [false, true, false, false]
        );
        assert_eq!(
            keeps(&f(Some(Outcome::Loss), None, None)),
            [false, false, true, false]
        );
        assert_eq!(
            keeps(&f(None, Some("timeout"), None)),
            [false, false, true, false]
        );
        assert_eq!(
            keeps(&f(None, None, Some(Forfeit::Any))),
            [false, false, true, true]
        );
        assert_eq!(
            keeps(&f(None, None, Some(Forfeit::None))),
            [true, true, false, false]
        );
        assert_eq!(
            keeps(&f(None, None, Some(Forfeit::Bot))),
            [false, false, true, false]
        );
        assert_eq!(
            keeps(&f(None, None, Some(Forfeit::Opponent))),
            [false, false, false, true]
        );
        assert_eq!(
            keeps(&f(Some(Outcome::Loss), Some("timeout"), Some(Forfeit::Bot))),
            [false, false, true, false]
        );
    }

    #[test]
    fn with_an_opponent_a_result_is_the_bots_against_that_opponent() {
        let three = |seats: [&str; 3], scores: [f64; 3]| GameRow {
            players: 3,
            seat0: seats[0].into(),
            seat1: seats[1].into(),
            seat2: seats[2].into(),
            score0: scores[0],
            score1: scores[1],
            score2: Some(scores[2]),
            reason: "store".into(),
            ..GameRow::default()
        };
        // a and b both lost to c: against b, a drew; against c, a lost.
        let both_lost = three(["a@1", "b@1", "c@1"], [0.25, 0.25, 1.0]);
        // b forfeited: a and c drew with each other and beat b.
        let b_forfeited = three(["a@1", "b@1", "c@1"], [0.75, 0.0, 0.75]);
        let f = |result, opponent: &str| Filter {
            players: vec!["a@1".into()],
            opponents: vec![opponent.into()],
            result: Some(result),
            ..Filter::default()
        };
        let keeps = |f: &Filter| [&both_lost, &b_forfeited].map(|r| f.keeps(r)).to_vec();
        assert_eq!(keeps(&f(Outcome::Loss, "b@1")), [false, false]);
        assert_eq!(keeps(&f(Outcome::Draw, "b@1")), [true, false]);
        assert_eq!(keeps(&f(Outcome::Win, "b@1")), [false, true]);
        assert_eq!(keeps(&f(Outcome::Loss, "c@1")), [true, false]);
        assert_eq!(keeps(&f(Outcome::Draw, "c@1")), [false, true]);
        // Without an opponent, against 1/2, as before.
        let alone = |result| Filter {
            players: vec!["a@1".into()],
            result: Some(result),
            ..Filter::default()
        };
        assert_eq!(keeps(&alone(Outcome::Loss)), [true, false]);
        assert_eq!(keeps(&alone(Outcome::Win)), [false, true]);
    }

    #[test]
    fn a_query_is_percent_encoded() {
        assert_eq!(
            query_text(&[("bot", "a b@1"), ("after", "12")]),
            "bot=a%20b%401&after=12"
        );
    }
}
