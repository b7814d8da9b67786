//! What the games browser and the workers' page read: a page of finished
//! games narrowed by their seats and variant, oldest or newest first
//! ([`Db::games_page`]); the games in flight on the workers; and each
//! worker's host, cores, games in flight and games played
//! ([`Db::worker_counts`]). The rows' own fields (result, end, forfeit)
//! are checked by the web layer, which reads the rows.

use super::{Db, DbError, Done, DoneKey, LeaseState};

/// Which finished games a page lists, by what the `games` table knows:
/// `None` keeps all, an empty list none.
#[derive(Clone, Debug, Default)]
pub struct SeatFilter {
    /// Games that seat one of these versions (ids).
    pub versions: Option<Vec<i64>>,
    /// And one of these (an opponent's versions).
    pub against: Option<Vec<i64>>,
    /// Games of these variants (the ladder file's indexes).
    pub variants: Option<Vec<usize>>,
    /// The games a test between versions queued (`games.test_id`).
    pub test: Option<i64>,
}

/// In which order a page lists the games.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Order {
    /// In the order they finished (the exports' order).
    #[default]
    Oldest,
    /// The latest first (the games browser).
    Newest,
}

/// One worker's numbers from the store.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkerCounts {
    pub name: String,
    pub host: String,
    pub cores: i64,
    /// Its leases active now: games it is playing.
    pub in_flight: i64,
    /// Its leases whose game it uploaded.
    pub played: i64,
}

/// `(',' || seats || ',') LIKE '%,ID,%'` for any of `ids`: the store's own
/// integers, written as such. `1 = 0` for none.
fn seated(ids: &[i64]) -> String {
    if ids.is_empty() {
        return "1 = 0".into();
    }
    let any: Vec<String> = ids
        .iter()
        .map(|v| format!("(',' || seats || ',') LIKE '%,{v},%'"))
        .collect();
    format!("({})", any.join(" OR "))
}

/// `(',' || seats || ',')` holds `v` in two seats.
fn twice(v: i64) -> String {
    format!(
        "((',' || seats || ',') LIKE '%,{v},{v},%' OR (',' || seats || ',') LIKE '%,{v},%,{v},%')"
    )
}

/// Games where one seat is one of `versions` and another seat one of
/// `against`. When the two share versions (`bot=X&opponent=X`: X's
/// versions against each other), a game counts only if two of its seats
/// hold them, not one seat counted twice.
fn facing(versions: &[i64], against: &[i64]) -> String {
    let (shared, other): (Vec<i64>, Vec<i64>) = against.iter().partition(|a| versions.contains(a));
    let mut any = vec![format!("{} AND {}", seated(versions), seated(&other))];
    for &w in &shared {
        let rest: Vec<i64> = versions.iter().copied().filter(|&v| v != w).collect();
        any.push(twice(w));
        any.push(format!("({} AND {})", seated(&[w]), seated(&rest)));
    }
    format!("(({}))", any.join(") OR ("))
}

/// The query of [`Db::games_page`]: `$1` the limit, `$2` the key to read
/// past when `from`.
pub fn page_sql(from: bool, order: Order, only: &SeatFilter) -> String {
    // `state || ''`: not the index of states, which SQLite took for
    // the bound and the order, sorting every finished game for each
    // page (0.5 s a page at 230,000 games, a hundred pages for a
    // filter that reads rows); the finish order's index serves both.
    let mut sql = String::from(
        "SELECT done_seq, id, row_json FROM games WHERE state || '' = 'done' AND row_json IS NOT NULL",
    );
    let (past, by) = match order {
        Order::Oldest => (">", "done_seq"),
        Order::Newest => ("<", "done_seq DESC"),
    };
    if from {
        sql.push_str(&format!(" AND done_seq {past} $2"));
    }
    match (&only.versions, &only.against) {
        (Some(v), Some(a)) => sql.push_str(&format!(" AND {}", facing(v, a))),
        (Some(ids), None) | (None, Some(ids)) => sql.push_str(&format!(" AND {}", seated(ids))),
        (None, None) => {}
    }
    if let Some(variants) = &only.variants {
        let list: Vec<String> = variants.iter().map(usize::to_string).collect();
        if list.is_empty() {
            sql.push_str(" AND 1 = 0");
        } else {
            sql.push_str(&format!(" AND variant IN ({})", list.join(", ")));
        }
    }
    if let Some(test) = only.test {
        sql.push_str(&format!(" AND test_id = {test}"));
    }
    sql.push_str(&format!(" ORDER BY {by} LIMIT $1"));
    sql
}

impl Db {
    /// At most `limit` finished games that pass `only`, in `order`, from
    /// past `from` (in that order).
    pub async fn games_page(
        &self,
        from: Option<&DoneKey>,
        order: Order,
        limit: usize,
        only: &SeatFilter,
    ) -> Result<Vec<Done>, DbError> {
        let sql = page_sql(from.is_some(), order, only);
        let mut q = sqlx::query_as::<_, (i64, i64, String)>(&sql).bind(limit as i64);
        if let Some(k) = from {
            q = q.bind(k.seq);
        }
        Ok(q.fetch_all(self.pool())
            .await?
            .into_iter()
            .map(|(seq, id, row_json)| Done {
                key: DoneKey { seq, id },
                row_json,
            })
            .collect())
    }

    /// Games the workers are playing: their leases active at `now_unix`.
    pub async fn leased_in_flight(&self, now_unix: i64) -> Result<i64, DbError> {
        let (n,): (i64,) =
            sqlx::query_as("SELECT COUNT(*) FROM leases WHERE state = $1 AND expires >= $2")
                .bind(LeaseState::Active.as_str())
                .bind(now_unix)
                .fetch_one(self.pool())
                .await?;
        Ok(n)
    }

    /// Every worker's host, cores, games in flight at `now_unix` and games
    /// uploaded, by name.
    pub async fn worker_counts(&self, now_unix: i64) -> Result<Vec<WorkerCounts>, DbError> {
        let rows: Vec<(String, String, i64)> = sqlx::query_as(
            "SELECT o.name, w.host, w.cores FROM workers w JOIN owners o ON o.id = w.owner_id ORDER BY o.name",
        )
        .fetch_all(self.pool())
        .await?;
        let leases: Vec<(String, String, i64)> = sqlx::query_as(
            "SELECT o.name, l.state, COUNT(*) FROM leases l JOIN owners o ON o.id = l.worker_id \
             WHERE l.state = $1 OR (l.state = $2 AND l.expires >= $3) GROUP BY o.name, l.state",
        )
        .bind(LeaseState::Done.as_str())
        .bind(LeaseState::Active.as_str())
        .bind(now_unix)
        .fetch_all(self.pool())
        .await?;
        let count = |name: &str, state: LeaseState| {
            leases
                .iter()
                .find(|(n, s, _)| n == name && s == state.as_str())
                .map_or(0, |(_, _, c)| *c)
        };
        Ok(rows
            .into_iter()
            .map(|(name, host, cores)| WorkerCounts {
                in_flight: count(&name, LeaseState::Active),
                played: count(&name, LeaseState::Done),
                name,
                host,
                cores,
            })
            .collect())
    }
}
