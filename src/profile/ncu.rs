//! Nsight Compute: the command that profiles a point's binary once more (timing core in profile
//! mode), and its CSV read back into `<metric>__<counter>` values.
//!
//! What ncu's CSV looks like (ncu 2025.3 on the H100 host): `==PROF==` lines,
//! then a header `"ID","Process ID",...,"thread Domain:Push/Pop_Range:...",...,"Metric Name",
//! "Metric Unit","Metric Value"` and one row per (kernel launch, metric). The range column holds
//! e.g. `512  "<default domain>:sweep:3:none:..." `; values carry thousands separators (`"16,384"`);
//! a metric the GPU does not have reads `n/a` (and ncu still exits 0).

use crate::exec::Cmd;
use crate::spec::profile::{Profile, SEP};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Files of a point's profile run, in its folder.
pub const CSV: &str = "ncu.csv";
pub const STDOUT: &str = "profile.stdout.txt";
pub const STDERR: &str = "profile.stderr.txt";
pub const CMD: &str = "profile.cmd";

/// The NVTX ranges the timing core opens in profile mode (`sweep:<n>`), as ncu's filter.
pub const RANGE_FILTER: &str = "regex:^sweep:[0-9]+$/";

/// Why there is no ncu to run.
#[derive(Debug, thiserror::Error)]
pub enum LocateError {
    #[error("`SWEEP_NCU` = `{}` is not a file (hint: the path of Nsight Compute's `ncu`)", .0.display())]
    NotAFile(PathBuf),
    #[error("`ncu` not found (hint: Nsight Compute comes with the CUDA toolkit; put its bin folder on PATH or set SWEEP_NCU)")]
    NotFound,
}

/// Where ncu is: `$SWEEP_NCU`, else `ncu` on PATH, else beside `nvcc` on PATH, else the CUDA
/// toolkit's default `/usr/local/cuda/bin/ncu`.
pub fn locate() -> Result<PathBuf, LocateError> {
    if let Some(p) = std::env::var_os("SWEEP_NCU").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(LocateError::NotAFile(p))
        };
    }
    if let Some(p) = crate::exec::on_path("ncu") {
        return Ok(p);
    }
    if let Some(p) = crate::exec::on_path("nvcc").and_then(|n| n.parent().map(|d| d.join("ncu"))) {
        if p.is_file() {
            return Ok(p);
        }
    }
    let default = PathBuf::from("/usr/local/cuda/bin/ncu");
    if default.is_file() {
        return Ok(default);
    }
    Err(LocateError::NotFound)
}

/// The profile command of a point: `program` (the point's own command, as the timed run had it)
/// under ncu, in profile mode, its CSV into the point's folder.
pub fn command(ncu: &Path, profile: &Profile, program: &Cmd, point_dir: &Path) -> Cmd {
    let csv = point_dir.join(CSV);
    let csv = std::path::absolute(&csv).unwrap_or(csv);
    let mut cmd = Cmd::new(ncu.display().to_string()).args([
        "--csv".to_string(),
        "--nvtx".into(),
        "--nvtx-include".into(),
        RANGE_FILTER.into(),
        "--metrics".into(),
        profile.counters.join(","),
        "--log-file".into(),
        csv.display().to_string(),
        // ncu starts the program in the point's folder: a relative path would not be found there.
        std::path::absolute(&program.program)
            .map_or_else(|_| program.program.clone(), |p| p.display().to_string()),
    ]);
    cmd.args.extend(program.args.iter().cloned());
    cmd.env = program.env.clone();
    cmd.env.insert("SWEEP_PROFILE".into(), "1".into());
    cmd.cwd = program.cwd.clone();
    cmd
}

/// The metric names behind each profile range, from the profiled program's
/// `@sweep profile metric=NAME range=sweep:<n>` lines (`range=none`: a derived value, which
/// launches nothing of its own).
pub fn ranges(stdout: &str) -> BTreeMap<String, Vec<String>> {
    // Only a profile line has `range=`.
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for fields in crate::parse::core_lines(stdout) {
        if let (Some(m), Some(r)) = (fields.get("metric"), fields.get("range")) {
            out.entry(r.clone()).or_default().push(m.clone());
        }
    }
    out
}

/// A counter's value as ncu prints it: `16,384` -> 16384; `n/a` and other text -> None.
fn number(s: &str) -> Option<f64> {
    s.trim()
        .replace(',', "")
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
}

/// The `sweep:<n>` range of a row's push/pop range column.
fn range_of(cell: &str) -> Option<String> {
    let i = cell.find("sweep:")?;
    let digits: String = cell[i + 6..]
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    (!digits.is_empty()).then(|| format!("sweep:{digits}"))
}

/// What a profile run gave: values by column, and the problems (empty cells) in words.
#[derive(Debug, Default, PartialEq)]
pub struct Read {
    pub values: BTreeMap<String, f64>,
    pub problems: Vec<String>,
}

