//! Why a curve steps (issue 34): the mechanism a reading names comes from evidence, never from the
//! period's number alone. In order: the ncu counter that steps where the curve drops
//! ([`super::counters`]); else the model the bench declares for the metric (`model = ...` in its
//! `[[metric]]`, [`Model`]), fitted to the curve and named with how well it fits; else a neutral
//! wording that states only what the x axis shows ("steps every 32 threads = one warp").

use super::counters::Stepping;
use super::curve::{Curve, Sense};
use super::reading::human;
use crate::spec::{Model, ModelKind};
use serde::Serialize;

/// What the swept axis counts, by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AxisKind {
    /// Threads per block (`threads`, `block`, `tpb`, `warps`, `width`).
    Threads,
    /// A stride between lanes' accesses.
    Stride,
    /// An offset or alignment of the accesses.
    Offset,
    /// A problem size (`n`, `size`, `rows`, ...).
    Size,
    Other,
}

pub fn axis_kind(axis: &str) -> AxisKind {
    let a = axis.to_ascii_lowercase();
    if a.contains("stride") {
        AxisKind::Stride
    } else if a.contains("offset") || a.contains("align") {
        AxisKind::Offset
    } else if ["thread", "block", "warp", "tpb", "width"]
        .iter()
        .any(|k| a.contains(k))
    {
        AxisKind::Threads
    } else if ["size", "dim", "matrix", "rows", "cols"]
        .iter()
        .any(|k| a.contains(k))
        || a == "n"
    {
        AxisKind::Size
    } else {
        AxisKind::Other
    }
}

/// A declared model fitted to a curve: cost = a + b * model(x), by relative least squares.
#[derive(Debug, Clone, Serialize)]
pub struct ModelFit {
    /// The model as the spec names it (`wavefronts_per_request:stride=2`).
    pub model: String,
    /// R² of the metric against the fitted model (1: every point on it).
    pub r2: f64,
    /// Root mean square of the relative residuals of the metric.
    pub rms: f64,
    /// The model's own steps along x (the median distance between its rises), when it rises.
    pub period: Option<f64>,
    /// The model changes where the curve drops after its peaks, and seldom elsewhere (the test
    /// the counters pass, [`super::counters::stepping`]).
    pub steps_with_drops: bool,
    /// What one more unit of the model (a warp, a wavefront) costs in the fit; the model explains
    /// nothing unless it is positive.
    pub slope: f64,
    /// It steps with the drops and fits with R² >= [`ModelFit::EXPLAINS`]: its mechanism is
    /// named.
    pub explains: bool,
}

impl ModelFit {
    /// The least R² for a model to be named as the mechanism.
    pub const EXPLAINS: f64 = 0.8;
}

/// Where the mechanism of a reading came from.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "snake_case", tag = "from")]
pub enum Evidence {
    Counter { counter: String },
    Model(ModelFit),
    None,
}

/// Words a model needs when it cannot be fitted to this axis.
#[derive(Debug, Clone, PartialEq)]
pub struct NotApplicable(pub String);

