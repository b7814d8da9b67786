//! The SPRT as its users read it: `arena sprt` prints it, and the league
//! runner prints it at the end of a league run with `--sprt`.

use crate::ratings::sprt::{shown, Decided, HeadToHead, Model, SprtCounts, SprtReport};
use crate::ratings::CONFIDENCE;
use std::fmt::Write;

/// The state of an SPRT on one screen: the hypotheses, the LLR with its
/// bounds, the games with A's W/D/L, the pentanomial counts pooled and per
/// variant, the Elo estimate with its interval, what was not counted, and
/// last the decision: `H0 accepted`, `H1 accepted` or `continue (no
/// decision yet)`. A sequential test decides where the LLR first leaves
/// its bounds (`stopped`, read in the games' order): when games came after
/// that (those in flight when a league stopped) and all the games together
/// say otherwise, the decision is still that one, with the LLR of all the
/// games beside it, never a `continue` that contradicts it.
///
/// ```text
/// SPRT alpha vs bravo: H0 alpha - bravo = 0, H1 alpha - bravo = 5 (normalized Elo), alpha 0.05, beta 0.05
/// LLR 0.09  bounds (-2.94, 2.94)
/// games 20  alpha: W 8 D 8 L 4 (60.0%); 10 seat-swap pairs counted (20 games)
/// pairs from alpha's side     LL     LD  WL+DD     WD     WW
///   all                        0      1      5      3      1
///   filo                       0      0      3      2      1
///   kisolo                     0      1      2      1      0
/// Elo 70.4 +/- 92.1 (95%, pentanomial); nElo 122.8 +/- 152.3; LOS 94.3%
/// not counted: 280 games of other pairings
/// continue (no decision yet)
/// ```
pub fn sprt_text(r: &SprtReport, stopped: Option<&Decided>) -> String {
    let c = &r.config;
    let p = &r.pair;
    let (a, b) = (&p.bot_a, &p.bot_b);
    let unit = match c.model {
        Model::Normalized => "normalized Elo",
        Model::Logistic => "logistic Elo",
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        "SPRT {a} vs {b}: H0 {a} - {b} = {}, H1 {a} - {b} = {} ({unit}), alpha {}, beta {}",
        shown(c.elo0),
        shown(c.elo1),
        shown(c.alpha),
        shown(c.beta)
    );
    let _ = writeln!(
        s,
        "LLR {:.2}  bounds ({:.2}, {:.2})",
        r.llr, r.lower, r.upper
    );
    let t = &p.total;
    let score = if t.games == 0 {
        String::new()
    } else {
        format!(" ({:.1}%)", 100.0 * points(t) / t.games as f64)
    };
    let _ = writeln!(
        s,
        "games {}  {a}: W {} D {} L {}{score}; {} seat-swap pairs counted ({} games)",
        t.games,
        t.wins,
        t.draws,
        t.losses,
        t.pairs(),
        t.games_counted()
    );
    s.push_str(&penta_table(a, t, &p.per_variant));
    let _ = writeln!(s, "{}", estimates(p));
    let mut ignored = Vec::new();
    let incomplete = t.games - t.games_counted().min(t.games);
    if incomplete > 0 {
        ignored.push(format!(
            "{incomplete} games outside whole seat-swap pairs (in W/D/L, not in the LLR)"
        ));
    }
    if p.three_player_rows > 0 {
        ignored.push(format!("{} 3-player games", p.three_player_rows));
    }
    if p.other_rows > 0 {
        ignored.push(format!("{} games of other pairings", p.other_rows));
    }
    if !ignored.is_empty() {
        let _ = writeln!(s, "not counted: {}", ignored.join("; "));
    }
    match stopped {
        // Games counted past where the LLR first left its bounds: where
        // that was, whether or not they bring it back inside.
        Some(d) if d.games < t.games => {
            let _ = writeln!(
                s,
                "{} after {} games (LLR {:.2}), where the LLR first left its bounds; the {} games after them are counted above (LLR {:.2} with them)",
                d.decision,
                d.games,
                d.llr,
                t.games - d.games,
                r.llr
            );
        }
        _ => {
            let _ = writeln!(s, "{}", r.decision);
        }
    }
    s
}

