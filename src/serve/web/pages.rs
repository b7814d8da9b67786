//! What the service shows: the JSON of the API (`/api/standings`,
//! `/api/bots`, `/api/bots/NAME`, `/api/games/ID`) and the pages built
//! from the same values with minijinja templates (`templates/`, HTML
//! escaped everywhere). A page holds no data the API lacks.

use super::error::{ApiError, ApiResult};
use crate::report::html::{one_game, OneGame, REPORT_CSS, REPORT_JS};
use crate::results::GameRow;
use crate::serve::ladder::Ladder;
use crate::serve::store::{DbError, Version, VersionStatus};
use crate::wire::worker::ladder_id;
use axum::extract::{Path, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use serde_json::{json, Value};
use std::sync::Arc;

/// The pages' routes, and their script and style sheet.
pub fn router() -> Router<Arc<Ladder>> {
    Router::new()
        .route("/", get(standings_page))
        .route("/bots/{name}", get(bot_page))
        .route("/upload", get(upload_page))
        .route("/games/{id}", get(game_page))
        .route("/games/{id}/index.js", get(game_index_js))
        .route("/games/{id}/chunk.js", get(game_chunk_js))
        .route("/assets/report.js", get(report_js))
        .route("/assets/report.css", get(report_css))
}

// The API's bodies. Their fields are in alphabetical order: the order
// the API has always sent them in (built as JSON maps, which sort keys).

/// A version's rating in the last fit's overall table: its Elo and
/// interval, games and score once rated; its games alone before.
#[derive(Clone, Debug, serde::Serialize)]
pub struct RatingBody {
    pub elo: Option<f64>,
    pub games: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub high: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub low: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
}

/// A bot's latest version, in `/api/bots`.
#[derive(Clone, Debug, serde::Serialize)]
pub struct LatestBody {
    pub detail: String,
    pub status: VersionStatus,
    pub version: i64,
}

/// A bot in `/api/bots`: its latest version, the version that plays and
/// its rating.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BotSummary {
    pub bot: String,
    pub entered: Option<String>,
    pub latest: LatestBody,
    pub owner: String,
    pub rating: Option<RatingBody>,
}

/// `/api/bots`.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BotsBody {
    pub bots: Vec<BotSummary>,
}

/// A version in `/api/bots/NAME`, with its check's report and its rating
/// history (`[games, elo, low, high]` at each fit).
#[derive(Clone, Debug, serde::Serialize)]
pub struct VersionBody {
    pub bytes: i64,
    pub created_at: String,
    pub detail: String,
    pub history: Vec<[f64; 4]>,
    pub player: String,
    pub rating: Option<RatingBody>,
    pub report: String,
    pub sha256: String,
    pub status: VersionStatus,
    pub updated_at: String,
    pub version: i64,
}

/// A bot's results against one opponent (all variants), in
/// `/api/bots/NAME`.
#[derive(Clone, Debug, serde::Serialize)]
pub struct OpponentBody {
    pub draws: u64,
    pub losses: u64,
    pub opponent: String,
    pub player: String,
    pub results: u64,
    pub score: f64,
    pub wins: u64,
}

/// `/api/bots/NAME`.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BotBody {
    pub bot: String,
    pub faults: std::collections::BTreeMap<String, u64>,
    pub opponents: Vec<OpponentBody>,
    pub owner: String,
    pub recent: Vec<GameRow>,
    pub versions: Vec<VersionBody>,
}

/// `/api/standings`: the last complete fit's table of one variant (or
/// `all`); before the first fit, an empty table and a note, the fit's
/// fields null (there, as docs/ladder.md lists them, not left out).
#[derive(Clone, Debug, serde::Serialize)]
pub struct StandingsBody {
    pub anchor: Option<String>,
    pub at: Option<String>,
    pub fit_ms: Option<u64>,
    pub games: usize,
    pub intervals: Option<crate::ratings::IntervalMethod>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<&'static str>,
    pub ratings: Vec<StandingLine>,
    pub variant: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variants: Option<Vec<String>>,
}

/// The rating of `player` in the last fit's overall table.
fn rating_of(l: &Ladder, player: &str) -> Option<RatingBody> {
    let fit = l.last_fit()?;
    let r = fit.report.overall.get(player)?;
    Some(match r.rated {
        true => RatingBody {
            elo: Some(r.elo),
            games: r.count.games,
            high: Some(r.elo_high),
            low: Some(r.elo_low),
            score: Some(r.count.score()),
        },
        false => RatingBody {
            elo: None,
            games: r.count.games,
            high: None,
            low: None,
            score: None,
        },
    })
}