/// The model's cost of one point at `x` (whole threads, strides or offsets), in its own unit
/// (warps, wavefronts, lines, sectors); `Err` when the model says nothing about this axis.
pub fn predict(model: &Model, kind: AxisKind, x: f64) -> Result<f64, NotApplicable> {
    let n = x.round();
    if !((0.0..=1e7).contains(&n) && (x - n).abs() < 1e-9) {
        return Err(NotApplicable(format!(
            "model `{model}` needs whole numbers on x, and x = {} is not",
            human(x)
        )));
    }
    let n = n as u64;
    let words = model.words as u64;
    let na = |what: &str| {
        Err(NotApplicable(format!(
            "model `{model}` is about {what}, not this axis"
        )))
    };
    match (model.kind, kind) {
        (ModelKind::WholeWarps, AxisKind::Threads) => Ok(n.div_ceil(32) as f64),
        (ModelKind::SchedulerBusiest, AxisKind::Threads) => Ok(n.div_ceil(32).div_ceil(4) as f64),
        (ModelKind::WholeWarps | ModelKind::SchedulerBusiest, _) => na("threads per block"),
        (ModelKind::WavefrontsPerRequest, AxisKind::Threads) => Ok(warps(n)
            .map(|lanes| wavefronts(lanes, lane_step(model), words))
            .sum::<u64>()
            as f64),
        (ModelKind::WavefrontsPerRequest, AxisKind::Stride) => {
            Ok(wavefronts(32, n.max(words), words) as f64)
        }
        (ModelKind::LinesPerRequest | ModelKind::SectorsPerRequest, AxisKind::Threads) => {
            let bytes = segment(model.kind);
            Ok(warps(n)
                .map(|lanes| spans(0, lanes, lane_step(model), words, bytes))
                .sum::<u64>() as f64)
        }
        (ModelKind::LinesPerRequest | ModelKind::SectorsPerRequest, AxisKind::Stride) => {
            Ok(spans(0, 32, n.max(words), words, segment(model.kind)) as f64)
        }
        (ModelKind::LinesPerRequest | ModelKind::SectorsPerRequest, AxisKind::Offset) => {
            Ok(spans(n, 32, words, words, segment(model.kind)) as f64)
        }
        (ModelKind::WavefrontsPerRequest, _) => na("threads per block or a stride"),
        (ModelKind::LinesPerRequest | ModelKind::SectorsPerRequest, _) => {
            na("threads per block, a stride or an offset")
        }
    }
}

/// Words from one lane's first word to the next lane's: the stride, and never less than the words
/// a lane accesses (lanes' vectors do not overlap).
fn lane_step(model: &Model) -> u64 {
    model.stride.max(model.words) as u64
}

/// Bytes of the unit a `*_per_request` model counts: 128-byte lines, 32-byte sectors.
fn segment(kind: ModelKind) -> u64 {
    if kind == ModelKind::LinesPerRequest {
        128
    } else {
        32
    }
}

/// The lanes of each warp of a block of `threads`.
fn warps(threads: u64) -> impl Iterator<Item = u64> {
    (0..threads.div_ceil(32)).map(move |w| (threads - 32 * w).min(32))
}

/// Wavefronts of one shared-memory request of `lanes` lanes, lane i reading `words` 4-byte words
/// from word `stride * i`: the most distinct words any of the 32 banks holds.
fn wavefronts(lanes: u64, stride: u64, words: u64) -> u64 {
    let mut per_bank: Vec<Vec<u64>> = vec![Vec::new(); 32];
    for i in 0..lanes {
        for j in 0..words {
            let w = stride * i + j;
            let bank = &mut per_bank[(w % 32) as usize];
            if !bank.contains(&w) {
                bank.push(w);
            }
        }
    }
    per_bank.iter().map(Vec::len).max().unwrap_or(0) as u64
}

/// Distinct `bytes`-long segments a request touches: `lanes` lanes, lane i at word
/// `start + step * i`, `words` 4-byte words each.
fn spans(start: u64, lanes: u64, step: u64, words: u64, bytes: u64) -> u64 {
    let mut seen: Vec<u64> = (0..lanes)
        .flat_map(|i| (0..words).map(move |j| 4 * (start + step * i + j) / bytes))
        .collect();
    seen.sort_unstable();
    seen.dedup();
    seen.len() as u64
}

