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
    /// (`v` is the row as it was added). Costs N operations instead of the 2·N² of remove + add.
    pub(crate) fn shift(&mut self, w: f64, v: &[f64; N], k: usize, delta: f64) {
        let wd = w * delta;
        for i in 0..k {
            self.m[i][k] += wd * v[i];
        }
        self.m[k][k] += wd * (2.0 * v[k] + delta);
        for j in (k + 1)..N {
            self.m[k][j] += wd * v[j];
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

#[cfg(test)]
mod tests {
    use super::*;

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
        b.shift(1.5, &[1.0, 2.0, 3.0, 4.0], 2, -0.75);
        for i in 0..4 {
            for j in i..4 {
                assert!((a.m[i][j] - b.m[i][j]).abs() < 1e-12, "({i},{j})");
            }
        }
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