/// `/api/bots`: every bot with its latest version and standing.
pub async fn bots_json(l: &Ladder) -> Result<BotsBody, DbError> {
    let versions = l.db.versions(None).await?;
    let mut latest: std::collections::BTreeMap<String, &Version> = Default::default();
    for v in &versions {
        latest.insert(v.bot.clone(), v);
    }
    let bots = latest
        .values()
        .map(|v| {
            let entered = versions
                .iter()
                .rev()
                .find(|x| x.bot == v.bot && x.status == VersionStatus::Entered);
            BotSummary {
                bot: v.bot.clone(),
                entered: entered.map(Version::player),
                latest: LatestBody {
                    detail: v.detail.clone(),
                    status: v.status,
                    version: v.number,
                },
                owner: v.owner.clone(),
                rating: entered.and_then(|e| rating_of(l, &e.player())),
            }
        })
        .collect();
    Ok(BotsBody { bots })
}

/// `/api/bots/NAME`: versions (with check-bot's reports), ratings and
/// their history, results by opponent, faults, recent games.
pub async fn bot_json(l: &Ladder, name: &str) -> Result<Option<BotBody>, DbError> {
    let versions = l.db.versions_of(name).await?;
    let Some(last) = versions.last() else {
        return Ok(None);
    };
    let players: Vec<String> = versions.iter().map(Version::player).collect();
    let history = l.fits.history.read().unwrap_or_else(|p| p.into_inner());
    let vs = versions
        .iter()
        .map(|v| {
            let p = v.player();
            VersionBody {
                bytes: v.bytes,
                created_at: v.created_at.clone(),
                detail: v.detail.clone(),
                history: history.get(&p).cloned().unwrap_or_default(),
                rating: rating_of(l, &p),
                report: v.report.clone(),
                sha256: v.sha256.clone(),
                status: v.status,
                updated_at: v.updated_at.clone(),
                version: v.number,
                player: p,
            }
        })
        .collect();
    drop(history);
    let opponents = l.last_fit().map_or_else(Vec::new, |fit| {
        fit.report
            .pairs()
            .filter(|p| p.variant == "all")
            .filter_map(|p| {
                let (me_a, other) = if players.contains(&p.bot_a) {
                    (true, &p.bot_b)
                } else if players.contains(&p.bot_b) {
                    (false, &p.bot_a)
                } else {
                    return None;
                };
                let (w, lo) = if me_a {
                    (p.a_wins, p.b_wins)
                } else {
                    (p.b_wins, p.a_wins)
                };
                let score = if me_a { p.a_score() } else { 1.0 - p.a_score() };
                Some(OpponentBody {
                    draws: p.draws,
                    losses: lo,
                    opponent: other.clone(),
                    player: if me_a { &p.bot_a } else { &p.bot_b }.clone(),
                    results: p.results,
                    score,
                    wins: w,
                })
            })
            .collect()
    });
    let (recent, faults) = l.finished().of_players(&players);
    Ok(Some(BotBody {
        bot: last.bot.clone(),
        faults,
        opponents,
        owner: last.owner.clone(),
        recent,
        versions: vs,
    }))
}

/// A version's line in a standings table: its rating, and its version's
/// status (`entered`, or `retired` once replaced or withdrawn: the pages
/// rank the entered versions and mark the retired ones).
#[derive(Clone, Debug, serde::Serialize)]
pub struct StandingLine {
    #[serde(flatten)]
    pub rating: crate::ratings::BotRating,
    pub status: Option<VersionStatus>,
}

