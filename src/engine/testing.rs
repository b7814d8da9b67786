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

/// Replays every game of `file` (in tests/data/rules/), recorded by an
/// independent implementation written from the rule text and the rulings
/// alone: one JSON object a line with `players`, `max_plies`, `options`
/// (the variant's), `steps` (`[[legal options...], chosen option]` per
/// decision: before each, our legal list must equal the recorded one, in
/// order), `result` (`ranks`: 0 for a winner, and `reason`), `plies`, and
/// `final`: keys of the final state, each equal to ours (the state a bot
/// and `arena state` see). Returns how many games agreed (a game that
/// does not fails the test).
pub fn agrees_with_reference(variant: super::Variant, file: &str) -> usize {
    let path = format!("{}/tests/data/rules/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let strings = |v: &serde_json::Value| -> Vec<String> {
        let list = v.as_array().expect("a list");
        list.iter()
            .map(|o| o.as_str().expect("a string").to_string())
            .collect()
    };
    let mut games = 0;
    for (n, line) in text.lines().enumerate() {
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{path}:{}: {e}", n + 1));
        let options = v["options"].as_object().into_iter().flatten();
        let settings = super::Settings {
            players: v["players"].as_u64().expect("players") as usize,
            max_plies: v["max_plies"].as_u64().expect("max_plies") as u32,
            options: options
                .map(|(k, o)| (k.clone(), o.as_str().map_or(o.to_string(), str::to_string)))
                .collect(),
        };
        let mut g =
            super::Game::new(variant, &settings).unwrap_or_else(|e| panic!("game {n}: {e}"));
        let mut moves = Vec::new();
        for step in v["steps"].as_array().expect("steps") {
            assert_eq!(
                g.legal(),
                strings(&step[0]),
                "game {n} after {moves:?}\n{}",
                g.render()
            );
            let m = step[1].as_str().expect("the chosen option");
            g.play(m)
                .unwrap_or_else(|e| panic!("game {n} after {moves:?}: {m}: {e}"));
            moves.push(m.to_string());
        }
        let o = g
            .outcome()
            .unwrap_or_else(|| panic!("game {n} is not over after {moves:?}"));
        let ranks: Vec<u64> = o.ranks[..settings.players]
            .iter()
            .map(|&r| u64::from(r))
            .collect();
        let want_ranks: Vec<u64> = v["result"]["ranks"]
            .as_array()
            .expect("result.ranks")
            .iter()
            .map(|r| r.as_u64().expect("a rank"))
            .collect();
        assert_eq!(
            (ranks, o.reason.name()),
            (
                want_ranks,
                v["result"]["reason"].as_str().expect("result.reason")
            ),
            "game {n}: {moves:?}"
        );
        assert_eq!(
            u64::from(g.plies()),
            v["plies"].as_u64().expect("plies"),
            "game {n}: {moves:?}"
        );
        let ours = g.snapshot();
        for (key, want) in v["final"].as_object().into_iter().flatten() {
            assert_eq!(&ours[key], want, "game {n}: `{key}` of the final state");
        }
        games += 1;
    }
    games
}
