//! Least-squares building blocks: weighted normal equations that can be added to, subtracted
//! and shifted (so that prefix sums and one-point updates are cheap), and the residual sum of
//! squares they imply.

/// Weighted sums `Σ w·vᵢ·vⱼ` over points, where `v` holds `N - 1` regressors followed by the response.
///
/// `rss()` is the residual sum of squares of the weighted least-squares fit of the response on the
/// regressors. Sums can be added and subtracted, so a region's sums are a difference of prefix sums.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Normal<const N: usize> {
    m: [[f64; N]; N],
}

impl<const N: usize> Default for Normal<N> {
    fn default() -> Self {
        Normal { m: [[0.0; N]; N] }
    }
}

// Matrix code reads best with the indices written out.
#[allow(clippy::needless_range_loop)]
impl<const N: usize> Normal<N> {
    /// Adds one point with weight `w`; `v` is `[regressors.., response]`.
    pub(crate) fn add(&mut self, w: f64, v: &[f64; N]) {
        for i in 0..N {
            let wi = w * v[i];
            for j in i..N {
                self.m[i][j] += wi * v[j];
            }
        }
    }

    /// Changes regressor `k` of a point already added, from `v[k]` to `v[k] + delta`
    /// (`v` is the row as it was added), in the entries of regressor `k` (`column(k)`), the
    /// only ones that change: those of sums that differ in regressor `k` alone, solved by
    /// `LastRegressor`. Costs N operations instead of the 2·N² of remove + add.
    #[inline(always)]
    pub(crate) fn shift(column: &mut [f64; N], w: f64, v: &[f64; N], k: usize, delta: f64) {
        let wd = w * delta;
        for i in 0..k {
            column[i] += wd * v[i];
        }
        column[k] += wd * (2.0 * v[k] + delta);
        for j in (k + 1)..N {
            column[j] += wd * v[j];
        }
    }

    pub(crate) fn minus(&self, other: &Self) -> Self {
        let mut out = *self;
        for i in 0..N {
            for j in i..N {
                out.m[i][j] -= other.m[i][j];
            }
        }
        out
    }

    /// Residual sum of squares of the fit, by symmetric elimination of the regressors.
    /// A regressor that the others already explain (a tiny pivot) is skipped, so a degenerate
    /// region (one point, a constant regressor) still gives the right answer.
    pub(crate) fn rss(&self) -> f64 {
        self.solve().0
    }

    /// Residual sum of squares and the coefficients (0 for skipped regressors).
    pub(crate) fn solve(&self) -> (f64, [f64; N]) {
        let mut a = self.m;
        for i in 0..N {
            for j in 0..i {
                a[i][j] = a[j][i];
            }
        }
        let k = N - 1;
        let mut used = [false; N];
        for p in 0..k {
            let scale = self.m[p][p].abs();
            if a[p][p] <= 1e-11 * scale || a[p][p] <= f64::MIN_POSITIVE {
                continue;
            }
            used[p] = true;
            for i in (p + 1)..N {
                let f = a[i][p] / a[p][p];
                if f == 0.0 {
                    continue;
                }
                for j in (p + 1)..N {
                    a[i][j] -= f * a[p][j];
                }
            }
        }
        let rss = a[k][k].max(0.0);
        // Back substitution on the upper triangle for the coefficients.
        let mut beta = [0.0; N];
        for p in (0..k).rev() {
            if !used[p] {
                continue;
            }
            let mut s = a[p][k];
            for j in (p + 1)..k {
                s -= a[p][j] * beta[j];
            }
            beta[p] = s / a[p][p];
        }
        (rss, beta)
    }

    /// Entry `(i, k)` of the sums for every `i`: what regressor `k` adds, read as `solve` reads
    /// it (the upper triangle).
    pub(crate) fn column(&self, k: usize) -> [f64; N] {
        std::array::from_fn(|i| self.m[i.min(k)][i.max(k)])
    }

    /// Prepares `LastRegressor::solve` for sums that equal these everywhere but in the last
    /// regressor's entries.
    pub(crate) fn last_regressor(&self) -> LastRegressor<N> {
        LastRegressor::new(self)
    }
}

/// `Normal::solve` for many sums that differ only in the last regressor (a staircase's step
/// count, tried at every period and phase, beside a trend that stays): the elimination of the
/// other regressors is done once, and each solve redoes only the entries of that regressor.
/// The same operations on the same numbers as `solve`, in the same order: the results are
/// equal to its bit for bit.
pub(crate) struct LastRegressor<const N: usize> {
    /// The sums after `solve`'s elimination of the regressors before the last, outside the last
    /// regressor's row and column.
    a: [[f64; N]; N],
    /// `f[p][i]`: the factor by which `solve` takes row `p` from row `i`.
    f: [[f64; N]; N],
    used: [bool; N],
}

// Matrix code reads best with the indices written out.
#[allow(clippy::needless_range_loop)]
impl<const N: usize> LastRegressor<N> {
    /// The last regressor.
    const S: usize = N - 2;

