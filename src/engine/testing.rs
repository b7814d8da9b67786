//! Helpers shared by the games' rule tests (test builds only).

use super::Rules;

/// Plays space-separated options in canonical notation. Panics on an
/// unparsable or illegal option, showing the board, and checks the game's
/// invariants after each.
pub fn play<G: Rules>(g: &mut G, moves: &str) {
    for m in moves.split_whitespace() {
        let opt = g.parse(m).unwrap_or_else(|e| panic!("{m}: {e}"));
        if let Err(e) = g.apply(opt) {
            panic!("{m}: {e}\n{}", g.render());
        }
        if let Err(e) = g.check_invariants() {
            panic!("after {m}: {e}\n{}", g.render());
        }
    }
}

/// The legal options of the current decision, in canonical notation.
pub fn legal<G: Rules>(g: &G) -> Vec<String> {
    let mut buf = Vec::new();
    g.options(&mut buf);
    buf.into_iter().map(|o| g.notation(o)).collect()
}

/// Replays the `steps` of one game recorded by an independent reference
/// implementation (`[[legal options...], chosen option]` per decision):
/// before every decision our legal list must equal the recorded one, in
/// order. Returns the options played.
pub fn replay_reference_steps<G: Rules>(
    g: &mut G,
    steps: &serde_json::Value,
    game: usize,
) -> Vec<String> {
    let mut moves = Vec::new();
    for step in steps.as_array().expect("steps is an array") {
        let want: Vec<String> = step[0]
            .as_array()
            .expect("a step starts with the legal list")
            .iter()
            .map(|o| o.as_str().expect("options are strings").to_string())
            .collect();
        assert_eq!(
            legal(g),
            want,
            "game {game} after {moves:?}\n{}",
            g.render()
        );
        let m = step[1].as_str().expect("the chosen option is a string");
        play(g, m);
        moves.push(m.to_string());
    }
    moves
}
