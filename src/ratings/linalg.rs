//! Dense symmetric positive-definite algebra for the rating fit: Cholesky
//! factorisation, solve, inverse and the sandwich product. Owns nothing
//! else; no I/O.
//!
//! The matrices have one row per bot (plus one per variant), so 1,000 or
//! 2,000 bots make 8 or 32 MB: every loop here reads rows, not columns,
//! works on a few rows or columns at once so that what it streams from
//! memory serves several results, and sums in several interleaved partial
//! sums so that it vectorises. Every sum is in a fixed order written out
//! below (Rust neither reorders nor fuses floating-point operations), so
//! the results are the same to the last bit run to run and between builds.

// Index loops read like the textbook algorithms here.
#![allow(clippy::needless_range_loop)]

/// A square matrix, row-major.
#[derive(Clone, Debug)]
pub struct Matrix {
    pub n: usize,
    pub a: Vec<f64>,
}

impl Matrix {
    pub fn zeros(n: usize) -> Self {
        Matrix {
            n,
            a: vec![0.0; n * n],
        }
    }

    #[inline]
    pub fn get(&self, i: usize, j: usize) -> f64 {
        self.a[i * self.n + j]
    }

    #[inline]
    pub fn add(&mut self, i: usize, j: usize, v: f64) {
        self.a[i * self.n + j] += v;
    }

    /// Copies the lower triangle onto the upper one.
    fn mirror_lower(&mut self) {
        let n = self.n;
        for i in 0..n {
            for j in 0..i {
                self.a[j * n + i] = self.a[i * n + j];
            }
        }
    }
}

/// Partial sums per dot product (`dot`, `dot4`).
const LANES: usize = 4;

/// `Σ a_k b_k` over slices of the same length, in `LANES` interleaved
/// partial sums added in a fixed order.
#[inline]
pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    let (ca, cb) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    let mut acc = [0.0f64; LANES];
    for (x, y) in ca.zip(cb) {
        for k in 0..LANES {
            acc[k] += x[k] * y[k];
        }
    }
    let mut s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for (x, y) in ra.iter().zip(rb) {
        s += x * y;
    }
    s
}

/// The dot products of `x` with four slices of its length at once (`x`
/// read once for all four), each summed as `dot` sums it.
#[inline]
fn dot4(x: &[f64], r: [&[f64]; 4]) -> [f64; 4] {
    let len = x.len();
    let r = r.map(|s| &s[..len]);
    let whole = len - len % LANES;
    let mut acc = [[0.0f64; LANES]; 4];
    let mut k = 0;
    while k < whole {
        let xs = &x[k..k + LANES];
        for (t, row) in r.iter().enumerate() {
            let ys = &row[k..k + LANES];
            for l in 0..LANES {
                acc[t][l] += xs[l] * ys[l];
            }
        }
        k += LANES;
    }
    let mut out = [0.0; 4];
    for t in 0..4 {
        let a = acc[t];
        let mut s = (a[0] + a[1]) + (a[2] + a[3]);
        for k in whole..len {
            s += x[k] * r[t][k];
        }
        out[t] = s;
    }
    out
}

/// Lower-triangular Cholesky factor `L` with `A = L Lᵀ`, or `None` when `A`
/// is not (numerically) positive definite.
///
/// Crout's order, four columns at a time: each row below the four is read
/// once for the four dot products it takes with their rows (`dot4`), so
/// that the matrix streams through the cache a quarter as often.
pub fn cholesky(m: &Matrix) -> Option<Matrix> {
    let n = m.n;
    let mut l = Matrix::zeros(n);
    let mut j0 = 0;
    while j0 < n {
        let jb = (n - j0).min(4);
        // The diagonal block, column by column.
        for j in j0..j0 + jb {
            let (done, rest) = l.a.split_at_mut((j + 1) * n);
            let row_j = &mut done[j * n..];
            let d = m.get(j, j) - dot(&row_j[..j], &row_j[..j]);
            if d.is_nan() || d <= 0.0 || !d.is_finite() {
                return None;
            }
            let d = d.sqrt();
            row_j[j] = d;
            for i in j + 1..j0 + jb {
                let row_i = &mut rest[(i - j - 1) * n..(i - j) * n];
                row_i[j] = (m.get(i, j) - dot(&row_i[..j], &row_j[..j])) / d;
            }
        }
        // The rows below it: the four dot products over the columns
        // before the block at once, then the block's own columns.
        let (done, rest) = l.a.split_at_mut((j0 + jb) * n);
        let block: Vec<&[f64]> = (0..4)
            .map(|t| {
                let j = j0 + t.min(jb - 1);
                &done[j * n..j * n + n]
            })
            .collect();
        let heads = [
            &block[0][..j0],
            &block[1][..j0],
            &block[2][..j0],
            &block[3][..j0],
        ];
        for (r, row_i) in rest.chunks_exact_mut(n.max(1)).enumerate() {
            let i = j0 + jb + r;
            let s = dot4(&row_i[..j0], heads);
            for t in 0..jb {
                let j = j0 + t;
                let mut v = m.get(i, j) - s[t];
                for u in 0..t {
                    v -= row_i[j0 + u] * block[t][j0 + u];
                }
                row_i[j] = v / block[t][j];
            }
        }
        j0 += jb;
    }
    Some(l)
}

