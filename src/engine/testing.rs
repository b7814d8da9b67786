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