/// `/api/standings?variant=V`: the last complete fit's table (`all`, the
/// default, or a variant as the ladder file names it, `tricala3`, or as
/// the standings do, `tricala-3p`), with when and over how many games, each
/// version's status beside its rating. A variant the ladder does not play
/// is a 400 that names those it plays; one it plays but has no rated
/// game of yet, an empty table and a note.
pub async fn standings_json(l: &Ladder, variant: Option<&str>) -> ApiResult<StandingsBody> {
    let label = match variant {
        None | Some("all") => None,
        Some(v) => {
            let found = super::variants::named(l, v)?;
            found.first().map(|&i| super::variants::label_of(l, i))
        }
    };
    let shown = label.clone().unwrap_or_else(|| "all".into());
    let empty = |note| StandingsBody {
        anchor: None,
        at: None,
        fit_ms: None,
        games: 0,
        intervals: None,
        note: Some(note),
        ratings: Vec::new(),
        variant: shown.clone(),
        variants: Some(l.t.variants.iter().map(|v| v.label()).collect()),
    };
    let Some(fit) = l.last_fit() else {
        return Ok(empty(
            "no games yet: the standings appear after the first games",
        ));
    };
    let table = match &label {
        None => &fit.report.overall,
        Some(v) => match fit.report.per_variant.iter().find(|s| s.variant == *v) {
            Some(t) => t,
            None => return Ok(empty("no games of this variant yet")),
        },
    };
    let status: std::collections::HashMap<String, VersionStatus> =
        l.db.versions(None)
            .await
            .map_err(ApiError::internal)?
            .into_iter()
            .map(|v| (v.player(), v.status))
            .collect();
    Ok(StandingsBody {
        anchor: Some(table.anchor.clone()),
        at: Some(fit.at.clone()),
        fit_ms: Some(fit.took.as_millis() as u64),
        games: fit.games,
        intervals: Some(table.intervals),
        note: None,
        ratings: table
            .ratings
            .iter()
            .map(|r| StandingLine {
                status: status.get(&r.bot).copied(),
                rating: r.clone(),
            })
            .collect(),
        variant: table.variant.clone(),
        variants: Some(l.t.variants.iter().map(|v| v.label()).collect()),
    })
}

/// A finished game's row and its record's JSON lines, by ladder id
/// (`123` or `game-123`); `None` when there is no such finished game.
pub async fn game_of(l: &Ladder, id: &str) -> Result<Option<(GameRow, Vec<Value>)>, DbError> {
    Ok(game_text(l, id).await?.map(|(_, row, text)| {
        let lines = text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        (row, lines)
    }))
}

/// A finished game's number and row, by ladder id (`123` or `game-123`);
/// `None` when there is no such finished game.
pub(super) async fn finished_row(l: &Ladder, id: &str) -> Result<Option<(i64, GameRow)>, DbError> {
    let Some(n) = id.parse::<i64>().ok().or_else(|| ladder_id(id)) else {
        return Ok(None);
    };
    let Some(row) = l.db.done_row(n).await? else {
        return Ok(None);
    };
    let row: GameRow = serde_json::from_str(&row)
        .map_err(|e| DbError::Conflict(format!("the row of game {n}: {e}")))?;
    Ok(Some((n, row)))
}

/// A finished game's number, row and record's text (JSON lines), by
/// ladder id.
pub(super) async fn game_text(
    l: &Ladder,
    id: &str,
) -> Result<Option<(i64, GameRow, String)>, DbError> {
    let Some((n, row)) = finished_row(l, id).await? else {
        return Ok(None);
    };
    // A record pruned past the retention (`[ladder] record_days`): the row
    // alone, with an empty record.
    let Some(frame) = l.db.record(n).await? else {
        return Ok(Some((n, row, String::new())));
    };
    let text = crate::results::records::decode(&frame)
        .map_err(|e| DbError::Conflict(format!("the record of game {n}: {e}")))?;
    Ok(Some((n, row, String::from_utf8_lossy(&text).into_owned())))
}

/// The pages' templates.
fn templates() -> Result<minijinja::Environment<'static>, minijinja::Error> {
    let mut env = minijinja::Environment::new();
    env.add_template("layout.html", include_str!("templates/layout.html"))?;
    env.add_template("standings.html", include_str!("templates/standings.html"))?;
    env.add_template("bot.html", include_str!("templates/bot.html"))?;
    env.add_template("game.html", include_str!("templates/game.html"))?;
    env.add_template("games.html", include_str!("templates/games.html"))?;
    env.add_template("workers.html", include_str!("templates/workers.html"))?;
    env.add_template("upload.html", include_str!("templates/upload.html"))?;
    env.add_template(
        "version_tests.html",
        include_str!("templates/version_tests.html"),
    )?;
    env.add_template(
        "version_test.html",
        include_str!("templates/version_test.html"),
    )?;
    env.add_template("events.html", include_str!("templates/events.html"))?;
    env.add_template("event.html", include_str!("templates/event.html"))?;
    Ok(env)
}

