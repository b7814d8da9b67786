//! The analysis from a won position the tables prove: the losing option
//! played is marked at that decision, a winning one is not.

use super::{judge_all, Params};
use crate::engine::diffusion::Diffusion;
use crate::engine::Rules;
use crate::tables::build::built_for_test;
use crate::tables::diffusion::DiffusionTable;
use crate::tables::probe::{option_value, Oracle, Tables};
use crate::tables::{layers_upto, TableGame, Value};

fn params() -> Params {
    Params {
        depth: Some(1),
        time: None,
        threshold: 0.15,
        tables: None,
        exact: true,
        proof_time: std::time::Duration::from_millis(10),
    }
}

#[test]
fn a_won_diffusion_position_thrown_away_is_a_blunder() {
    let dir = built_for_test::<DiffusionTable>(4);
    let tables = Tables::<DiffusionTable>::open(dir.path());
    // The first position of the 4-stone layer that is won, with a losing
    // option (the tables' own values, read as the analysis does not).
    let layer = *layers_upto::<DiffusionTable>(4).last().expect("a layer");
    let (g, win, lose) = (0..DiffusionTable::layer_size(layer))
        .filter_map(|i| DiffusionTable::decode(layer, i))
        .find_map(|g| {
            let Some(Value::Win(_)) = tables.at_turn_start(&g) else {
                return None;
            };
            let mut opts = Vec::new();
            g.options(&mut opts);
            let value = |o| option_value(&tables, &g, o);
            let win = opts
                .iter()
                .copied()
                .find(|&o| matches!(value(o), Some(Value::Win(_))))?;
            let lose = opts
                .iter()
                .copied()
                .find(|&o| matches!(value(o), Some(Value::Loss(_))))?;
            Some((g, win, lose))
        })
        .expect("a won position with a losing option");
    let lost =
        judge_all(g.clone(), &[g.notation(lose)], &params(), &tables, "tables").expect("judged");
    assert_eq!(lost.len(), 1);
    let v = &lost[0];
    assert!(v.blunder, "{v:?}");
    assert_eq!(v.source, "tables");
    assert_eq!(v.best_value.result, Some("win"));
    assert_eq!(v.played_value.result, Some("loss"));
    assert_eq!(v.why.as_deref(), Some("win thrown away: loss now"));
    let kept = judge_all::<Diffusion>(g.clone(), &[g.notation(win)], &params(), &tables, "tables")
        .expect("judged");
    assert!(!kept[0].blunder, "{:?}", kept[0]);
    assert_eq!(kept[0].played_value.result, Some("win"));
    // The same losing option, had the referee applied it (a league's
    // opening), is judged the same but is no one's blunder.
    let mut applied = lost.clone();
    super::mark_applied(&mut applied, [Some("opening")]);
    let v = &applied[0];
    assert!(!v.blunder, "{v:?}");
    assert_eq!((v.applied, v.why.as_deref()), (Some("opening"), None));
    assert_eq!(v.played_value.result, Some("loss"));
}