/// Solves `L Lᵀ x = b` given the Cholesky factor. Both substitutions read
/// `L` by rows: the backward one (by `Lᵀ`) subtracts each solved unknown's
/// row from the right-hand side instead of taking a column's dot product.
pub fn solve(l: &Matrix, b: &[f64]) -> Vec<f64> {
    let n = l.n;
    let mut y = b.to_vec();
    for (i, row) in l.a.chunks_exact(n.max(1)).enumerate() {
        y[i] = (y[i] - dot(&row[..i], &y[..i])) / row[i];
    }
    for i in (0..n).rev() {
        let row = &l.a[i * n..i * n + n];
        let xi = y[i] / row[i];
        y[i] = xi;
        for (yk, lk) in y[..i].iter_mut().zip(&row[..i]) {
            *yk -= lk * xi;
        }
    }
    y
}

/// The inverse of `L Lᵀ`: `W = L⁻¹` by rows, then `Wᵀ W`, each entry a
/// dot product of two rows of `Wᵀ` taken four at a time.
pub fn inverse(l: &Matrix) -> Matrix {
    let n = l.n;
    // W = L⁻¹, lower triangular: row i is (e_i - Σ_{k<i} L_ik W_k) / L_ii.
    let mut w = Matrix::zeros(n);
    for i in 0..n {
        let (before, rest) = w.a.split_at_mut(i * n);
        let row = &mut rest[..n];
        row[i] = 1.0;
        for k in 0..i {
            let c = l.a[i * n + k];
            if c != 0.0 {
                for (x, y) in row[..=k].iter_mut().zip(&before[k * n..k * n + k + 1]) {
                    *x -= c * y;
                }
            }
        }
        let d = l.a[i * n + i];
        row[..=i].iter_mut().for_each(|x| *x /= d);
    }
    // U = Wᵀ, upper triangular: (L Lᵀ)⁻¹_ij = Σ_{k ≥ max(i, j)} U_ik U_jk.
    let mut u = Matrix::zeros(n);
    for i in 0..n {
        for j in 0..=i {
            u.a[j * n + i] = w.a[i * n + j];
        }
    }
    drop(w);
    let mut inv = Matrix::zeros(n);
    let mut j0 = 0;
    while j0 < n {
        let jb = (n - j0).min(4);
        let rows: [&[f64]; 4] = std::array::from_fn(|t| {
            let j = j0 + t.min(jb - 1);
            &u.a[j * n..j * n + n]
        });
        for i in j0..n {
            let ui = &u.a[i * n + i..i * n + n];
            let s = dot4(ui, rows.map(|r| &r[i..]));
            for t in 0..jb {
                if j0 + t <= i {
                    inv.a[i * n + j0 + t] = s[t];
                }
            }
        }
        j0 += jb;
    }
    inv.mirror_lower();
    inv
}

/// `A B A` for symmetric `A` and `B` of the same size: the sandwich
/// covariance `H⁻¹ B H⁻¹` (bread `A = H⁻¹`, meat `B`). Symmetric: the
/// lower triangle is computed, the upper one copied.
pub fn sandwich(bread: &Matrix, meat: &Matrix) -> Matrix {
    let ab = product(bread, meat, false);
    let mut out = product(&ab, bread, true);
    out.mirror_lower();
    out
}

/// Columns of a tile of `product`, and rows of `b` per pass over it: a
/// tile of `b` (128 KB) stays in the cache while every row of `a` uses it.
const TILE_COLUMNS: usize = 256;
const TILE_ROWS: usize = 64;