/// A's points: a win 1, a draw 1/2.
fn points(t: &SprtCounts) -> f64 {
    t.wins as f64 + 0.5 * t.draws as f64
}

/// The pentanomial Elo with its interval, nElo and LOS of A over B.
fn estimates(p: &HeadToHead) -> String {
    let pct = CONFIDENCE * 100.0;
    use super::tables::tenths;
    let why = crate::ratings::penta_elo_gap(&p.total.penta).unwrap_or("too few pairs");
    let elo = match (p.elo, p.elo_err) {
        (Some(e), Some(err)) => format!("Elo {} +/- {err:.1} ({pct:.0}%, pentanomial)", tenths(e)),
        (Some(e), None) => format!("Elo {} (no {pct:.0}% interval: {why})", tenths(e)),
        _ => format!("Elo - ({why})"),
    };
    let nelo = match (p.nelo, p.nelo_err) {
        (Some(e), Some(err)) => format!("nElo {e:.1} +/- {err:.1}"),
        _ => "nElo -".to_string(),
    };
    let los = p
        .los
        .map_or("LOS -".to_string(), |l| format!("LOS {:.1}%", 100.0 * l));
    format!("{elo}; {nelo}; {los}")
}

/// The match of A against B on one line, as cutechess-cli and fastchess
/// end a match: games, A's score and W-D-L, the draw ratio, the Elo
/// difference with its interval, LOS, and the pentanomial counts of the
/// seat-swap pairs.
///
/// ```text
/// new vs old: 601 games, score 525.0 (87.4%), W-D-L 450-150-1, draws 25.0%; Elo +338.4 +/- 9.7 (95%, pentanomial); nElo +2.3 +/- 0.2; LOS 100.0%; pairs LL-LD-(WL+DD)-WD-WW 0-0-0-150-150
/// ```
pub fn head_to_head_line(p: &HeadToHead) -> String {
    let t = &p.total;
    let (score, draws) = match t.games {
        0 => ("-".to_string(), "-".to_string()),
        n => (
            format!("{:.1} ({:.1}%)", points(t), 100.0 * points(t) / n as f64),
            format!("{:.1}%", 100.0 * t.draws as f64 / n as f64),
        ),
    };
    let penta: Vec<String> = t.penta.iter().map(u64::to_string).collect();
    format!(
        "{} vs {}: {} games, score {score}, W-D-L {}-{}-{}, draws {draws}; {}; pairs LL-LD-(WL+DD)-WD-WW {}",
        p.bot_a,
        p.bot_b,
        t.games,
        t.wins,
        t.draws,
        t.losses,
        estimates(p),
        penta.join("-")
    )
}

