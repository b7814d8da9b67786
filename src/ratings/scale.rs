//! The Elo scale and the result of two seats' scores: what the fit, the
//! choice model and the statistics all speak in, below them all. The
//! arrows go one way: the statistics build the fit's and the choice
//! model's evidence, the fit uses the choice model, nothing uses back.

/// `ln(10) / 400`: the logistic slope of the Elo scale.
pub const K: f64 = std::f64::consts::LN_10 / 400.0;

/// The result of a seat with score `a` against one with score `b`: 0 win,
/// 1 draw, 2 loss for `a`.
pub(super) fn cmp_result(a: f64, b: f64) -> usize {
    if (a - b).abs() < 1e-9 {
        1
    } else if a > b {
        0
    } else {
        2
    }
}