/// `A B` for square `A` and `B` of the same size, only `j ≤ i` when
/// `lower` (the rest is left 0). Each entry is `Σ_k a_ik b_kj` summed in
/// the order of `k`, skipping the zeros of `A` (a bread of several groups
/// is block-diagonal); the loops go by tiles of `b`, four rows of the
/// result at a time.
fn product(a: &Matrix, b: &Matrix, lower: bool) -> Matrix {
    let n = a.n;
    let mut out = Matrix::zeros(n);
    let mut jt = 0;
    while jt < n {
        let je = (jt + TILE_COLUMNS).min(n);
        let mut kt = 0;
        while kt < n {
            let ke = (kt + TILE_ROWS).min(n);
            for (ib, rows) in out.a.chunks_mut(4 * n.max(1)).enumerate() {
                let i0 = 4 * ib;
                if lower && i0 + 3 < jt {
                    continue;
                }
                for (r, row) in rows.chunks_exact_mut(n).enumerate() {
                    let i = i0 + r;
                    let end = if lower { je.min(i + 1) } else { je };
                    if end <= jt {
                        continue;
                    }
                    let a_row = &a.a[i * n..i * n + n];
                    let seg = &mut row[jt..end];
                    for k in kt..ke {
                        let x = a_row[k];
                        if x == 0.0 {
                            continue;
                        }
                        let b_seg = &b.a[k * n + jt..k * n + end];
                        for (o, y) in seg.iter_mut().zip(b_seg) {
                            *o += x * y;
                        }
                    }
                }
            }
            kt = ke;
        }
        jt = je;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solves_and_inverts_a_small_spd_system() {
        // A = [[4, 2], [2, 3]]: det 8, inverse [[3, -2], [-2, 4]] / 8.
        let m = Matrix {
            n: 2,
            a: vec![4.0, 2.0, 2.0, 3.0],
        };
        let l = cholesky(&m).expect("positive definite");
        let x = solve(&l, &[2.0, 1.0]);
        assert!((x[0] - 0.5).abs() < 1e-12 && x[1].abs() < 1e-12);
        let inv = inverse(&l);
        let want = [3.0 / 8.0, -2.0 / 8.0, -2.0 / 8.0, 4.0 / 8.0];
        for (g, w) in inv.a.iter().zip(want) {
            assert!((g - w).abs() < 1e-12);
        }
        assert!(cholesky(&Matrix {
            n: 2,
            a: vec![1.0, 2.0, 2.0, 1.0]
        })
        .is_none());
    }

    /// A symmetric positive-definite matrix of size `n` with entries of
    /// every size (a pseudo-random Gram matrix plus a diagonal).
    fn spd(n: usize, seed: u64) -> Matrix {
        let mut s = seed;
        let mut next = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) - 0.5
        };
        let g: Vec<f64> = (0..n * n).map(|_| next()).collect();
        let mut m = Matrix::zeros(n);
        for i in 0..n {
            for j in 0..n {
                let v: f64 = (0..n).map(|k| g[i * n + k] * g[j * n + k]).sum();
                m.a[i * n + j] = v + if i == j { 0.5 } else { 0.0 };
            }
        }
        m
    }

    /// The textbook algorithms, one entry at a time, against the blocked
    /// ones: every size around the blocks' edges (1 to 4 columns left over,
    /// tiles of the product cut short).
    #[test]
    fn blocked_algorithms_match_the_textbook_ones() {
        for n in [1, 2, 3, 4, 5, 7, 8, 9, 13, 70, 300] {
            let m = spd(n, n as u64);
            let l = cholesky(&m).expect("positive definite");
            for i in 0..n {
                for j in 0..n {
                    let llt: f64 = (0..n).map(|k| l.get(i, k) * l.get(j, k)).sum();
                    let tol = 1e-9 * m.get(i, i).max(m.get(j, j));
                    assert!((llt - m.get(i, j)).abs() < tol, "n {n} L Lᵀ ({i}, {j})");
                    assert!(j <= i || l.get(i, j) == 0.0);
                }
            }
            let inv = inverse(&l);
            for i in 0..n {
                for j in 0..n {
                    let e: f64 = (0..n).map(|k| m.get(i, k) * inv.get(k, j)).sum();
                    let want = if i == j { 1.0 } else { 0.0 };
                    assert!((e - want).abs() < 1e-6, "n {n} A A⁻¹ ({i}, {j}) = {e}");
                    assert_eq!(inv.get(i, j), inv.get(j, i));
                }
            }
            let b: Vec<f64> = (0..n).map(|i| i as f64 - 1.5).collect();
            let x = solve(&l, &b);
            for i in 0..n {
                let e: f64 = (0..n).map(|k| m.get(i, k) * x[k]).sum();
                assert!((e - b[i]).abs() < 1e-6, "n {n} solve row {i}");
            }
            let meat = spd(n, 7 * n as u64 + 1);
            let s = sandwich(&inv, &meat);
            let mut ab = Matrix::zeros(n);
            for i in 0..n {
                for k in 0..n {
                    ab.a[i * n + k] = (0..n).map(|q| inv.get(i, q) * meat.get(q, k)).sum();
                }
            }
            for i in 0..n {
                for j in 0..=i {
                    let want: f64 = (0..n).map(|k| ab.get(i, k) * inv.get(k, j)).sum();
                    let tol = 1e-9 * (1.0 + want.abs());
                    assert!(
                        (s.get(i, j) - want).abs() < tol,
                        "n {n} sandwich ({i}, {j})"
                    );
                    assert_eq!(s.get(i, j), s.get(j, i));
                }
            }
        }
    }
}