/// A page from `template` and `data`, or a plain error page.
pub(super) fn page(template: &str, l: &Ladder, data: impl serde::Serialize) -> Response {
    let rendered = templates().and_then(|env| {
        env.get_template(template)?.render(
            minijinja::context! { ladder => &l.t.name, d => minijinja::value::Serde(&data) },
        )
    });
    match rendered {
        Ok(html) => Html(html).into_response(),
        Err(e) => {
            tracing::error!("page {template}: {e:#}");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "the page could not be made",
            )
                .into_response()
        }
    }
}

/// A page that says what is missing, with 404.
fn missing(what: String) -> Response {
    error_page(StatusCode::NOT_FOUND, &what)
}

/// A page that says what went wrong (escaped), with `status` and a link
/// to the standings: a page's error is a page, as its API's is JSON.
fn error_page(status: StatusCode, what: &str) -> Response {
    let html = format!(
        "<!doctype html><meta charset=utf-8><title>{}</title><p>{}</p><p><a href=\"/\">standings</a></p>",
        status.canonical_reason().unwrap_or("error").to_lowercase(),
        html_escape(what)
    );
    (
        status,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        html,
    )
        .into_response()
}

/// [`error_page`] of an API's refusal, for the page of the same thing.
pub fn page_of_error(e: ApiError) -> Response {
    error_page(e.status, &e.message)
}

/// `&`, `<`, `>`, `"` and `'` as entities.
pub fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// `/?variant=V&retired=show`: the standings of one variant (or all),
/// the entered versions ranked and the retired ones left out (or shown,
/// marked and unranked), the bots and the latest games, updated by the
/// live feed. A variant the ladder does not play is said on the page,
/// with a 400.
pub async fn standings_page(
    State(l): State<Arc<Ladder>>,
    Query(q): Query<Vec<(String, String)>>,
) -> Response {
    let asked = |name: &str| {
        q.iter()
            .find(|(k, v)| k == name && !v.is_empty())
            .map(|(_, v)| v.as_str())
    };
    let variant = asked("variant");
    let retired = asked("retired") == Some("show");
    let (standings, error, status) = match standings_json(&l, variant).await {
        Ok(s) => (Some(s), None, StatusCode::OK),
        Err(e) => (None, Some(e.message), e.status),
    };
    let mut rank = 0;
    let rows: Vec<Value> = standings
        .iter()
        .flat_map(|s| &s.ratings)
        .filter_map(|r| {
            let is_retired = r.status != Some(VersionStatus::Entered);
            if is_retired && !retired {
                return None;
            }
            if !is_retired {
                rank += 1;
            }
            Some(json!({ "r": r, "rank": (!is_retired).then_some(rank), "retired": is_retired }))
        })
        .collect();
    let bots = bots_json(&l).await.ok().map(|b| b.bots);
    let recent: Vec<GameRow> = l.finished().recent();
    let mut r = page(
        "standings.html",
        &l,
        json!({
            "standings": standings, "rows": rows, "error": error,
            "variant": standings.as_ref().map_or("all", |s| s.variant.as_str()),
            "variants": l.t.variants.iter().map(|v| v.label()).collect::<Vec<_>>(),
            "retired": retired, "bots": bots, "recent": recent,
        }),
    );
    if r.status() == StatusCode::OK {
        *r.status_mut() = status;
    }
    r
}

/// `/upload`: the upload form (an owner's token and a bot folder as
/// .tar.gz), which follows the new version's steps as `arena submit`
/// does.
pub async fn upload_page(State(l): State<Arc<Ladder>>) -> Response {
    page("upload.html", &l, json!({}))
}

/// What a bot's page shows: the API's body, and its rating chart.
#[derive(serde::Serialize)]
struct BotPage {
    #[serde(flatten)]
    bot: BotBody,
    plot: Value,
}