/// Fits `model` to the curve's points: cost = a + b * model(x), the cost being the time per
/// unit of work (x / value on a thread axis, whose work grows with x; 1 / value on the others; the
/// value itself for a lower-is-better metric), weighted by 1 / cost² so residuals are relative.
pub fn fit(
    model: &Model,
    axis: &str,
    data: &[(f64, Option<f64>)],
    sense: Sense,
    peaks: &[f64],
) -> Result<ModelFit, NotApplicable> {
    let kind = axis_kind(axis);
    let mut pts: Vec<(f64, f64, f64)> = Vec::new(); // (x, value, model)
    for &(x, y) in data {
        let Some(y) = y.filter(|y| y.is_finite() && *y > 0.0) else {
            continue;
        };
        pts.push((x, y, predict(model, kind, x)?));
    }
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let to_cost = |x: f64, y: f64| match (sense, kind) {
        (Sense::LowerIsBetter, _) => y,
        (Sense::HigherIsBetter, AxisKind::Threads) => x.max(1e-300) / y,
        (Sense::HigherIsBetter, _) => 1.0 / y,
    };
    let from_cost = |x: f64, c: f64| match (sense, kind) {
        (Sense::LowerIsBetter, _) => c,
        (Sense::HigherIsBetter, AxisKind::Threads) => x / c,
        (Sense::HigherIsBetter, _) => 1.0 / c,
    };
    // Weighted least squares of cost on (1, m).
    let (mut sw, mut swm, mut swmm, mut swc, mut swmc) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for &(x, y, m) in &pts {
        let c = to_cost(x, y);
        let w = 1.0 / (c * c);
        sw += w;
        swm += w * m;
        swmm += w * m * m;
        swc += w * c;
        swmc += w * m * c;
    }
    let det = sw * swmm - swm * swm;
    if pts.len() < 4 || det.abs() <= 1e-12 * sw * swmm {
        return Err(NotApplicable(format!(
            "model `{model}` is constant over these points: nothing to fit"
        )));
    }
    let b = (sw * swmc - swm * swc) / det;
    let a = (swc - b * swm) / sw;
    let mean = pts.iter().map(|p| p.1).sum::<f64>() / pts.len() as f64;
    let (mut ss_res, mut ss_tot, mut rel) = (0.0, 0.0, 0.0);
    for &(x, y, m) in &pts {
        let c = a + b * m;
        let hat = if c > 0.0 { from_cost(x, c) } else { 0.0 };
        ss_res += (y - hat).powi(2);
        ss_tot += (y - mean).powi(2);
        rel += ((y - hat) / y).powi(2);
    }
    let r2 = if ss_tot > 0.0 {
        1.0 - ss_res / ss_tot
    } else {
        0.0
    };
    let rms = (rel / pts.len() as f64).sqrt();
    // Where the model rises (any increase: a model has no noise). Along threads it only grows,
    // and the distance between its rises is its period; along a stride or an offset it goes up
    // and down, and only where it rises is compared with the drops.
    let rises: Vec<f64> = pts
        .windows(2)
        .filter(|w| w[1].2 > w[0].2 + 1e-9)
        .map(|w| w[1].0)
        .collect();
    let gaps: Vec<f64> = rises.windows(2).map(|w| w[1] - w[0]).collect();
    let period = if kind == AxisKind::Threads {
        super::fit::median(&gaps)
    } else {
        None
    };
    let steps_with_drops = steps_with(peaks, &pts, &rises);
    Ok(ModelFit {
        model: model.to_string(),
        r2,
        rms,
        period,
        steps_with_drops,
        slope: b,
        explains: b > 0.0 && steps_with_drops && r2 >= ModelFit::EXPLAINS,
    })
}

/// The model rises right after the curve's peaks (at the first point after each, for at least
/// [`RECALL`] of them) and seldom elsewhere ([`PRECISION`] of its rises are such points): the test
/// a counter passes in [`super::counters::stepping`], without its 2 % threshold (a model has no
/// noise, and one more wavefront in 64 is a rise).
fn steps_with(peaks: &[f64], pts: &[(f64, f64, f64)], rises: &[f64]) -> bool {
    let drops: Vec<f64> = peaks
        .iter()
        .filter_map(|&p| pts.iter().find(|q| q.0 > p).map(|q| q.0))
        .collect();
    if drops.len() < 2 || rises.is_empty() {
        return false;
    }
    let hits = drops.iter().filter(|d| rises.contains(d)).count();
    hits as f64 >= RECALL * drops.len() as f64 && hits as f64 >= PRECISION * rises.len() as f64
}

const RECALL: f64 = 0.8;
const PRECISION: f64 = 0.5;