/// Reads ncu's CSV (`csv`) and the profiled program's stdout into the point's profile columns for
/// `metrics` (the spec's timing-core metrics). A range's kernels are summed for `.sum` counters
/// and averaged for the others.
pub fn read(csv: &str, stdout: &str, profile: &Profile, metrics: &[String]) -> Read {
    let mut out = Read::default();
    let ranges = ranges(stdout);
    // (range, counter) -> values of the range's kernels
    let mut cells: BTreeMap<(String, String), Vec<f64>> = BTreeMap::new();
    let mut unreadable: Vec<String> = Vec::new();
    let start = csv.find("\"ID\"");
    if let Some(start) = start {
        let mut r = csv::ReaderBuilder::new()
            .flexible(true)
            .from_reader(&csv.as_bytes()[start..]);
        let header = r.headers().cloned().unwrap_or_default();
        let col = |pred: &dyn Fn(&str) -> bool| header.iter().position(pred);
        let name_i = col(&|h| h == "Metric Name");
        let value_i = col(&|h| h == "Metric Value");
        let range_i = col(&|h| h.starts_with("thread Domain:Push/Pop_Range"));
        if let (Some(ni), Some(vi), Some(ri)) = (name_i, value_i, range_i) {
            for rec in r.records().flatten() {
                let (Some(name), Some(value), Some(range)) =
                    (rec.get(ni), rec.get(vi), rec.get(ri))
                else {
                    continue;
                };
                let Some(range) = range_of(range) else {
                    continue;
                };
                match number(value) {
                    Some(v) => cells.entry((range, name.to_string())).or_default().push(v),
                    None => {
                        if !unreadable.iter().any(|u| u == name) {
                            unreadable.push(name.to_string());
                        }
                    }
                }
            }
        } else {
            out.problems
                .push("ncu's CSV has no `Metric Name`, `Metric Value` or NVTX range column".into());
            return out;
        }
    } else {
        out.problems.push("ncu wrote no CSV table".into());
        return out;
    }
    for u in &unreadable {
        out.problems
            .push(format!("ncu could not read `{u}` on this GPU (n/a)"));
    }
    // A metric is profiled when the program opened its range; a range without rows launched no
    // kernel (cudaMemcpy, say: ncu profiles kernels only), and its metric gets no counters.
    let mut profiled = std::collections::BTreeSet::new();
    for (range, names) in &ranges {
        for metric in names.iter().filter(|m| metrics.contains(m)) {
            profiled.insert(metric.clone());
            for counter in &profile.counters {
                if let Some(vs) = cells.get(&(range.clone(), counter.clone())) {
                    let v = if counter.ends_with(".sum") {
                        vs.iter().sum()
                    } else {
                        vs.iter().sum::<f64>() / vs.len() as f64
                    };
                    out.values.insert(format!("{metric}{SEP}{counter}"), v);
                }
            }
            for ratio in &profile.ratios {
                let total = |names: &[&str]| -> Option<f64> {
                    names
                        .iter()
                        .map(|c| out.values.get(&format!("{metric}{SEP}{c}")).copied())
                        .sum()
                };
                if let (Some(n), Some(d)) = (total(ratio.num), total(ratio.den)) {
                    if d > 0.0 {
                        out.values
                            .insert(format!("{metric}{SEP}{}", ratio.name), n / d);
                    }
                }
            }
        }
    }
    let missing: Vec<&String> = metrics.iter().filter(|m| !profiled.contains(*m)).collect();
    if !missing.is_empty() {
        out.problems.push(format!(
            "no profiled launch for {}",
            missing
                .iter()
                .map(|m| format!("`{m}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    } else if cells.is_empty() && unreadable.is_empty() && !ranges.is_empty() {
        out.problems
            .push("ncu profiled no kernel inside a `sweep:<n>` range".into());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::profile::{Profile, ProfileFile};

    fn profile() -> Profile {
        let f: ProfileFile = toml::from_str("presets = [\"shared_banks\"]\nncu_metrics = [\"sm__warps_active.avg.pct_of_peak_sustained_active\"]\n").unwrap();
        Profile::from_file(&f).unwrap().unwrap()
    }

    const HEAD: &str = "==PROF== Connected to process 512 (/tmp/p/bench)\n==PROF== Disconnected from process 512\n\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg\",\"Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n";

    fn row(id: u32, range: u32, kernel: &str, metric: &str, value: &str) -> String {
        format!("\"{id}\",\"512\",\"bench\",\"127.0.0.1\",\"512  \"\"<default domain>:sweep:{range}:none:none:none:none:none:none\"\" \",\"\",\"{kernel}\",\"1\",\"7\",\"(64, 1, 1)\",\"(1, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\",\"{metric}\",\"\",\"{value}\"\n")
    }

    #[test]
    fn counters_land_under_their_metric_with_separators_removed_and_kernels_combined() {
        let p = profile();
        let mut csv = HEAD.to_string();
        csv += &row(
            0,
            0,
            "k(float *)",
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
            "16,384",
        );
        csv += &row(
            0,
            0,
            "k(float *)",
            "smsp__inst_executed_op_shared_st.sum",
            "8,192",
        );
        csv += &row(
            0,
            0,
            "k(float *)",
            "smsp__inst_executed_op_shared_ld.sum",
            "0",
        );
        csv += &row(
            0,
            0,
            "k(float *)",
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
            "0",
        );
        csv += &row(
            0,
            0,
            "k(float *)",
            "sm__warps_active.avg.pct_of_peak_sustained_active",
            "40",
        );
        // range 1: two kernels
        for (id, w, o) in [(1, "100", "10"), (2, "300", "30")] {
            csv += &row(
                id,
                1,
                "a",
                "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
                w,
            );
            csv += &row(
                id,
                1,
                "a",
                "sm__warps_active.avg.pct_of_peak_sustained_active",
                o,
            );
        }
        let stdout = "MFlops: 1\n@sweep profile metric=nc range=sweep:0\n@sweep profile metric=two range=sweep:1\n@sweep profile metric=ratio range=none\n";
        let r = read(
            &csv,
            stdout,
            &p,
            &["nc".into(), "two".into(), "ratio".into()],
        );
        assert_eq!(r.problems, Vec::<String>::new());
        assert_eq!(
            r.values["nc__l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"],
            16384.0
        );
        assert_eq!(r.values["nc__shared_wavefronts_per_request"], 2.0);
        assert_eq!(
            r.values["two__l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"],
            400.0
        );
        assert_eq!(
            r.values["two__sm__warps_active.avg.pct_of_peak_sustained_active"],
            20.0
        );
        // no requests counted for `two`: no ratio rather than a division by nothing
        assert!(!r.values.contains_key("two__shared_wavefronts_per_request"));
    }

    #[test]
    fn unreadable_counters_and_unprofiled_metrics_are_problems_not_numbers() {
        let p = profile();
        let csv = HEAD.to_string()
            + &row(
                0,
                0,
                "k",
                "sm__warps_active.avg.pct_of_peak_sustained_active",
                "n/a",
            );
        let r = read(
            &csv,
            "@sweep profile metric=nc range=sweep:0\n",
            &p,
            &["nc".into(), "gone".into()],
        );
        assert!(r.values.is_empty());
        assert_eq!(
            r.problems,
            vec![
                "ncu could not read `sm__warps_active.avg.pct_of_peak_sustained_active` on this GPU (n/a)".to_string(),
                "no profiled launch for `gone`".to_string()
            ]
        );
        let r = read(
            "==ERROR== the application returned an error\n",
            "",
            &p,
            &["nc".into()],
        );
        assert_eq!(r.problems, vec!["ncu wrote no CSV table".to_string()]);
    }

    /// What ncu 2025.3 wrote on the H100 for one point of the half-warp sweep (threads = 83,
    /// tests/fixtures/ncu_point): every metric gets its counters, stride 2 its 2 wavefronts per request.
    #[test]
    fn the_h100_output_reads_in_full() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ncu_point");
        let csv = std::fs::read_to_string(dir.join("ncu.csv")).unwrap();
        let stdout = std::fs::read_to_string(dir.join("profile.stdout.txt")).unwrap();
        let f: ProfileFile = toml::from_str("presets = [\"shared_banks\"]\n").unwrap();
        let p = Profile::from_file(&f).unwrap().unwrap();
        let metrics: Vec<String> = ranges(&stdout).into_values().flatten().collect();
        assert_eq!(metrics.len(), 10);
        let r = read(&csv, &stdout, &p, &metrics);
        assert_eq!(r.problems, Vec::<String>::new());
        // six counters each; the ratio for the seven shared-memory layouts only (the global
        // stores make no shared request to divide by)
        assert_eq!(r.values.len(), 10 * 6 + 7);
        assert!(!r
            .values
            .contains_key("global_vec1__shared_wavefronts_per_request"));
        assert_eq!(
            r.values["shared_stride2__shared_wavefronts_per_request"],
            2.0
        );
        assert_eq!(
            r.values["shared_stride1__shared_wavefronts_per_request"],
            1.0
        );
    }

    #[test]
    fn the_command_profiles_the_point_in_profile_mode() {
        let mut prog = Cmd::new("/run/p/bench").args(["--n".to_string(), "4".into()]);
        prog.env
            .insert("SWEEP_MEASURE_LOCK".into(), "/run/m.lock".into());
        prog.cwd = Some("/run/p".into());
        let c = command(
            Path::new("/cuda/bin/ncu"),
            &profile(),
            &prog,
            Path::new("/run/p"),
        );
        assert_eq!(c.program, "/cuda/bin/ncu");
        assert_eq!(
            c.args[..4],
            ["--csv", "--nvtx", "--nvtx-include", RANGE_FILTER]
        );
        assert!(c.args[5].starts_with("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,"));
        assert_eq!(c.args[7], "/run/p/ncu.csv");
        assert_eq!(c.args[8..], ["/run/p/bench", "--n", "4"]);
        assert_eq!(c.env["SWEEP_PROFILE"], "1");
        assert_eq!(c.env["SWEEP_MEASURE_LOCK"], "/run/m.lock");
    }
}
