//! `/api/tests` and `/tests`: the tests between versions (docs/ladder.md
//! "Tests between versions"), running and finished, with filters (owner,
//! bot, result) as fishtest lists them; one test's state (LLR and its
//! bounds, games, pentanomial counts, Elo with its interval); the owner's
//! decision on the old version when the ladder leaves it to them; and
//! the test an upload asks for (its query's `test_*` words).

use super::auth::{check_owner, owner_of, writable};
use super::error::{json_body, ApiError, ApiResult, Shared};
use crate::league::config::ladder::TestOutcome;
use crate::ratings::sprt::{Model, SprtConfig};
use crate::serve::ladder::Ladder;
use crate::serve::store::version_tests::{TestFilter, TestSpec, TestStatus, VersionTest};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;
use axum::routing::{get, post};
use axum::{Json, Router};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The routes of this resource.
pub fn router() -> Router<Arc<Ladder>> {
    Router::new()
        .route("/api/tests", get(tests_api))
        .route("/api/tests/{id}", get(test_api))
        .route("/api/tests/{id}/decide", post(decide))
        .route("/tests", get(tests_page))
        .route("/tests/{id}", get(test_page))
}

/// A test in the API: the store's, with the SPRT's bounds, the versions'
/// ladder names and its page.
#[derive(Clone, Debug, serde::Serialize)]
pub struct TestBody {
    #[serde(flatten)]
    pub test: VersionTest,
    /// The LLR's bounds: `ln(beta / (1 - alpha))`, `ln((1 - beta) / alpha)`.
    pub lower: f64,
    pub upper: f64,
    pub new_player: String,
    pub old_player: Option<String>,
    pub url: String,
}

fn body_of(t: VersionTest) -> TestBody {
    let (lower, upper) = SprtConfig::new(t.elo0, t.elo1, t.alpha, t.beta, Model::Normalized)
        .map_or((f64::NAN, f64::NAN), |c| c.bounds());
    TestBody {
        lower,
        upper,
        new_player: t.new_player(),
        old_player: t.old_player(),
        url: format!("/tests/{}", t.id),
        test: t,
    }
}

/// `/api/tests`.
#[derive(Clone, Debug, serde::Serialize)]
pub struct TestsBody {
    pub tests: Vec<TestBody>,
}

/// The results a listing can keep (`result=`).
const RESULTS: [&str; 7] = [
    "all",
    "running",
    "finished",
    "h1",
    "h0",
    "budget",
    "cancelled",
];

/// The parameters of the tests' listing (`/api/tests`, `/tests`).
pub const LISTING_PARAMETERS: [&str; 4] = ["owner", "bot", "result", "limit"];

/// The parameters of an upload's test (`POST /api/bots?...`).
pub const UPLOAD_PARAMETERS: [&str; 7] = [
    "test",
    "elo0",
    "elo1",
    "alpha",
    "beta",
    "max_games",
    "outcome",
];

/// The listing's filters from the query (`owner`, `bot`, `result`);
/// anything else is refused with the valid words.
fn filter_of(q: &BTreeMap<String, String>) -> ApiResult<TestFilter> {
    let bad = |m: String| ApiError::new(StatusCode::BAD_REQUEST, m);
    if let Some(k) = q.keys().find(|k| !LISTING_PARAMETERS.contains(&k.as_str())) {
        return Err(bad(format!(
            "unknown filter `{k}`: /api/tests takes {}",
            LISTING_PARAMETERS.join(", ")
        )));
    }
    let some = |k: &str| q.get(k).filter(|v| !v.is_empty()).cloned();
    let statuses = match some("result").as_deref() {
        None | Some("all") => None,
        Some("finished") => Some(vec![
            TestStatus::H1,
            TestStatus::H0,
            TestStatus::Budget,
            TestStatus::Cancelled,
        ]),
        Some(r) => match TestStatus::ALL
            .into_iter()
            .find(|s| s.as_str() == r && *s != TestStatus::Waiting)
        {
            Some(s) => Some(vec![s]),
            None => {
                return Err(bad(format!(
                    "result `{r}`: give one of {}",
                    RESULTS.join(", ")
                )))
            }
        },
    };
    Ok(TestFilter {
        owner: some("owner"),
        bot: some("bot"),
        statuses,
    })
}