/// The mechanism of a declared model, in words (named only when the model explains the steps).
pub fn model_words(model: &Model, kind: AxisKind) -> String {
    match (model.kind, kind) {
        (ModelKind::WholeWarps, _) => "whole warps: a started warp costs a whole one".into(),
        (ModelKind::SchedulerBusiest, _) => "one block on one SM: its warps go round-robin to the \
             SM's 4 sub-partition schedulers and the busiest one's ⌈warps/4⌉ sets the time"
            .into(),
        (ModelKind::WavefrontsPerRequest, AxisKind::Stride) => {
            "shared-memory bank conflicts: a warp's request at stride s takes as many wavefronts \
             as its busiest bank holds words (gcd(s, 32) for 4-byte words; 32 banks of 4 bytes)"
                .into()
        }
        (ModelKind::WavefrontsPerRequest, _) => {
            let k = wavefronts(32, lane_step(model), model.words as u64).max(1);
            if k == 1 {
                "shared-memory wavefronts: one per warp request (no bank conflict)".into()
            } else {
                format!(
                    "shared-memory wavefronts: a warp's request takes one per {} lanes \
                     ({k}-way bank conflict; 32 banks of 4 bytes)",
                    human(32.0 / k as f64)
                )
            }
        }
        (ModelKind::LinesPerRequest | ModelKind::SectorsPerRequest, AxisKind::Offset) => {
            let (what, bytes) = segment_words(model.kind);
            format!(
                "{what}: a warp's request touches one more {bytes}-byte {} when its start is not \
                 on one",
                if bytes == 128 { "line" } else { "sector" }
            )
        }
        (ModelKind::LinesPerRequest | ModelKind::SectorsPerRequest, _) => {
            let (what, bytes) = segment_words(model.kind);
            let lanes = (bytes / (4 * model.words as u64)).max(1);
            let one = if bytes == 128 { "line" } else { "sector" };
            format!(
                "{what}: every {lanes} lanes of a warp's {}-byte accesses fill one more {one}",
                4 * model.words
            )
        }
    }
}

fn segment_words(kind: ModelKind) -> (&'static str, u64) {
    if kind == ModelKind::LinesPerRequest {
        ("128-byte lines", 128)
    } else {
        ("32-byte sectors", 32)
    }
}

/// The mechanism a stepping counter shows, in words: what the counter counts, named by its family
/// (a ratio of the presets, L1 or L2 sectors, requests, DRAM bytes), never more than that.
pub fn counter_words(s: &Stepping) -> String {
    let c = s.counter.to_ascii_lowercase();
    let dir = if c.contains("_op_st") || c.contains("write") {
        Some("stores")
    } else if c.contains("_op_ld") || c.contains("read") {
        Some("loads")
    } else {
        None
    };
    let of = |what: &str| match dir {
        Some(d) => format!("{what} of global {d}"),
        None => format!("{what} of global accesses"),
    };
    let words = if c.contains("wavefront") && c.contains("shared") {
        "each shared-memory request takes more wavefronts (bank conflicts)".to_string()
    } else if c.contains("sectors_per_request") {
        "each global request touches more 32-byte sectors".to_string()
    } else if c.contains("wavefront") {
        "each request takes more wavefronts".to_string()
    } else if c.starts_with("lts__") && c.contains("sector") {
        match dir {
            Some("stores") => "the L2 takes more 32-byte sector writes from the L1".to_string(),
            _ => "the L2 serves more 32-byte sector reads to the L1".to_string(),
        }
    } else if c.starts_with("l1tex__") && c.contains("sector") {
        format!("the L1 handles more {}", of("32-byte sectors"))
    } else if c.starts_with("l1tex__") && c.contains("request") {
        format!("the L1 takes more {}", of("requests"))
    } else if c.starts_with("dram__") {
        match dir {
            Some("stores") => "DRAM writes more bytes".to_string(),
            _ => "DRAM reads more bytes".to_string(),
        }
    } else {
        return format!("ncu's `{}` steps with it", s.counter);
    };
    format!("{words}, as ncu counts")
}

/// What the x axis alone says about a period: a fact, no cause.
pub fn neutral(axis: &str, period: f64, curve: &Curve, sense: Sense) -> String {
    let p = human(period);
    match axis_kind(axis) {
        AxisKind::Threads => {
            let warps = period / 32.0;
            let of_warp = match period as i64 {
                _ if (period - period.round()).abs() > 1e-9 => String::new(),
                32 => " = one warp".into(),
                16 => " = half a warp".into(),
                8 => " = a quarter of a warp".into(),
                _ if warps >= 2.0 && (warps - warps.round()).abs() < 1e-9 => {
                    format!(" = {} warps", human(warps))
                }
                _ => String::new(),
            };
            format!("steps every {p} {axis}{of_warp}")
        }
        AxisKind::Stride => match ratio(curve, sense) {
            Some(r) if r >= 1.5 => format!(
                "repeats every {p} along {axis}; the worst value is {}x below the best",
                human((r * 10.0).round() / 10.0)
            ),
            _ => format!("repeats every {p} along {axis}"),
        },
        _ => format!("repeats every {p} along `{axis}`"),
    }
}

