//! Dense symmetric positive-definite algebra for the rating fit: Cholesky
//! factorisation, solve and inverse. Owns nothing else; no I/O.
//!
//! The systems are small (one unknown per bot plus one per variant), so a
//! plain row-major `Vec<f64>` is enough: 200 bots factor in about a
//! millisecond.

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
}

/// Lower-triangular Cholesky factor `L` with `A = L Lᵀ`, or `None` when `A`
/// is not (numerically) positive definite.
pub fn cholesky(m: &Matrix) -> Option<Matrix> {
    let n = m.n;
    let mut l = Matrix::zeros(n);
    for j in 0..n {
        let (done, rest) = l.a.split_at_mut((j + 1) * n);
        let row_j = &mut done[j * n..];
        let d = sub_dot(m.get(j, j), &row_j[..j], &row_j[..j]);
        if d.is_nan() || d <= 0.0 || !d.is_finite() {
            return None;
        }
        let d = d.sqrt();
        row_j[j] = d;
        let row_j = &row_j[..j];
        for (r, row_i) in rest.chunks_exact_mut(n.max(1)).enumerate() {
            let i = j + 1 + r;
            row_i[j] = sub_dot(m.get(i, j), &row_i[..j], row_j) / d;
        }
    }
    Some(l)
}

/// `s - a_0 b_0 - a_1 b_1 - ...`, in that order (the results stay the
/// same to the last bit), over slices of the same length: slices, not
/// indexes, so that the loop stays tight in unoptimised test builds too.
#[inline]
fn sub_dot(mut s: f64, a: &[f64], b: &[f64]) -> f64 {
    for (x, y) in a.iter().zip(b) {
        s -= x * y;
    }
    s
}

/// Solves `L Lᵀ x = b` given the Cholesky factor.
pub fn solve(l: &Matrix, b: &[f64]) -> Vec<f64> {
    let n = l.n;
    let mut y = b.to_vec();
    for (i, row) in l.a.chunks_exact(n.max(1)).enumerate() {
        y[i] = sub_dot(y[i], &row[..i], &y[..i]) / row[i];
    }
    for i in (0..n).rev() {
        let mut s = y[i];
        for (row_k, yk) in l.a.chunks_exact(n).skip(i + 1).zip(&y[i + 1..]) {
            s -= row_k[i] * yk;
        }
        y[i] = s / l.a[i * n + i];
    }
    y
}

/// The inverse of `L Lᵀ`, column by column.
pub fn inverse(l: &Matrix) -> Matrix {
    let n = l.n;
    let mut inv = Matrix::zeros(n);
    let mut e = vec![0.0; n];
    for j in 0..n {
        e.iter_mut().for_each(|x| *x = 0.0);
        e[j] = 1.0;
        let col = solve(l, &e);
        for i in 0..n {
            inv.a[i * n + j] = col[i];
        }
    }
    inv
}

/// `A B A` for symmetric `A` and `B` of the same size: the sandwich
/// covariance `H⁻¹ B H⁻¹` (bread `A = H⁻¹`, meat `B`).
pub fn sandwich(bread: &Matrix, meat: &Matrix) -> Matrix {
    product(&product(bread, meat), bread)
}

/// `A B` for square `A` and `B` of the same size (rows of `A` skip their
/// zeros: a bread of several groups is block-diagonal).
fn product(a: &Matrix, b: &Matrix) -> Matrix {
    let n = a.n;
    let mut out = Matrix::zeros(n);
    for (row_a, row_out) in
        a.a.chunks_exact(n.max(1))
            .zip(out.a.chunks_exact_mut(n.max(1)))
    {
        for (&x, row_b) in row_a.iter().zip(b.a.chunks_exact(n.max(1))) {
            if x == 0.0 {
                continue;
            }
            for (o, y) in row_out.iter_mut().zip(row_b) {
                *o += x * y;
            }
        }
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
}
