//! Where a Swiss or a knockout stands, in its format's terms (`arena
//! status`): the round being played, a Swiss's leaders, a knockout's bots
//! still in and its champion.

use super::{SwissPlan, SwissState};
use crate::league::knockout;

/// A Swiss's or a knockout's progress.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Progress {
    /// `swiss` or `knockout`.
    pub format: &'static str,
    /// The round being played (the last paired one).
    pub round: usize,
    pub rounds: u32,
    pub finished: usize,
    /// A knockout's stage: `swiss stage`, `round N`, `quarter-final`,
    /// `semi-final`, `final`, or `over`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stage: Option<String>,
    /// The bots of the top score after the finished rounds (a Swiss, or a
    /// knockout's Swiss stage), and that score.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub leaders: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leaders_points: Option<f64>,
    /// A knockout's bots not yet out.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub still_in: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub champion: Option<String>,
    /// A knockout's drawn matches, which went to the better seed: `W over
    /// L (round N)`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub on_seed: Vec<String>,
    /// Rows of games.csv of rounds not paired yet, as `arena run` refuses
    /// them (`SwissState::unpaired`), and the paired round that lacks a
    /// game's row; left for the caller to count (`progress` has no rows).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unpaired: Option<Unpaired>,
}

/// Rows of a Swiss's or knockout's games.csv that stand on a round lacking
/// a game's row.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Unpaired {
    pub rows: usize,
    /// The last paired round, which lacks a row.
    pub lacking: u32,
}

/// The progress of the league `plan` at `state`.
pub fn progress(plan: &SwissPlan, state: &SwissState) -> Progress {
    let finished = state.finished_rounds();
    let name = |b: usize| plan.bots.get(b).cloned().unwrap_or_default();
    let mut p = Progress {
        format: if plan.is_knockout() {
            "knockout"
        } else {
            "swiss"
        },
        round: state.rounds.len(),
        rounds: plan.rounds,
        finished,
        stage: None,
        leaders: Vec::new(),
        leaders_points: None,
        still_in: Vec::new(),
        champion: None,
        on_seed: Vec::new(),
        unpaired: None,
    };
    let stage = plan.stage as usize;
    let in_swiss = plan.knockout.is_none() || finished < stage;
    if in_swiss && finished > 0 {
        let standings = state.standings();
        let top = standings.first().map(|s| state.history.exact_score(s.bot));
        p.leaders = standings
            .iter()
            .filter(|s| Some(state.history.exact_score(s.bot)) == top)
            .map(|s| name(s.bot))
            .collect();
        p.leaders_points = standings.first().map(|s| s.score);
    }
    let Some(seeded) = &plan.knockout else {
        return p;
    };
    if finished < stage {
        p.stage = Some("swiss stage".into());
        p.still_in = plan.bots.clone();
        return p;
    }
    let order = state.seeds().unwrap_or(seeded.as_slice());
    let points = &state.points[stage..];
    let places = knockout::places(order, points);
    for (r, pts) in points.iter().enumerate() {
        for (a, b) in knockout::matches(order, &places[r]).0 {
            if let (w, true) = knockout::winner(order, pts, a, b) {
                let l = if w == a { b } else { a };
                let round = stage + r + 1;
                p.on_seed
                    .push(format!("{} over {} (round {round})", name(w), name(l)));
            }
        }
    }
    let last: Vec<String> = places
        .last()
        .map(|l| l.iter().flatten().map(|&b| name(b)).collect())
        .unwrap_or_default();
    let left = (plan.rounds as usize).saturating_sub(finished);
    p.stage = Some(match left {
        0 => "over".to_string(),
        1 => "final".to_string(),
        2 => "semi-final".to_string(),
        3 => "quarter-final".to_string(),
        _ => format!("round {}", finished - stage + 1),
    });
    match left {
        0 => p.champion = last.into_iter().next(),
        _ => p.still_in = last,
    }
    p
}
