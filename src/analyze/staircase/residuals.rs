//! What the fit says at each point: residuals with or without the steps, and where the flat
//! part really ends.

use super::{model_step, Bounds, Cost, Staircase};
use crate::analyze::fit::Normal;

impl Cost {
    /// Relative residual of every point under a staircase, or under the baseline when `st` is `None`.
    pub(crate) fn residuals(&self, bounds: Bounds, st: Option<(i64, i64)>) -> Vec<f64> {
        let (_, flat) = self.flat[bounds.knee].solve();
        let mut tail = Normal::<3>::default();
        for i in bounds.end..self.len() {
            tail.add(self.w[i], &[1.0, self.t[i], self.c[i]]);
        }
        let (_, line) = tail.solve();
        let middle: Box<dyn Fn(usize) -> f64 + '_> = match st {
            Some((period, residue)) => Box::new(self.middle_model(bounds, period, residue)),
            None => {
                let mut sums = Normal::<4>::default();
                for i in bounds.knee..bounds.end {
                    sums.add(self.w[i], &self.trend_row(i));
                }
                let (_, b) = sums.solve();
                Box::new(move |i| {
                    let r = self.trend_row(i);
                    b[0] + b[1] * r[1] + b[2] * r[2]
                })
            }
        };
        (0..self.len())
            .map(|i| {
                let fitted = if i < bounds.knee {
                    flat[0]
                } else if i < bounds.end {
                    middle(i)
                } else {
                    line[0] + line[1] * self.t[i]
                };
                (self.c[i] - fitted) / self.c[i]
            })
            .collect()
    }

    /// Relative residual of point `i` under the steps and trend of the middle part, carried on
    /// past the tail when `i` lies there.
    pub(crate) fn stepped_residual(&self, st: &Staircase, i: usize) -> f64 {
        let model = self.middle_model(st.bounds, st.period, st.residue);
        (self.c[i] - model(i)) / self.c[i]
    }

    /// The fitted cost of the middle part, as a function of the point index.
    pub(super) fn middle_model(
        &self,
        bounds: Bounds,
        period: i64,
        residue: i64,
    ) -> impl Fn(usize) -> f64 + '_ {
        let mut sums = Normal::<5>::default();
        for i in bounds.knee..bounds.end {
            sums.add(self.w[i], &self.stair_row(i, period, residue));
        }
        let (_, b) = sums.solve();
        move |i| {
            let r = self.stair_row(i, period, residue);
            b[0] + b[1] * r[1] + b[2] * r[2] + b[3] * r[3]
        }
    }

    /// Index of the last point of the flat part: the point before the knee, or, when the first
    /// step after the knee stays within half a step of the flat level (the knee fell inside a step
    /// that carries on at that level), the last point of that step. `None` when the staircase
    /// rises from the first point.
    pub(crate) fn flat_end(&self, st: &Staircase) -> Option<usize> {
        let b = st.bounds;
        let model = self.middle_model(b, st.period, st.residue);
        let level = if b.knee > 0 {
            self.flat[b.knee].solve().1[0]
        } else {
            model(0)
        };
        // The height of one step, from the coefficient of the step count.
        let rise = model_step(self, b, st.period, st.residue);
        let mut last = b.knee.checked_sub(1);
        for i in b.knee..b.end {
            if rise <= 0.0 || model(i) - level >= 0.5 * rise {
                break;
            }
            last = Some(i);
        }
        last
    }
}