/// Pentanomial counts, `all` first, then one row per variant when there
/// are several.
fn penta_table(a: &str, total: &SprtCounts, per_variant: &[SprtCounts]) -> String {
    let mut rows: Vec<&SprtCounts> = vec![total];
    if per_variant.len() > 1 {
        rows.extend(per_variant);
    }
    let label = format!("pairs from {a}'s side");
    let name_w = rows
        .iter()
        .map(|r| r.variant.len() + 2)
        .max()
        .unwrap_or(0)
        .max(label.len());
    let heads = ["LL", "LD", "WL+DD", "WD", "WW"];
    let num_w = total
        .penta
        .iter()
        .map(|c| c.to_string().len())
        .max()
        .unwrap_or(1)
        .max(5);
    let mut s = format!("{label:<name_w$}");
    for h in heads {
        let _ = write!(s, "  {h:>num_w$}");
    }
    s.push('\n');
    for r in rows {
        let _ = write!(s, "{:<name_w$}", format!("  {}", r.variant));
        for c in r.penta {
            let _ = write!(s, "  {c:>num_w$}");
        }
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ratings::sprt::{evaluate, SprtConfig};
    use crate::results::GameRow;

    fn row(id: usize, variant: &str, group: &str, s0: &str, s1: &str, score0: f64) -> GameRow {
        GameRow::two_player(&id.to_string(), variant, group, s0, s1, score0)
    }

    #[test]
    fn prints_counts_estimate_and_decision() {
        let mut rows = Vec::new();
        for (i, v) in ["filo", "kisolo"].iter().enumerate() {
            for g in 0..150 {
                let group = format!("{v}{g}");
                rows.push(row(rows.len(), v, &group, "new", "old", 1.0));
                rows.push(row(rows.len(), v, &group, "old", "new", 0.5 * i as f64));
            }
        }
        rows.push(row(rows.len(), "filo", "lone", "new", "old", 0.0));
        let cfg: SprtConfig = "elo0=0,elo1=5".parse().unwrap();
        let r = evaluate(&rows, "new", "old", &cfg).unwrap();
        let text = sprt_text(&r, None);
        assert!(text.starts_with("SPRT new vs old: H0 new - old = 0, H1 new - old = 5 (normalized Elo), alpha 0.05, beta 0.05\n"), "{text}");
        // 300 lopsided pairs: with hypotheses 5 nElo apart each adds about
        // 0.0175 to the LLR (both constrained fits have a mean near 1/2).
        assert!(
            text.contains(
                "games 601  new: W 450 D 150 L 1 (87.4%); 300 seat-swap pairs counted (600 games)"
            ),
            "{text}"
        );
        assert!(
            text.contains("pairs from new's side     LL     LD  WL+DD     WD     WW\n"),
            "{text}"
        );
        assert!(
            text.contains("  all                      0      0      0    150    150\n"),
            "{text}"
        );
        assert!(
            text.contains("  filo                     0      0      0      0    150\n"),
            "{text}"
        );
        assert!(
            text.contains("  kisolo                   0      0      0    150      0\n"),
            "{text}"
        );
        assert!(
            text.contains("not counted: 1 games outside whole seat-swap pairs"),
            "{text}"
        );
        assert!(text.ends_with("H1 accepted\n"), "{text}");
        assert!(text.contains("Elo "), "{text}");
    }

    /// Games counted past the first crossing of a bound: where it was is
    /// said, also when they leave the LLR past the same bound.
    #[test]
    fn the_first_crossing_is_named_when_games_came_after_it() {
        let mut rows = Vec::new();
        for g in 0..300 {
            let group = format!("g{g}");
            rows.push(row(rows.len(), "filo", &group, "new", "old", 1.0));
            rows.push(row(rows.len(), "filo", &group, "old", "new", 0.5));
        }
        let cfg: SprtConfig = "elo0=0,elo1=5".parse().unwrap();
        let r = evaluate(&rows, "new", "old", &cfg).unwrap();
        let first = Decided {
            decision: r.decision,
            llr: 2.95,
            pairs: 200,
            games: 400,
        };
        let text = sprt_text(&r, Some(&first));
        assert!(
            text.ends_with(&format!(
                "H1 accepted after 400 games (LLR 2.95), where the LLR first left its bounds; the 200 games after them are counted above (LLR {:.2} with them)\n",
                r.llr
            )),
            "{text}"
        );
        // Decided at the last game: the decision alone.
        let last = Decided {
            games: 600,
            ..first
        };
        assert!(sprt_text(&r, Some(&last)).ends_with("\nH1 accepted\n"));
    }

    /// A tiny or huge hypothesis or error rate is written in exponent
    /// form in the header, as the bounds are (it was 300 digits).
    #[test]
    fn the_header_writes_tiny_numbers_in_exponent_form() {
        let rows = vec![row(0, "filo", "g", "new", "old", 1.0)];
        let cfg: SprtConfig = "elo0=0,elo1=1e-300,alpha=1e-30,beta=0.05".parse().unwrap();
        let r = evaluate(&rows, "new", "old", &cfg).unwrap();
        let text = sprt_text(&r, None);
        let head = text.lines().next().unwrap_or_default();
        assert_eq!(
            head,
            "SPRT new vs old: H0 new - old = 0, H1 new - old = 1e-300 (normalized Elo), alpha 1e-30, beta 0.05"
        );
    }
}