/// How many times the best value is the worst; `None` without a best (a count metric).
fn ratio(curve: &Curve, sense: Sense) -> Option<f64> {
    let best = curve.best.as_ref()?.value;
    let worst = curve.worst?;
    let r = match sense {
        Sense::HigherIsBetter => best / worst,
        Sense::LowerIsBetter => worst / best,
    };
    (r.is_finite() && r > 0.0).then_some(r)
}

/// The mechanism clause of a period from evidence: the counter that steps with it, else the
/// declared model that explains it; `None` where there is neither (the caller words what the axis
/// shows: [`neutral`], or a ladder's levels).
pub fn explain(
    axis: &str,
    period: f64,
    counter: Option<&Stepping>,
    model: Option<(&Model, &ModelFit)>,
) -> Option<String> {
    if let Some(s) = counter {
        return Some(counter_words(s));
    }
    let kind = axis_kind(axis);
    match model {
        Some((m, f)) if f.explains && f.period.is_none_or(|q| (q - period).abs() < 1e-9) => {
            Some(format!(
                "{} (model `{}` fits: R² = {:.3}, rms {:.1} %)",
                model_words(m, kind),
                f.model,
                f.r2,
                100.0 * f.rms
            ))
        }
        _ => None,
    }
}

/// The reading's clause when a declared model does not explain the period found, `period`.
pub fn model_misfit(axis: &str, f: &ModelFit, period: f64) -> String {
    let steps = f.period.map_or(String::new(), |q| {
        format!(", stepping every {} {axis},", human(q))
    });
    let why = match f.period {
        Some(q) if (q - period).abs() > 1e-9 => {
            format!(
                "it steps every {}, the curve every {}",
                human(q),
                human(period)
            )
        }
        _ if f.slope <= 0.0 => "the fitted cost does not grow with it".to_string(),
        _ if f.steps_with_drops => {
            "its steps are where the curve drops, but it fits too loosely to name".to_string()
        }
        _ => "it does not step where the curve drops".to_string(),
    };
    format!(
        "; the declared model `{}`{steps} fits with R² = {:.3} (rms {:.1} %): {why}",
        f.model,
        f.r2,
        100.0 * f.rms
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(s: &str) -> Model {
        Model::parse(s).unwrap()
    }

    /// A stepping counter is named for what it counts (halfwarp_counters on an H100: the float4
    /// global stores step with the L2's sector reads for the L1, not with sectors per request).
    #[test]
    fn a_counter_is_worded_by_what_it_counts() {
        let words = |c: &str| {
            counter_words(&Stepping {
                counter: c.into(),
                matched: 2,
                drops: 2,
                changes: 2,
                x: 17.0,
                before: 1.0,
                after: 2.0,
            })
        };
        for (counter, want) in [
            (
                "shared_wavefronts_per_request",
                "each shared-memory request takes more wavefronts (bank conflicts), as ncu counts",
            ),
            (
                "global_sectors_per_request",
                "each global request touches more 32-byte sectors, as ncu counts",
            ),
            (
                "lts__t_sectors_srcunit_tex_op_read.sum",
                "the L2 serves more 32-byte sector reads to the L1, as ncu counts",
            ),
            (
                "lts__t_sectors_srcunit_tex_op_write.sum",
                "the L2 takes more 32-byte sector writes from the L1, as ncu counts",
            ),
            (
                "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
                "the L1 handles more 32-byte sectors of global stores, as ncu counts",
            ),
            (
                "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
                "the L1 takes more requests of global loads, as ncu counts",
            ),
            (
                "dram__bytes_write.sum",
                "DRAM writes more bytes, as ncu counts",
            ),
            (
                "sm__warps_active.avg.per_cycle_active",
                "ncu's `sm__warps_active.avg.per_cycle_active` steps with it",
            ),
        ] {
            assert_eq!(words(counter), want, "{counter}");
        }
    }

    #[test]
    fn models_count_what_the_hardware_counts() {
        let t = AxisKind::Threads;
        let at = |m: &str, k: AxisKind, x: f64| predict(&model(m), k, x).unwrap();
        // warps; the busiest of 4 schedulers
        assert_eq!(
            [1.0, 32.0, 33.0, 128.0, 129.0].map(|x| at("whole_warps", t, x)),
            [1.0, 1.0, 2.0, 4.0, 5.0]
        );
        assert_eq!(
            [32.0, 128.0, 129.0, 256.0, 257.0].map(|x| at("scheduler_busiest", t, x)),
            [1.0, 1.0, 2.0, 2.0, 3.0]
        );
        // stride 2: a warp of 17 lanes needs 2 wavefronts; two warps of 32 and 1 lanes need 3
        let wf2 = "wavefronts_per_request:stride=2";
        assert_eq!(
            [16.0, 17.0, 32.0, 33.0].map(|x| at(wf2, t, x)),
            [1.0, 2.0, 2.0, 3.0]
        );
        // along a stride: gcd(s, 32) wavefronts
        let s = AxisKind::Stride;
        assert_eq!(
            [1.0, 2.0, 3.0, 6.0, 32.0, 64.0].map(|x| at("wavefronts_per_request", s, x)),
            [1.0, 2.0, 1.0, 2.0, 32.0, 32.0]
        );
        // float2 stores: 128-byte lines every 16 lanes
        assert_eq!(
            [16.0, 17.0, 32.0].map(|x| at("lines_per_request:words=2", t, x)),
            [1.0, 2.0, 2.0]
        );
        // a warp's 128 bytes from offset o: 4 sectors when o is a multiple of 8 words, else 5
        let o = AxisKind::Offset;
        assert_eq!(
            [0.0, 1.0, 7.0, 8.0].map(|x| at("sectors_per_request", o, x)),
            [4.0, 5.0, 5.0, 4.0]
        );
        assert!(predict(&model("whole_warps"), s, 4.0).is_err());
        assert!(predict(&model("whole_warps"), t, 4.5).is_err());
    }

    /// One block of t threads whose time is the busiest scheduler's warps: the model fits it
    /// exactly, steps with its drops, and is named; whole warps step at the wrong places.
    #[test]
    fn a_fitted_model_is_named_only_where_it_steps_with_the_drops() {
        let data: Vec<(f64, Option<f64>)> = (1..=512)
            .map(|t| {
                let busiest = (t as u64).div_ceil(32).div_ceil(4) as f64;
                (t as f64, Some(1000.0 * t as f64 / (0.5 + busiest)))
            })
            .collect();
        let peaks = [128.0, 256.0, 384.0];
        let f = fit(
            &model("scheduler_busiest"),
            "threads",
            &data,
            Sense::HigherIsBetter,
            &peaks,
        )
        .unwrap();
        assert!(f.r2 > 0.999 && f.explains, "{f:?}");
        assert_eq!(f.period, Some(128.0));
        let w = fit(
            &model("whole_warps"),
            "threads",
            &data,
            Sense::HigherIsBetter,
            &peaks,
        )
        .unwrap();
        assert!(!w.steps_with_drops && !w.explains, "{w:?}");
        assert_eq!(w.period, Some(32.0));
        assert!(model_misfit("threads", &w, 128.0).contains(
            "the declared model `whole_warps`, stepping every 32 threads, fits with R² = "
        ));
    }

    #[test]
    fn neutral_words_state_the_axis_and_no_cause() {
        let curve = super::super::curve::analyze_curve(&[(1.0, Some(1.0))], Sense::HigherIsBetter);
        let n = |axis: &str, p: f64| neutral(axis, p, &curve, Sense::HigherIsBetter);
        assert_eq!(n("threads", 32.0), "steps every 32 threads = one warp");
        assert_eq!(n("threads", 16.0), "steps every 16 threads = half a warp");
        assert_eq!(n("threads", 128.0), "steps every 128 threads = 4 warps");
        assert_eq!(n("threads", 4.0), "steps every 4 threads");
        assert_eq!(n("offset", 8.0), "repeats every 8 along `offset`");
        assert_eq!(n("foo", 3.0), "repeats every 3 along `foo`");
    }
}
