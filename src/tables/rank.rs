//! Ranking of seed counts: the place of a board (a count per pit, a given
//! total) in the lexicographic order of all boards with that total, and
//! back (docs/tables.md, "Index").

/// Counts of the ways to put `s` seeds into `k` pits holding at most `cap`
/// each: `ways[k][s]`.
#[derive(Clone, Debug)]
pub struct Ways {
    cap: u32,
    ways: Vec<Vec<u64>>,
}

impl Ways {
    pub fn new(pits: usize, cap: u32, max_total: u32) -> Ways {
        let t = max_total as usize;
        let mut ways = vec![vec![0u64; t + 1]; pits + 1];
        ways[0][0] = 1;
        for k in 1..=pits {
            for s in 0..=t {
                ways[k][s] = (0..=cap.min(s as u32) as usize)
                    .map(|v| ways[k - 1][s - v])
                    .sum();
            }
        }
        Ways { cap, ways }
    }

    /// Boards of `k` pits holding `s` seeds in all.
    pub fn count(&self, k: usize, s: u32) -> u64 {
        self.ways
            .get(k)
            .and_then(|w| w.get(s as usize))
            .copied()
            .unwrap_or(0)
    }

    /// The rank of `board` among the boards of its length and total.
    pub fn rank(&self, board: &[u8]) -> u64 {
        let mut rest: u32 = board.iter().map(|&x| u32::from(x)).sum();
        let mut r = 0;
        for (p, &x) in board.iter().enumerate() {
            let after = board.len() - p - 1;
            for v in 0..u32::from(x) {
                r += self.count(after, rest - v);
            }
            rest -= u32::from(x);
        }
        r
    }

    /// The board of `pits` pits holding `total` seeds with rank `r`
    /// (`r < count(pits, total)`).
    pub fn unrank(&self, mut r: u64, total: u32, out: &mut [u8]) {
        let mut rest = total;
        let n = out.len();
        for (p, slot) in out.iter_mut().enumerate() {
            let after = n - p - 1;
            let mut v = 0;
            loop {
                let c = self.count(after, rest - v);
                if r < c || v >= self.cap.min(rest) {
                    break;
                }
                r -= c;
                v += 1;
            }
            *slot = v as u8;
            rest -= v;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_and_unrank_are_inverse_and_dense() {
        let w = Ways::new(4, 3, 12);
        for total in 0..=12 {
            let n = w.count(4, total);
            let mut seen = std::collections::HashSet::new();
            for r in 0..n {
                let mut b = [0u8; 4];
                w.unrank(r, total, &mut b);
                assert!(b.iter().all(|&x| x <= 3));
                assert_eq!(b.iter().map(|&x| x as u32).sum::<u32>(), total);
                assert_eq!(w.rank(&b), r, "{b:?}");
                assert!(seen.insert(b));
            }
        }
        // 4 pits of at most 3: 4^4 boards in all.
        assert_eq!((0..=12).map(|t| w.count(4, t)).sum::<u64>(), 256);
    }
}