/// The listing's length (`limit`, 1 to 1000, default 200).
fn limit_of(q: &BTreeMap<String, String>) -> ApiResult<i64> {
    match q.get("limit").filter(|v| !v.is_empty()) {
        None => Ok(200),
        Some(v) => v
            .parse::<i64>()
            .ok()
            .filter(|n| (1..=1000).contains(n))
            .ok_or_else(|| {
                ApiError::new(
                    StatusCode::BAD_REQUEST,
                    format!("limit `{v}`: give a whole number from 1 to 1000"),
                )
            }),
    }
}

/// The tests a query asks for, newest first.
async fn listed(l: &Ladder, q: &BTreeMap<String, String>) -> ApiResult<TestsBody> {
    let filter = filter_of(q)?;
    let limit = limit_of(q)?;
    let tests =
        l.db.version_tests(&filter, limit)
            .await
            .map_err(ApiError::internal)?;
    Ok(TestsBody {
        tests: tests.into_iter().map(body_of).collect(),
    })
}

/// `GET /api/tests?owner=&bot=&result=`: the tests, newest first.
async fn tests_api(
    State(l): Shared,
    Query(q): Query<BTreeMap<String, String>>,
) -> ApiResult<Json<TestsBody>> {
    Ok(Json(listed(&l, &q).await?))
}

/// Test `id` (a number), or 404.
async fn one(l: &Ladder, id: &str) -> ApiResult<TestBody> {
    let n = id
        .parse::<i64>()
        .map_err(|_| ApiError::not_found(format!("no test `{id}`: tests are numbered")))?;
    match l.db.version_test(n).await.map_err(ApiError::internal)? {
        Some(t) if t.status != TestStatus::Waiting => Ok(body_of(t)),
        _ => Err(ApiError::not_found(format!(
            "no test {n} (see /api/tests for the tests)"
        ))),
    }
}

/// `GET /api/tests/ID`: one test's state.
async fn test_api(State(l): Shared, Path(id): Path<String>) -> ApiResult<Json<TestBody>> {
    Ok(Json(one(&l, &id).await?))
}

/// `POST /api/tests/ID/decide` `{"old": "keep" | "retire"}`: the bot's
/// owner decides on the old version, where the test left it to them.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Decision {
    old: String,
}

async fn decide(
    State(l): Shared,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: axum::body::Bytes,
) -> ApiResult<Json<TestBody>> {
    writable(&l)?;
    let owner = owner_of(&l, &headers).await?;
    let t = one(&l, &id).await?;
    check_owner(&l, &owner, &t.test.bot, "decide the test of").await?;
    let d: Decision = json_body(
        &body,
        "a decision on the old version",
        "send {\"old\": \"keep\"} or {\"old\": \"retire\"}",
    )?;
    let retire = match d.old.as_str() {
        "retire" => true,
        "keep" => false,
        other => {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                format!("`old`: `{other}` is neither `keep` nor `retire`"),
            ))
        }
    };
    if t.test.old_fate != "undecided" {
        let why = match t.test.status {
            TestStatus::Running => "the test is still running".to_string(),
            _ => format!(
                "the test's outcome was `{}` and the old version is {}",
                t.test.outcome,
                if t.test.old_fate.is_empty() {
                    "untouched"
                } else {
                    &t.test.old_fate
                }
            ),
        };
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            format!("nothing to decide: {why}"),
        ));
    }
    let why = format!(
        "retired by its owner after test {} ({})",
        t.test.id,
        t.test.status.as_str().to_uppercase()
    );
    let done =
        l.db.decide_test(t.test.id, retire, &why)
            .await
            .map_err(ApiError::internal)?;
    if done && retire {
        l.roster_changed_now();
    }
    Ok(Json(one(&l, &id).await?))
}