    fn new(sums: &Normal<N>) -> Self {
        let s = Self::S;
        let mut a = sums.m;
        for i in 0..N {
            for j in 0..i {
                a[i][j] = a[j][i];
            }
        }
        let mut f = [[0.0; N]; N];
        let mut used = [false; N];
        // `solve`'s pivots before `s`, on the entries outside row and column `s`: none of them
        // reads an entry of `s`, so they come out as in `solve`.
        for p in 0..s {
            let scale = sums.m[p][p].abs();
            if a[p][p] <= 1e-11 * scale || a[p][p] <= f64::MIN_POSITIVE {
                continue;
            }
            used[p] = true;
            for i in (p + 1)..N {
                if i == s {
                    continue;
                }
                f[p][i] = a[i][p] / a[p][p];
                if f[p][i] == 0.0 {
                    continue;
                }
                for j in (p + 1)..N {
                    if j != s {
                        a[i][j] -= f[p][i] * a[p][j];
                    }
                }
            }
        }
        LastRegressor { a, f, used }
    }

    /// Residual sum of squares and the last regressor's coefficient, as `solve` gives them, for
    /// sums equal to the prepared ones but for the last regressor's entries `column` (as
    /// `Normal::column` reads them).
    #[inline]
    pub(crate) fn solve(&self, column: [f64; N]) -> (f64, f64) {
        let (s, k) = (Self::S, N - 1);
        // Row `s` and column `s` of the matrix being eliminated (symmetric at the start).
        let mut row = column;
        let mut col = column;
        for p in 0..s {
            if !self.used[p] {
                continue;
            }
            for i in (p + 1)..N {
                if i == s {
                    let f = row[p] / self.a[p][p];
                    if f == 0.0 {
                        continue;
                    }
                    for j in (p + 1)..N {
                        let apj = if j == s { col[p] } else { self.a[p][j] };
                        row[j] -= f * apj;
                    }
                } else {
                    let f = self.f[p][i];
                    if f == 0.0 {
                        continue;
                    }
                    col[i] -= f * col[p];
                }
            }
        }
        // `row[s]` is the pivot `a[s][s]`; `col[k]` is `a[k][s]`, `row[k]` is `a[s][k]`.
        let mut rss = self.a[k][k];
        let scale = column[s].abs();
        let pivot = row[s];
        if pivot <= 1e-11 * scale || pivot <= f64::MIN_POSITIVE {
            return (rss.max(0.0), 0.0);
        }
        let f = col[k] / pivot;
        if f != 0.0 {
            rss -= f * row[k];
        }
        (rss.max(0.0), row[k] / pivot)
    }
}

/// Median of the values (NaN-free input); `None` when empty.
pub(crate) fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    })
}

/// Robust standard deviation: 1.4826 times the median absolute deviation from the median.
pub(crate) fn robust_sigma(values: &[f64]) -> f64 {
    let Some(mid) = median(values) else {
        return 0.0;
    };
    let dev: Vec<f64> = values.iter().map(|v| (v - mid).abs()).collect();
    1.4826 * median(&dev).unwrap_or(0.0)
}

/// `ceil(a / p)` for integers, correct for negative `a`.
pub(crate) fn ceil_div(a: i64, p: i64) -> i64 {
    -((-a).div_euclid(p))
}

