//! Exact fractions for a Swiss's points and tie-breaks (and a knockout's
//! match points): a round's points are shares of games averaged over the
//! variants (thirds, sixths, ...), which binary floating point cannot hold,
//! so that two equal totals summed in another order could differ in their
//! last bit, and a tie (a score group, a drawn knockout match, equal
//! Buchholz) would be decided by rounding instead of by the rules.

use std::cmp::Ordering;

/// A fraction `n / d` in lowest terms, `d > 0`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Exact {
    n: i128,
    d: i128,
}

fn gcd(mut a: i128, mut b: i128) -> i128 {
    a = a.abs();
    b = b.abs();
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.max(1)
}

impl Default for Exact {
    fn default() -> Self {
        Exact::ZERO
    }
}

impl Exact {
    pub const ZERO: Exact = Exact { n: 0, d: 1 };
    pub const ONE: Exact = Exact { n: 1, d: 1 };

    /// `n / d` (`d` must not be 0; a 0 is taken as 1).
    pub fn new(n: i128, d: i128) -> Exact {
        let d = if d == 0 { 1 } else { d };
        let g = gcd(n, d) * d.signum();
        Exact { n: n / g, d: d / g }
    }

    /// The value of a float, exactly (every finite float is a fraction
    /// with a power of two below; a game's score is 0, 1/4, 1/2, ...).
    /// Not finite: 0.
    pub fn from_f64(x: f64) -> Exact {
        if !x.is_finite() || x == 0.0 {
            return Exact::ZERO;
        }
        // x = m * 2^e with an integer mantissa m of at most 53 bits.
        let bits = x.to_bits();
        let sign: i128 = if bits >> 63 == 0 { 1 } else { -1 };
        let exp = ((bits >> 52) & 0x7ff) as i32;
        let frac = (bits & ((1u64 << 52) - 1)) as i128;
        let (m, e) = match exp {
            0 => (frac, -1074),
            _ => (frac | (1i128 << 52), exp - 1075),
        };
        // A score is neither huge nor tiny: keep the numbers in range
        // (a value beyond 2^60 saturates, below 2^-74 is rounded down).
        let (m, e) = match e {
            e if e > 60 => (m, 60),
            e if e < -74 => (m.checked_shr((-74 - e) as u32).unwrap_or(0), -74),
            e => (m, e),
        };
        match e >= 0 {
            true => Exact::new(sign * (m << e), 1),
            false => Exact::new(sign * m, 1i128 << -e),
        }
    }

    pub fn plus(self, o: Exact) -> Exact {
        let g = gcd(self.d, o.d);
        let (a, b) = (self.d / g, o.d / g);
        Exact::new(self.n * b + o.n * a, self.d * b)
    }

    /// `|self - o|`: how far apart two scores are.
    pub fn distance(self, o: Exact) -> Exact {
        let d = self.plus(Exact::new(-o.n, o.d));
        Exact::new(d.n.abs(), d.d)
    }

    pub fn times(self, o: Exact) -> Exact {
        let (g1, g2) = (gcd(self.n, o.d), gcd(o.n, self.d));
        Exact::new((self.n / g1) * (o.n / g2), (self.d / g2) * (o.d / g1))
    }

    /// Divided by a count (`k` > 0; 0 is taken as 1).
    pub fn over(self, k: usize) -> Exact {
        self.times(Exact::new(1, k.max(1) as i128))
    }

    /// The nearest float: equal fractions give the same float.
    pub fn to_f64(self) -> f64 {
        self.n as f64 / self.d as f64
    }
}

impl Ord for Exact {
    fn cmp(&self, o: &Exact) -> Ordering {
        (self.n * o.d).cmp(&(o.n * self.d))
    }
}

impl PartialOrd for Exact {
    fn partial_cmp(&self, o: &Exact) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl std::iter::Sum for Exact {
    fn sum<I: Iterator<Item = Exact>>(it: I) -> Exact {
        it.fold(Exact::ZERO, Exact::plus)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thirds_sum_to_one_in_any_order() {
        let third = Exact::new(1, 3);
        assert_eq!(third.plus(third).plus(third), Exact::ONE);
        // The floats do not: 0 + 0.75/3 + 0.75/3 vs 1/3 + 0.25/3 + 0.25/3.
        let a = [0.0, 0.75, 0.75].iter().fold(0.0, |s, x| s + x / 3.0);
        let b = [1.0, 0.25, 0.25].iter().fold(0.0, |s, x| s + x / 3.0);
        assert_ne!(a, b);
        let ex = |v: [f64; 3]| -> Exact { v.iter().map(|&x| Exact::from_f64(x).over(3)).sum() };
        assert_eq!(ex([0.0, 0.75, 0.75]), ex([1.0, 0.25, 0.25]));
        assert_eq!(ex([0.0, 0.75, 0.75]).to_f64(), 0.5);
    }

    #[test]
    fn floats_are_read_exactly_and_compared() {
        assert_eq!(Exact::from_f64(0.25), Exact::new(1, 4));
        assert_eq!(Exact::from_f64(-3.5), Exact::new(-7, 2));
        assert_eq!(Exact::from_f64(1000.0), Exact::new(1000, 1));
        assert_eq!(Exact::from_f64(f64::NAN), Exact::ZERO);
        assert!(Exact::new(1, 3) > Exact::new(33, 100));
        assert!(Exact::new(-1, 3) < Exact::ZERO);
        assert_eq!(Exact::new(2, -4), Exact::new(-1, 2));
        assert_eq!(Exact::new(1, 6).times(Exact::new(3, 1)), Exact::new(1, 2));
    }
}
