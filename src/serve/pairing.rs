//! Placeholder until the pairing rule lands: uniform random pairings.

/// See the pairing rule.
pub struct PairingConfig {
    pub random_share: f64,
    pub placement_width: f64,
    pub placement_games: u32,
}

/// See the pairing rule.
pub struct Entrant {
    pub id: u64,
    pub elo: Option<f64>,
    pub half_width: Option<f64>,
    pub games: u64,
    pub seat_counts: Vec<u64>,
    pub variant_games: Vec<u64>,
}

/// See the pairing rule.
pub struct LadderVariant {
    pub players: usize,
}

/// See the pairing rule.
#[derive(Clone, Debug)]
pub struct Pick {
    pub variant: usize,
    pub seats: Vec<u64>,
}

/// See the pairing rule.
pub fn pick(
    entrants: &[Entrant],
    variants: &[LadderVariant],
    _config: &PairingConfig,
    _in_flight: &[Pick],
    rng: &mut impl rand::Rng,
) -> Option<Pick> {
    use rand::seq::SliceRandom;
    let ok: Vec<usize> = (0..variants.len())
        .filter(|&v| variants[v].players <= entrants.len())
        .collect();
    let variant = *ok.choose(rng)?;
    let seats = entrants
        .choose_multiple(rng, variants[variant].players)
        .map(|e| e.id)
        .collect();
    Some(Pick { variant, seats })
}