/// `gi.rem_euclid(period)` of each of `g` in turn (a period tried on every point of a curve):
/// carried on from the point before where it lies less than a period further (a sorted grid),
/// one division else. The same numbers as the division, without one a point.
pub(crate) fn residues(g: &[i64], period: i64) -> impl Iterator<Item = usize> + '_ {
    let mut at: Option<(i64, i64)> = None;
    g.iter().map(move |&gi| {
        let r = match at.and_then(|(last, r)| Some((gi.checked_sub(last)?, r))) {
            Some((step, r)) if (0..period).contains(&step) => {
                let r = r + step;
                if r >= period {
                    r - period
                } else {
                    r
                }
            }
            _ => gi.rem_euclid(period),
        };
        at = Some((gi, r));
        r as usize
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn residues_are_those_of_the_division() {
        let grids: [&[i64]; 4] = [
            &[-7, -3, 0, 1, 2, 3, 9, 10, 40, 41, 41, 100],
            &[5, 3, 8, -20, 7, 7, 0],
            &[i64::MIN, -1, 0, i64::MAX, i64::MIN + 3],
            &[],
        ];
        for g in grids {
            for period in [1, 2, 3, 7, 64, 256] {
                let want: Vec<usize> = g.iter().map(|v| v.rem_euclid(period) as usize).collect();
                assert_eq!(
                    residues(g, period).collect::<Vec<_>>(),
                    want,
                    "{g:?} {period}"
                );
            }
        }
    }

    #[test]
    fn straight_line_has_zero_rss_and_right_coefficients() {
        let mut n = Normal::<3>::default();
        for x in 0..10 {
            let x = x as f64;
            n.add(1.0, &[1.0, x, 2.0 + 3.0 * x]);
        }
        let (rss, beta) = n.solve();
        assert!(rss < 1e-9, "rss {rss}");
        assert!(
            (beta[0] - 2.0).abs() < 1e-9 && (beta[1] - 3.0).abs() < 1e-9,
            "{beta:?}"
        );
    }

    #[test]
    fn constant_fit_rss_is_sum_of_squared_deviations() {
        let mut n = Normal::<2>::default();
        for y in [1.0, 2.0, 3.0, 6.0] {
            n.add(1.0, &[1.0, y]);
        }
        // mean 3, deviations 4 + 1 + 0 + 9
        assert!((n.rss() - 14.0).abs() < 1e-9);
    }

    #[test]
    fn collinear_regressor_is_skipped_not_divided_by_zero() {
        let mut n = Normal::<3>::default();
        for y in [1.0, 2.0, 4.0] {
            n.add(1.0, &[1.0, 5.0, y]);
        }
        let rss = n.rss();
        assert!((rss - 14.0 / 3.0).abs() < 1e-9, "rss {rss}");
    }

    #[test]
    fn minus_takes_back_what_was_added() {
        let mut a = Normal::<3>::default();
        a.add(2.0, &[1.0, 3.0, 4.0]);
        let mut both = a;
        both.add(0.5, &[1.0, -1.0, 7.0]);
        let back = both.minus(&{
            let mut b = Normal::<3>::default();
            b.add(0.5, &[1.0, -1.0, 7.0]);
            b
        });
        for i in 0..3 {
            for j in i..3 {
                assert!((back.m[i][j] - a.m[i][j]).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn shift_equals_adding_the_changed_row() {
        let mut a = Normal::<4>::default();
        a.add(0.5, &[1.0, -1.0, 0.5, 2.0]);
        let mut b = a;
        a.add(1.5, &[1.0, 2.0, 2.25, 4.0]);
        b.add(1.5, &[1.0, 2.0, 3.0, 4.0]);
        let mut column = b.column(2);
        Normal::shift(&mut column, 1.5, &[1.0, 2.0, 3.0, 4.0], 2, -0.75);
        for (i, (x, y)) in a.column(2).iter().zip(column).enumerate() {
            assert!((x - y).abs() < 1e-12, "({i},2)");
        }
    }

    /// `LastRegressor` gives what `solve` gives, bit for bit, on sums that differ in the last
    /// regressor only: degenerate ones too (a constant regressor, a zero column).
    #[test]
    fn last_regressor_solves_exactly_as_solve() {
        let rows = |step: &dyn Fn(f64) -> f64, t0: f64| -> Normal<5> {
            let mut n = Normal::<5>::default();
            for i in 0..40 {
                let t = t0 + i as f64 / 39.0;
                let c = 1.0 + 0.3 * t + (i * 7 % 5) as f64 * 0.01 + (t / 0.1).ceil();
                n.add(1.0 / (c * c), &[1.0, t, t * t, step(t), c]);
            }
            n
        };
        for t0 in [0.0, 5.0] {
            let base = rows(&|_| 0.0, t0);
            let solver = base.last_regressor();
            for period in [0.0, 0.05, 0.1, 0.25, 0.3, 1e9] {
                let sums = rows(
                    &|t| {
                        if period > 0.0 {
                            (t / period).ceil()
                        } else {
                            0.0
                        }
                    },
                    t0,
                );
                let (rss, beta) = sums.solve();
                let (fast_rss, fast_beta) = solver.solve(sums.column(3));
                assert_eq!(rss.to_bits(), fast_rss.to_bits(), "rss, {t0} {period}");
                assert_eq!(
                    beta[3].to_bits(),
                    fast_beta.to_bits(),
                    "beta, {t0} {period}"
                );
            }
        }
        // A constant first regressor (all zero): skipped in both.
        let mut n = Normal::<5>::default();
        for i in 0..10 {
            let t = i as f64;
            n.add(1.0, &[0.0, t, t * t, (t / 3.0).ceil(), 2.0 + t]);
        }
        let (rss, beta) = n.solve();
        let (fast_rss, fast_beta) = n.last_regressor().solve(n.column(3));
        assert_eq!(
            (rss.to_bits(), beta[3].to_bits()),
            (fast_rss.to_bits(), fast_beta.to_bits())
        );
    }

    #[test]
    fn ceil_div_rounds_up_for_both_signs() {
        assert_eq!(ceil_div(5, 4), 2);
        assert_eq!(ceil_div(4, 4), 1);
        assert_eq!(ceil_div(0, 4), 0);
        assert_eq!(ceil_div(-3, 4), 0);
        assert_eq!(ceil_div(-4, 4), -1);
    }

    #[test]
    fn robust_sigma_ignores_one_outlier() {
        let v = [1.0, 1.1, 0.9, 1.0, 1.05, 0.95, 100.0];
        assert!(robust_sigma(&v) < 0.2);
    }
}
