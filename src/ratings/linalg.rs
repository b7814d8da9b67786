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
        let mut d = m.get(j, j);
        for k in 0..j {
            let v = l.a[j * n + k];
            d -= v * v;
        }
        if d.is_nan() || d <= 0.0 || !d.is_finite() {
            return None;
        }
        let d = d.sqrt();
        l.a[j * n + j] = d;
        for i in (j + 1)..n {
            let mut s = m.get(i, j);
            let (ri, rj) = (i * n, j * n);
            for k in 0..j {
                s -= l.a[ri + k] * l.a[rj + k];
            }
            l.a[ri + j] = s / d;
        }
    }
    Some(l)
}

/// Solves `L Lᵀ x = b` given the Cholesky factor.
pub fn solve(l: &Matrix, b: &[f64]) -> Vec<f64> {
    let n = l.n;
    let mut y = b.to_vec();
    for i in 0..n {
        let mut s = y[i];
        for k in 0..i {
            s -= l.a[i * n + k] * y[k];
        }
        y[i] = s / l.a[i * n + i];
    }
    for i in (0..n).rev() {
        let mut s = y[i];
        for k in (i + 1)..n {
            s -= l.a[k * n + i] * y[k];
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
    for i in 0..n {
        for k in 0..n {
            let x = a.get(i, k);
            if x == 0.0 {
                continue;
            }
            for j in 0..n {
                out.a[i * n + j] += x * b.get(k, j);
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