/// The test an upload asks for, from its query: `test=no` for none
/// (the new version replaces the old one at once), `test=yes` for one
/// where the ladder has them off; `elo0`, `elo1`, `alpha`, `beta`,
/// `max_games` and `outcome` over the ladder's `test_*` settings.
/// Anything else, or bounds `arena sprt` refuses, is a 400.
pub(super) fn upload_test(l: &Ladder, uri: &Uri) -> ApiResult<Option<TestSpec>> {
    let bad = |m: String| ApiError::new(StatusCode::BAD_REQUEST, m);
    let Query(q): Query<Vec<(String, String)>> =
        Query::try_from_uri(uri).map_err(|e| bad(format!("the upload's query: {e}")))?;
    let s = &l.settings.tests;
    let mut on = s.on;
    let mut spec = TestSpec {
        elo0: s.elo0,
        elo1: s.elo1,
        alpha: s.alpha,
        beta: s.beta,
        max_games: s.max_games as i64,
        outcome: s.outcome.as_str().to_string(),
    };
    let number = |k: &str, v: &str| {
        v.parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| bad(format!("`{k}={v}`: give a number")))
    };
    for (k, v) in &q {
        match k.as_str() {
            "test" => {
                on = match v.as_str() {
                    "yes" | "true" | "1" => true,
                    "no" | "false" | "0" => false,
                    _ => return Err(bad(format!("`test={v}`: give yes or no"))),
                }
            }
            "elo0" => spec.elo0 = number(k, v)?,
            "elo1" => spec.elo1 = number(k, v)?,
            "alpha" => spec.alpha = number(k, v)?,
            "beta" => spec.beta = number(k, v)?,
            // The organiser's budget is the most a test plays: an upload
            // may ask for fewer games, never more.
            "max_games" => {
                spec.max_games = v
                    .parse::<i64>()
                    .ok()
                    .filter(|n| (2..=s.max_games as i64).contains(n))
                    .ok_or_else(|| {
                        bad(format!(
                            "`max_games={v}`: give a whole number from 2 to {}, the ladder's test_max_games",
                            s.max_games
                        ))
                    })?
            }
            "outcome" => {
                if TestOutcome::from_word(v).is_none() {
                    return Err(bad(format!(
                        "`outcome={v}`: give one of {}",
                        TestOutcome::words()
                    )));
                }
                spec.outcome = v.clone();
            }
            other => {
                return Err(bad(format!(
                    "unknown upload parameter `{other}`: an upload takes {}",
                    UPLOAD_PARAMETERS.join(", ")
                )))
            }
        }
    }
    if !on {
        return Ok(None);
    }
    SprtConfig::new(
        spec.elo0,
        spec.elo1,
        spec.alpha,
        spec.beta,
        Model::Normalized,
    )
    .map_err(|e| bad(format!("the upload's test: {e}")))?;
    Ok(Some(spec))
}

/// What the listing page shows: the tests and the filters as asked.
#[derive(serde::Serialize)]
struct TestsPage {
    tests: Vec<TestBody>,
    owner: String,
    bot: String,
    result: String,
    results: Vec<&'static str>,
    running: bool,
}

/// `GET /tests?owner=&bot=&result=`: the tests, running first then
/// finished, with the filters' form.
async fn tests_page(State(l): Shared, Query(q): Query<BTreeMap<String, String>>) -> Response {
    let body = match listed(&l, &q).await {
        Ok(b) => b,
        Err(e) => return super::pages::page_of_error(e),
    };
    let (mut tests, finished): (Vec<TestBody>, Vec<TestBody>) = body
        .tests
        .into_iter()
        .partition(|t| t.test.status == TestStatus::Running);
    let running = !tests.is_empty();
    tests.extend(finished);
    let get = |k: &str| q.get(k).cloned().unwrap_or_default();
    super::pages::page(
        "version_tests.html",
        &l,
        TestsPage {
            tests,
            owner: get("owner"),
            bot: get("bot"),
            result: get("result"),
            results: RESULTS.to_vec(),
            running,
        },
    )
}

/// `GET /tests/ID`: one test, refreshed while it runs.
async fn test_page(State(l): Shared, Path(id): Path<String>) -> Response {
    match one(&l, &id).await {
        Ok(t) => {
            // Where the LLR stands between its bounds, in percent.
            let at = ((t.test.llr - t.lower) / (t.upper - t.lower) * 100.0).clamp(0.0, 100.0);
            let zero = (-t.lower / (t.upper - t.lower) * 100.0).clamp(0.0, 100.0);
            super::pages::page(
                "version_test.html",
                &l,
                serde_json::json!({ "t": t, "at": at, "zero": zero }),
            )
        }
        Err(e) => super::pages::page_of_error(e),
    }
}