/// `/bots/NAME`: a bot's page.
pub async fn bot_page(State(l): State<Arc<Ladder>>, Path(name): Path<String>) -> Response {
    // A version's name (`BOT@N`) leads to its bot's page, if the bot has
    // that version (as `/api/bots/NAME@N` answers 404 for one it has not).
    let (name, version) = match name.rsplit_once('@') {
        Some((b, n)) => (b.to_string(), Some(n.to_string())),
        None => (name, None),
    };
    match bot_json(&l, &name).await {
        Ok(Some(b))
            if version
                .as_deref()
                .is_some_and(|n| !b.versions.iter().any(|v| v.version.to_string() == n)) =>
        {
            missing(format!(
                "bot `{name}` has no version `{}`: its versions are {}",
                version.as_deref().unwrap_or_default(),
                b.versions
                    .iter()
                    .map(|v| v.version.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        }
        Ok(Some(b)) => {
            let plot = plot(&b.versions);
            page("bot.html", &l, BotPage { bot: b, plot })
        }
        Ok(None) => missing(format!("no bot named `{name}`")),
        Err(e) => missing(format!("the bot cannot be shown: {e}")),
    }
}

/// `/games/ID`: a game's page: its row, and the board with its moves in
/// the HTML report's game viewer (`report.js`, its data from
/// `/games/ID/index.js` and `/games/ID/chunk.js`).
pub async fn game_page(State(l): State<Arc<Ladder>>, Path(id): Path<String>) -> Response {
    match finished_row(&l, &id).await {
        Ok(Some((_, row))) => {
            let url = format!("/games/{}", crate::report::html::frag(&row.game_id));
            let arena = json!({ "index": format!("{url}/index.js") });
            let open = format!("#game={}", crate::report::html::frag(&row.game_id));
            page(
                "game.html",
                &l,
                json!({ "row": row, "url": url, "arena": arena, "open": open }),
            )
        }
        Ok(None) => missing(format!("no finished game `{id}`")),
        Err(e) => missing(format!("the game cannot be shown: {e}")),
    }
}

/// `/games/ID/index.js`: the viewer's index of this one game (a script
/// calling `arenaIndex`).
pub async fn game_index_js(State(l): State<Arc<Ladder>>, Path(id): Path<String>) -> Response {
    game_script(&l, &id, |g| g.index).await
}

/// `/games/ID/chunk.js`: the viewer's data of this one game, every
/// position replayed by the engine (a script calling `arenaGames`).
pub async fn game_chunk_js(State(l): State<Arc<Ladder>>, Path(id): Path<String>) -> Response {
    game_script(&l, &id, |g| g.chunk).await
}

/// One of a game's viewer scripts, or an error status whose body is a
/// script comment (nothing of the request is echoed into a script).
async fn game_script(l: &Ladder, id: &str, pick: fn(OneGame) -> String) -> Response {
    let (status, body) = match game_text(l, id).await {
        Ok(Some((n, row, text))) => {
            // The index names the chunk as report.js finds it: it loads
            // `games/NAME.js` relative to the page `/games/ID`, which is
            // `/games/ID/chunk.js` for this name. The page loads it itself.
            let name = format!("../{}/chunk", crate::report::html::frag(&row.game_id));
            let record = (!text.is_empty()).then_some(text.as_str());
            // Its analysis, when an owner asked for one.
            let analysis = match l.db.analysis_of(n).await {
                Ok(a) => a.map(|(verdicts, _)| verdicts),
                Err(e) => {
                    tracing::error!("the analysis of game {n}: {e}");
                    None
                }
            };
            (
                StatusCode::OK,
                pick(one_game(&row, record, analysis, &name)),
            )
        }
        Ok(None) => (
            StatusCode::NOT_FOUND,
            "// no such finished game\n".to_string(),
        ),
        Err(e) => {
            tracing::error!("the viewer's data of game {id:?}: {e}");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "// the game cannot be shown: see the service's log\n".to_string(),
            )
        }
    };
    (status, [(header::CONTENT_TYPE, JS)], body).into_response()
}

/// The content type of the scripts served.
const JS: &str = "text/javascript; charset=utf-8";

/// `/assets/report.js`: the HTML report's script, whose game viewer the
/// game page uses; part of the binary, so no request leaves the service.
pub async fn report_js() -> Response {
    ([(header::CONTENT_TYPE, JS)], REPORT_JS).into_response()
}

/// `/assets/report.css`: the HTML report's style sheet, for its viewer.
pub async fn report_css() -> Response {
    (
        [(header::CONTENT_TYPE, "text/css; charset=utf-8")],
        REPORT_CSS,
    )
        .into_response()
}

/// Ticks at round steps (1, 2 or 5 times a power of ten) from `lo` to
/// `hi`, about `n` of them; the range widened to whole steps.
fn ticks(lo: f64, hi: f64, n: usize) -> (f64, f64, Vec<f64>) {
    let (lo, hi) = if hi - lo < 1e-9 {
        (lo - 1.0, hi + 1.0)
    } else {
        (lo, hi)
    };
    let raw = (hi - lo) / n.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let (first, last) = ((lo / step).floor() * step, (hi / step).ceil() * step);
    let count = ((last - first) / step).round() as usize;
    let at = (0..=count).map(|i| first + i as f64 * step).collect();
    (first, last, at)
}

/// A tick's label: whole numbers, thousands as `k` past 10,000.
fn tick_label(v: f64) -> String {
    if v.abs() >= 10_000.0 {
        format!("{}k", (v / 1000.0).round())
    } else {
        format!("{}", v.round())
    }
}

/// Labels' places along an axis at least `gap` apart, each as near its
/// wish as can be, within `lo..=hi` (`wishes` by index; returns in the
/// same order).
fn spread(wishes: &[f64], gap: f64, lo: f64, hi: f64) -> Vec<f64> {
    let mut order: Vec<usize> = (0..wishes.len()).collect();
    order.sort_by(|a, b| wishes[*a].total_cmp(&wishes[*b]));
    let mut placed = vec![0.0; wishes.len()];
    let mut next = lo;
    for &i in &order {
        placed[i] = wishes[i].max(next);
        next = placed[i] + gap;
    }
    // Pushed past the bottom: back up from there, keeping the gaps.
    let mut limit = hi;
    for &i in order.iter().rev() {
        placed[i] = placed[i].min(limit);
        limit = placed[i] - gap;
    }
    placed
}

/// The rating-over-time chart of a bot's versions (their `history`): one
/// line per version over the ladder's game count, with its 95% band, on
/// axes with round ticks and their labels, each line named at its end
/// (the names kept apart); as SVG coordinates; null without two points.
fn plot(versions: &[VersionBody]) -> Value {
    const W: f64 = 720.0;
    const H: f64 = 300.0;
    const LEFT: f64 = 58.0;
    const RIGHT: f64 = 130.0;
    const TOP: f64 = 12.0;
    const BOTTOM: f64 = 44.0;
    const COLORS: [&str; 6] = [
        "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b",
    ];
    let series: Vec<(&str, &[[f64; 4]])> = versions
        .iter()
        .filter(|v| !v.history.is_empty())
        .map(|v| (v.player.as_str(), &v.history[..]))
        .collect();
    let all = || series.iter().flat_map(|(_, h)| h.iter());
    if all().count() < 2 {
        return Value::Null;
    }
    let (x0, x1) = all().fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p[0]), b.max(p[0])));
    let (y0, y1) = all().fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p[2]), b.max(p[3])));
    let (x0, x1, xt) = ticks(x0, x1, 6);
    let (y0, y1, yt) = ticks(y0, y1, 5);
    let (px0, px1, py0, py1) = (LEFT, W - RIGHT, TOP, H - BOTTOM);
    let sx = |x: f64| px0 + (x - x0) / (x1 - x0) * (px1 - px0);
    let sy = |y: f64| py1 - (y - y0) / (y1 - y0) * (py1 - py0);
    let pts = |h: &[[f64; 4]], k: usize| -> Vec<String> {
        h.iter()
            .map(|p| format!("{:.1},{:.1}", sx(p[0]), sy(p[k])))
            .collect()
    };
    let ends: Vec<f64> = series
        .iter()
        .map(|(_, h)| sy(h[h.len() - 1][1]) + 4.0)
        .collect();
    // A 13 px label's box is about 16 px tall (its ascent and descent):
    // 15 apart, the boxes of two versions that ended close met by a
    // fraction of a pixel (the browser test's overlap check caught it).
    let label_y = spread(&ends, 18.0, py0 + 8.0, py1 + 4.0);
    let lines: Vec<Value> = series
        .iter()
        .enumerate()
        .map(|(i, (player, h))| {
            let mut band = pts(h, 3);
            band.extend(pts(h, 2).into_iter().rev());
            let last = h[h.len() - 1];
            json!({
                "player": player, "color": COLORS[i % COLORS.len()],
                "points": pts(h, 1).join(" "), "band": band.join(" "),
                "end_x": sx(last[0]), "end_y": sy(last[1]),
                "label_x": px1 + 8.0, "label_y": label_y[i],
            })
        })
        .collect();
    let xticks: Vec<Value> = xt
        .iter()
        .map(|&x| json!({ "at": sx(x), "label": tick_label(x) }))
        .collect();
    let yticks: Vec<Value> = yt
        .iter()
        .map(|&y| json!({ "at": sy(y), "label": tick_label(y) }))
        .collect();
    json!({
        "width": W, "height": H, "lines": lines, "xticks": xticks, "yticks": yticks,
        "left": px0, "right": px1, "top": py0, "bottom": py1,
        "x_title": (px0 + px1) / 2.0, "y_title": (py0 + py1) / 2.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A test's Elo is known before its interval (too few pairs of each
    /// kind): the pages show the Elo alone rather than failing.
    #[test]
    fn a_test_with_an_elo_and_no_interval_is_shown() {
        let env = templates().unwrap();
        let t = serde_json::json!({
            "id": 1, "bot": "b", "owner": "o", "new_version": 2, "old_version": 1,
            "status": "h1", "elo0": 0.0, "elo1": 5.0, "alpha": 0.05, "beta": 0.05,
            "max_games": 400, "outcome": "retire-on-h1", "old_fate": "retired",
            "games_queued": 0, "games": 26, "penta": [1, 0, 1, 0, 11], "wins": 23,
            "draws": 0, "losses": 3, "llr": 3.1, "elo": 353.8, "elo_err": null,
            "lower": -2.94, "upper": 2.94, "new_player": "b@2", "old_player": "b@1",
            "url": "/tests/1", "created_at": "x", "started_at": "x", "finished_at": "x",
        });
        let one = env
            .get_template("version_test.html")
            .unwrap()
            .render(
                minijinja::context! { ladder => "l", d => minijinja::value::Serde(
                    serde_json::json!({ "t": t, "at": 50.0, "zero": 50.0 }),
                ) },
            )
            .unwrap();
        assert!(one.contains("353.8 (no interval yet"), "{one}");
        // A finished test has no games queued to speak of.
        assert!(!one.contains("queued"), "{one}");
        let all = env
            .get_template("version_tests.html")
            .unwrap()
            .render(
                minijinja::context! { ladder => "l", d => minijinja::value::Serde(
                    serde_json::json!({ "tests": [t], "owner": "", "bot": "", "result": "" }),
                ) },
            )
            .unwrap();
        assert!(all.contains("353.8<"), "{all}");
    }

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(
            ticks(3.0, 97.0, 5),
            (0.0, 100.0, vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0])
        );
        let (lo, hi, at) = ticks(-153.2, 88.0, 5);
        assert_eq!((lo, hi), (-200.0, 100.0));
        assert_eq!(at, vec![-200.0, -150.0, -100.0, -50.0, 0.0, 50.0, 100.0]);
        // One value: a range around it.
        let (lo, hi, _) = ticks(12.0, 12.0, 5);
        assert!(lo < 12.0 && hi > 12.0);
        assert_eq!(tick_label(25_000.0), "25k");
        assert_eq!(tick_label(-50.0), "-50");
    }

    /// Before the first fit the fit's fields are there, null: a client
    /// reading `fit_ms` finds no fit, not a missing field.
    #[test]
    fn standings_before_a_fit_name_every_field() {
        let body = StandingsBody {
            anchor: None,
            at: None,
            fit_ms: None,
            games: 0,
            intervals: None,
            note: Some("no fit yet"),
            ratings: Vec::new(),
            variant: "all".into(),
            variants: None,
        };
        let v = serde_json::to_value(&body).unwrap();
        for key in ["anchor", "at", "fit_ms", "intervals"] {
            assert!(v.get(key).is_some_and(|x| x.is_null()), "{key}: {v}");
        }
    }

    #[test]
    fn labels_are_kept_apart_and_inside() {
        let placed = spread(&[100.0, 101.0, 99.0, 300.0], 15.0, 10.0, 250.0);
        let mut sorted = placed.clone();
        sorted.sort_by(f64::total_cmp);
        for w in sorted.windows(2) {
            assert!(w[1] - w[0] >= 15.0 - 1e-9, "{placed:?}");
        }
        assert!(
            placed.iter().all(|y| (10.0..=250.0).contains(y)),
            "{placed:?}"
        );
        // The one that wished lowest is placed lowest (order kept).
        assert!(placed[2] < placed[0] && placed[0] < placed[1], "{placed:?}");
        assert_eq!(placed[3], 250.0);
    }
}
