//! Tests of the spec: parsing, errors with file, line and culprit, fuzzed specs.

use super::*;

fn parse(text: &str) -> Result<Spec, String> {
    Spec::parse(Path::new("sweeps/t.toml"), text).map_err(|e| e.to_string())
}

const OK: &str = "bench = \"b\"\n[[axis]]\nname = \"threads\"\nrange = [1, 8]\n[[metric]]\npattern = \"mflops\"\n";

#[test]
fn range_pow2_and_values_expand() {
    let s = parse(&format!(
        "{OK}[[axis]]\nname = \"n\"\npow2 = [4, 32]\n[[axis]]\nname = \"v\"\nvalues = [\"a\", 3]\n[[axis]]\nname=\"r\"\nrange=[0,10]\nstep=5\n"
    ))
    .unwrap();
    let vals: Vec<String> = s.axes[1].values.iter().map(|v| v.to_string()).collect();
    assert_eq!(vals, ["4", "8", "16", "32"]);
    assert_eq!(s.axes[0].values.len(), 8);
    assert_eq!(
        s.axes[2].values,
        vec![Value::Str("a".into()), Value::Int(3)]
    );
    assert_eq!(
        s.axes[3].values,
        vec![Value::Int(0), Value::Int(5), Value::Int(10)]
    );
}

#[test]
fn errors_name_file_line_and_culprit() {
    let cases = [
        (
            format!("{OK}colour = 1\n"),
            "sweeps/t.toml:7: unknown key `colour`",
        ),
        (
            "bench = \"b\"\n[[axis]]\nname = \"threads\"\nrange = [10, 1]\n[[metric]]\npattern=\"mflops\"\n".into(),
            "sweeps/t.toml:2: axis `threads` is empty: 10..1 step 1 (hint: start must be <= end)",
        ),
        (
            "bench = \"b\"\n[[axis]]\nname = \"v\"\nvalues = []\n[[metric]]\npattern=\"mflops\"\n".into(),
            "axis `v` is empty: values = []",
        ),
        ("bench = \"b\"\n[[axis]\n".into(), "sweeps/t.toml:2:"),
        (
            "bench = \"b\"\n[[axis]]\nname = \"t\"\nrange=[1,2]\n[[metric]]\npattern=\"tflops\"\n".into(),
            "unknown metric pattern `tflops`",
        ),
        (
            "bench = \"b\"\n[[axis]]\nname = \"t\"\nrange=[1,2]\n".into(),
            "no metric defined",
        ),
        (
            format!("{OK}[[axis]]\nname = \"threads\"\nvalues = [1]\n"),
            "sweeps/t.toml:7: axis `threads` is defined twice",
        ),
        (
            format!("{OK}[timing]\ntarget_rel_ci = -1\n"),
            "sweeps/t.toml:8: `[timing] target_rel_ci` is -1 (hint: 0.01 is 1 %, the default)",
        ),
        (
            format!("{OK}[timing]\ntarget_rel_ci = nan\n"),
            "sweeps/t.toml:8: `[timing] target_rel_ci` is NaN (hint: 0.01 is 1 %, the default)",
        ),
        (
            format!("{OK}[timing]\nmax_time_ms = -5.0\n"),
            "sweeps/t.toml:8: `[timing] max_time_ms` is -5 (hint: milliseconds, more than 0)",
        ),
        (
            format!("{OK}[timing]\nrated_sm_mhz = -1.0\n"),
            "sweeps/t.toml:8: `[timing] rated_sm_mhz` is -1 (hint: MHz, 0 for none)",
        ),
        (
            format!("{OK}[timing]\nplacements = 0\n"),
            "sweeps/t.toml:8: `[timing] placements` is 0 (hint: 1 measures the buffers where cudaMalloc put them, 8 is the default)",
        ),
        (
            "bench = \"b\"\n[[axis]]\nname = \"t\"\nrange=[1,2]\n[[metric]]\nname=\"x\"\n".into(),
            "metric `x` needs a `unit`",
        ),
        (
            format!("run_timeout_s = 1e300\n{OK}"),
            "sweeps/t.toml:1: `run_timeout_s` = 1e300 is too large",
        ),
        (
            "bench = \"b\"\n[[axis]]\nname = \"t\"\nrange=[-9223372036854775808, 9223372036854775807]\n[[metric]]\npattern=\"mflops\"\n".into(),
            "axis `t` has 18446744073709551616 values (hint: at most 1000000)",
        ),
    ];
    let more = [
        (
            "bench = \"b\"\n[[axis]]\nname = \"t\"\nrange = [1, 10, 3]\n[[metric]]\npattern=\"mflops\"\n".to_string(),
            "sweeps/t.toml:2: axis `t`: `range` has 3 items (hint: two, `range = [first, last]`, and `step = n` for a step)",
        ),
        (
            "bench = \"b\"\n[[axis]]\nname = \"t\"\npow2 = [4]\n[[metric]]\npattern=\"mflops\"\n".to_string(),
            "axis `t`: `pow2` has 1 items",
        ),
        (
            "bench = \"b\"\n[[axis]]\nname = \"status\"\nvalues = [1]\n[[metric]]\npattern=\"mflops\"\n".to_string(),
            "sweeps/t.toml:2: axis `status` has the name of a results.csv column (hint: rename it; taken: point_id, index, status,",
        ),
        (
            "bench = \"b\"\n[[axis]]\nname = \"gpu_uuid\"\nvalues = [1]\n[[metric]]\npattern=\"mflops\"\n".to_string(),
            "axis `gpu_uuid` has the name of a results.csv column",
        ),
        (
            "bench = \"b\"\n[[axis]]\nname = \"mflops\"\nvalues = [1]\n[[metric]]\npattern=\"mflops\"\n".to_string(),
            "sweeps/t.toml:5: metric `mflops` writes a column `mflops`, which is also an axis",
        ),
        (
            "bench = \"b\"\n[[axis]]\nname = \"copy_rel_ci\"\nvalues = [1]\n[[metric]]\nname=\"copy\"\nunit=\"GB/s\"\n".to_string(),
            "metric `copy` writes a column `copy_rel_ci`, which is also an axis",
        ),
        (
            "bench = \"b\"\nzip = [[\"a\", \"b\"], [\"a\", \"c\"]]\n[[axis]]\nname = \"a\"\nvalues = [1, 2, 3]\n[[axis]]\nname = \"b\"\nvalues = [4, 5, 6]\n[[axis]]\nname = \"c\"\nvalues = [7]\n[[metric]]\npattern=\"mflops\"\n".to_string(),
            "sweeps/t.toml:2: axis `a` is in two zip groups (hint: put the axes that advance together into one group)",
        ),
        (
            format!("filter = \"{}threads > 1{}\"\n{OK}", "(".repeat(65), ")".repeat(65)),
            "sweeps/t.toml:1: `filter` is 141 characters long with 65 nested parentheses (hint: at most 4096 characters and 64 levels)",
        ),
        (
            format!("filter = \"{}threads > 1\"\n{OK}", "!".repeat(5000)),
            "`filter` is 5011 characters long with 0 nested parentheses",
        ),
        (
            "bench = \"b\"\n[[axis]]\nname = \"t\"\nvalues = [true]\n[[metric]]\npattern=\"mflops\"\n".to_string(),
            "sweeps/t.toml:4: a value must be an integer, a float or a string (hint: not a boolean, table or array",
        ),
        (
            format!("{OK}[vars]\nx = {{a = 1}}\n"),
            "sweeps/t.toml:8: a value must be an integer, a float or a string",
        ),
        (
            "bench = \"b\"\n[axis]\nname = \"t\"\nrange = [1, 2]\n[[metric]]\npattern=\"mflops\"\n".to_string(),
            "sweeps/t.toml:2: a table where a list of tables is expected (hint: write `[[axis]]` and `[[metric]]`, with double brackets)",
        ),
        (
            OK.replace("bench = \"b\"", "bench = \"\""),
            "sweeps/t.toml:1: `bench` = \"\" is not a bench name (hint: the name of a folder under cuda/",
        ),
        (
            OK.replace("bench = \"b\"", "bench = \"../x\""),
            "`bench` = \"../x\" is not a bench name",
        ),
        (format!("name = \"../../x\"\n{OK}"), "sweeps/t.toml:1: `name` = \"../../x\" is not a folder name"),
        (format!("name = \"/tmp/x\"\n{OK}"), "`name` = \"/tmp/x\" is not a folder name"),
        (format!("name = \"..\"\n{OK}"), "`name` = \"..\" is not a folder name"),
        (format!("name = \"\"\n{OK}"), "`name` = \"\" is not a folder name"),
    ];
    for (text, want) in cases.into_iter().chain(more) {
        let err = parse(&text).unwrap_err();
        assert!(err.contains(want), "got {err:?}, want {want:?}");
        assert!(!err.contains('\n'), "one line: {err:?}");
    }
}

/// `repeat` and `recheck` of another type than an integer, or out of bounds, are named with their
/// key and value and a hint, on one line (serde's own message named neither); written below a
/// `[table]` line, where TOML makes them that table's, the error says they belong at the top.
#[test]
fn repeat_and_recheck_of_a_wrong_type_or_place_name_the_key() {
    let repeat_hint = "(hint: 1 runs each point once, 3 in three processes)";
    let recheck_hint = "(hint: at most 8 more processes for a held point; 2 is the default)";
    let cases = [
        (
            "repeat = \"3\"",
            "`repeat` is the string \"3\", not a number (hint: write it without quotes, `repeat = 3`; 1 runs each point once, 3 in three processes)".to_string(),
        ),
        (
            "repeat = \"three\"",
            format!("`repeat` is the string \"three\", not an integer {repeat_hint}"),
        ),
        ("repeat = 2.0", format!("`repeat` is 2.0, not an integer {repeat_hint}")),
        ("repeat = true", format!("`repeat` is true, not an integer {repeat_hint}")),
        ("repeat = [3]", format!("`repeat` is a list, not an integer {repeat_hint}")),
        ("repeat = -1", format!("`repeat` is -1 {repeat_hint}")),
        (
            "repeat = 5000000000",
            "`repeat` is 5000000000 (hint: at most 1000; 1 runs each point once, 3 in three processes)".to_string(),
        ),
        ("recheck = 2.5", format!("`recheck` is 2.5, not an integer {recheck_hint}")),
        (
            "recheck = \" 2 \"",
            "`recheck` is the string \" 2 \", not a number (hint: write it without quotes, `recheck = 2`; at most 8 more processes for a held point; 2 is the default)".to_string(),
        ),
        ("recheck = nan", format!("`recheck` is NaN, not an integer {recheck_hint}")),
        ("recheck = {n = 2}", format!("`recheck` is a table, not an integer {recheck_hint}")),
        (
            "recheck = 1979-05-27",
            format!("`recheck` is the date 1979-05-27, not an integer {recheck_hint}"),
        ),
        ("recheck = -1", format!("`recheck` is -1 {recheck_hint}")),
        ("recheck = 9", format!("`recheck` is 9 {recheck_hint}")),
        ("recheck = 18446744073", format!("`recheck` is 18446744073 {recheck_hint}")),
    ];
    for (line, want) in cases {
        let err = parse(&format!("# a sweep\n{line}\n{OK}")).unwrap_err();
        assert_eq!(err, format!("sweeps/t.toml:2: {want}"), "{line}");
    }
    for key in ["repeat = 3", "recheck = 0"] {
        let name = key.split(' ').next().unwrap();
        let hint = format!("unknown key `{name}` in the table above it (hint: `{name}` is a top-level key: write it above the first `[table]` line; below one, TOML reads it as that table's)");
        // In [timing], and after the last [[metric]]: the line is the key's.
        let err = parse(&format!("{OK}[timing]\n{key}\n")).unwrap_err();
        assert_eq!(err, format!("sweeps/t.toml:8: {hint}"));
        let err = parse(&format!("{OK}{key}\n")).unwrap_err();
        assert_eq!(err, format!("sweeps/t.toml:7: {hint}"));
    }
    let s = parse(&format!("repeat = 3\nrecheck = 0\n{OK}")).unwrap();
    assert_eq!((s.repeat, s.recheck), (3, 0));
    let s = parse(&format!("recheck = 8\n{OK}")).unwrap();
    assert_eq!((s.repeat, s.recheck), (1, 8));
}

#[test]
fn a_run_folder_name_from_the_file_name_is_blamed_on_the_file_name() {
    // `sweeps/a b.toml` has no `name` key: the first `name =` line is the axis's, not the culprit.
    let err = Spec::parse(Path::new("sweeps/a b.toml"), OK)
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "sweeps/a b.toml: the run folder's name \"a b\", taken from the file name, is not a folder name (hint: set `name = \"...\"`: ASCII letters, digits, `_`, `-` and `.`, not `.` or `..`; runs go to --output/<name>/)"
    );
    assert!(Spec::parse(
        Path::new("sweeps/a b.toml"),
        &format!("name = \"ab\"\n{OK}")
    )
    .is_ok());
}

#[test]
fn pow2_stops_before_overflow() {
    let s = parse("bench = \"b\"\n[[axis]]\nname = \"n\"\npow2 = [1073741824, 4611686018427387904]\n[[metric]]\npattern=\"mflops\"\n").unwrap();
    assert_eq!(s.axes[0].values.len(), 33);
}

#[test]
fn columns_carry_units() {
    let s = parse(&format!(
        "{OK}[[metric]]\nname = \"copy\"\nunit = \"GB/s\"\n"
    ))
    .unwrap();
    assert_eq!(s.metrics[0].columns(), ["mflops"]);
    assert_eq!(
        s.metrics[1].columns(),
        [
            "copy_gb_per_s",
            "copy_median_gb_per_s",
            "copy_stddev_gb_per_s",
            "copy_min_gb_per_s",
            "copy_max_gb_per_s",
            "copy_rel_ci",
            "copy_samples",
            "copy_throttled",
            "copy_spread",
            "copy_placements",
            "copy_sm_mhz"
        ]
    );
    assert!(s.gpu, "nvcc is the default compiler, so a GPU is needed");
}

#[test]
fn timing_table_becomes_environment() {
    let s = parse(&format!(
        "{OK}[timing]\nmin_samples = 20\nflush_l2 = true\nbatch = 4\n"
    ))
    .unwrap();
    let env = s.timing.env();
    assert_eq!(env["SWEEP_MIN_SAMPLES"], "20");
    assert_eq!(env["SWEEP_FLUSH_L2"], "1");
    assert_eq!(env["SWEEP_BATCH"], "4");
    assert!(
        !s.env.contains_key("SWEEP_BATCH"),
        "[env] is the spec's own"
    );
    assert_eq!(s.target_rel_ci(), DEFAULT_TARGET_REL_CI);
}

/// Seeded mutations of every spec in sweeps/ (bytes cut, lines doubled or swapped, TOML
/// pieces and extreme numbers put in): each gives a spec error or a plan, never a panic.
#[test]
fn fuzzed_specs_give_an_error_or_a_plan_never_a_panic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("sweeps");
    let mut seeds: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "toml"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect();
    seeds.sort();
    assert!(seeds.len() >= 10);
    const PIECES: [&str; 26] = [
        "[[axis]]\n",
        "[[metric]]\n",
        "[timing]\n",
        "[vars]\n",
        "[analyze]\n",
        "name = \"",
        "range = [",
        "pow2 = [",
        "values = [",
        "]",
        "\"",
        "=",
        ",",
        "zip = [[\"threads\", \"n\"]]\n",
        "filter = \"((threads",
        "-1",
        "0",
        "1e308",
        "9223372036854775807",
        "-9223372036854775808",
        "step = 0\n",
        "repeat = 0\n",
        "repeat = \"3\"\n",
        "recheck = 2.5\n",
        "placements = 4294967295\n",
        "\u{0}",
    ];
    let mut state: u64 = std::env::var("SWEEP_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0x5EED_F022)
        .max(1);
    let mut next = move |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n.max(1) as u64) as usize
    };
    let (mut ok, mut errors) = (0, 0);
    // SWEEP_FUZZ_CASES for a longer campaign (SWEEP_FUZZ_SEED for another sequence).
    let cases: usize = std::env::var("SWEEP_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000);
    for case in 0..cases {
        let mut text = seeds[case % seeds.len()].clone();
        for _ in 0..1 + next(4) {
            let lines: Vec<&str> = text.lines().collect();
            text = match next(5) {
                0 if !text.is_empty() => {
                    let a = next(text.len());
                    let b = (a + next(40)).min(text.len());
                    let (a, b) = (floor(&text, a), floor(&text, b));
                    format!("{}{}", &text[..a], &text[b..])
                }
                1 if !lines.is_empty() => {
                    let k = next(lines.len());
                    let mut l = lines.clone();
                    l.insert(k, lines[k]);
                    l.join("\n")
                }
                2 if lines.len() > 1 => {
                    let mut l = lines.clone();
                    let (a, b) = (next(l.len()), next(l.len()));
                    l.swap(a, b);
                    l.join("\n")
                }
                _ => {
                    let at = floor(&text, next(text.len() + 1));
                    format!(
                        "{}{}{}",
                        &text[..at],
                        PIECES[next(PIECES.len())],
                        &text[at..]
                    )
                }
            };
        }
        let outcome = std::panic::catch_unwind(|| match Spec::parse(Path::new("f.toml"), &text) {
            Ok(spec) => {
                let size: f64 = spec.axes.iter().map(|a| a.values.len() as f64).product();
                if size <= 20_000.0 {
                    let _ = crate::points::expand(&spec);
                }
                true
            }
            Err(e) => {
                assert!(!e.to_string().contains('\n'), "one line: {e}");
                false
            }
        });
        match outcome {
            Ok(true) => ok += 1,
            Ok(false) => errors += 1,
            Err(_) => panic!("case {case} panicked on:\n{text}"),
        }
    }
    assert!(ok > 100 && errors > 100, "{ok} parsed, {errors} refused");
}

/// The largest char boundary at or below `i`.
fn floor(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// A column `[profile]` adds must not be one the spec writes already: the sampled power would
/// overwrite a metric `power` in W (both cells named `power_w`), a ratio a metric `a_` whose unit
/// slug is the ratio's name.
#[test]
fn profile_columns_never_take_a_metric_or_axis_column() {
    let core = "bench = \"b\"\n[[axis]]\nname = \"k\"\nrange = [1, 2]\n[[metric]]\nname = \"fast\"\nunit = \"s\"\n";
    let cases = [
        (
            format!("{core}[[metric]]\nname = \"power\"\nunit = \"W\"\nregex = 'P (?P<value>[0-9.]+)'\n[profile]\npower = true\n"),
            "sweeps/t.toml:13: `[profile] power` adds a column `power_w`, which metric `power` writes too (hint: rename the metric)",
        ),
        (
            "bench = \"b\"\n[[axis]]\nname = \"energy_j\"\nrange = [1, 2]\n[[metric]]\nname = \"fast\"\nunit = \"s\"\n[profile]\npower = true\n".into(),
            "sweeps/t.toml:9: `[profile] power` adds a column `energy_j`, which axis `energy_j` writes too (hint: rename the axis)",
        ),
        (
            format!("{core}[[axis]]\nname = \"fast__shared_wavefronts_per_request\"\nvalues = [1]\n[profile]\npresets = [\"shared_banks\"]\n"),
            "sweeps/t.toml:12: `[profile] presets` adds a column `fast__shared_wavefronts_per_request`, which axis `fast__shared_wavefronts_per_request` writes too (hint: rename the axis)",
        ),
    ];
    for (text, want) in cases {
        assert_eq!(parse(&text).unwrap_err(), want, "{text}");
    }
    // `__` separates a metric from its counter: a metric `fast__x` beside `fast` would read as a
    // counter `x_s` of `fast` (in the export and the analysis).
    // A metric `fast_` in s writes `fast__s`: a counter `s` of `fast`.
    for (name, plain) in [("fast__x", "fast_x"), ("fast_", "fast"), ("a___b", "a_b")] {
        assert_eq!(
            parse(&format!("{core}[[metric]]\nname = \"{name}\"\nunit = \"s\"\nregex = 'x (?P<value>[0-9.]+)'\n[profile]\npresets = [\"occupancy\"]\n")).unwrap_err(),
            format!("sweeps/t.toml:8: metric name `{name}` makes columns with `__`, which separates a metric from its counter in `[profile]` columns (hint: rename it, e.g. `{plain}`)")
        );
    }
    // The same metrics without the colliding profile columns are fine.
    assert!(parse(&format!("{core}[[metric]]\nname = \"power\"\nunit = \"W\"\nregex = 'P (?P<value>[0-9.]+)'\n[profile]\npresets = [\"occupancy\"]\n")).is_ok());
}

#[test]
fn headline_names_a_metric_by_name_or_column_and_defaults_to_the_first() {
    let two = "bench = \"b\"\n[[axis]]\nname = \"threads\"\nrange = [1, 8]\n[[metric]]\npattern = \"mflops\"\n[[metric]]\nname = \"copy\"\nunit = \"GB/s\"\nregex = 'c (?P<value>[0-9.]+)'\n";
    let headline = |text: &str| parse(text).unwrap().headline().unwrap().name.clone();
    assert_eq!(headline(two), "mflops", "the first in spec order");
    assert_eq!(headline(&format!("headline = \"copy\"\n{two}")), "copy");
    assert_eq!(
        headline(&format!("headline = \"copy_gb_per_s\"\n{two}")),
        "copy"
    );
    assert_eq!(
        parse(&format!("headline = \"gflops\"\n{two}")).unwrap_err(),
        "sweeps/t.toml:1: `headline` = \"gflops\" is not a metric of this spec (hint: one of `mflops`, `copy`)"
    );
    // Below a table, TOML reads it as that table's key: the hint says where it belongs.
    let below = parse(&format!("{two}headline = \"copy\"\n")).unwrap_err();
    assert!(below.contains("`headline` is a top-level key"), "{below}");
}

/// `better` and `model` of a `[[metric]]` (issue 34): read and checked, with the culprit named.
#[test]
fn metrics_take_a_direction_and_a_model_and_refuse_bad_ones() {
    let core = "bench = \"b\"\n[[axis]]\nname = \"threads\"\nrange = [1, 8]\n[[metric]]\nname = \"k\"\nunit = \"MFlops\"\n";
    let s = parse(&format!(
        "{core}better = \"lower\"\nmodel = \"wavefronts_per_request:stride=2, words=1\"\n"
    ))
    .unwrap();
    assert_eq!(s.metrics[0].better, Some(Better::Lower));
    let m = s.metrics[0].model.unwrap();
    assert_eq!(
        (m.kind, m.stride, m.words),
        (ModelKind::WavefrontsPerRequest, 2, 1)
    );
    assert_eq!(m.to_string(), "wavefronts_per_request:stride=2");
    assert_eq!(Model::parse(&m.to_string()), Ok(m));
    let plain = parse(core).unwrap();
    assert_eq!(
        (plain.metrics[0].better, plain.metrics[0].model),
        (None, None)
    );
    for (keys, want) in [
        (
            "better = \"more\"\n",
            "sweeps/t.toml:5: metric `k`: `better = \"more\"` (hint: `higher`, `lower` or `neither`)",
        ),
        (
            "model = \"warps\"\n",
            "sweeps/t.toml:5: metric `k`: `model = \"warps\"`: unknown model `warps` (hint: one of `whole_warps`",
        ),
        (
            "model = \"whole_warps:stride=2\"\n",
            "model `whole_warps` takes no parameter `stride`",
        ),
        (
            "model = \"wavefronts_per_request:stride=0\"\n",
            "model parameter `stride=0`: the value must be a whole number 1..32",
        ),
        (
            "model = \"lines_per_request:words\"\n",
            "model parameter `words` is not `key=value`",
        ),
    ] {
        let err = parse(&format!("{core}{keys}")).unwrap_err();
        assert!(err.contains(want), "{keys}: {err}");
    }
}

#[test]
fn the_default_direction_follows_the_unit() {
    for (unit, want) in [
        ("GB/s", Better::Higher),
        ("MFlops", Better::Higher),
        ("fraction", Better::Higher),
        ("ms", Better::Lower),
        ("cycles", Better::Lower),
        ("ways", Better::Neither),
        ("bytes", Better::Neither),
        ("registers", Better::Neither),
    ] {
        assert_eq!(Better::for_unit(unit), want, "{unit}");
    }
}

#[test]
fn a_share_of_something_counted_has_no_best() {
    for (name, unit, want) in [
        ("divergent_warps", "fraction", Better::Neither),
        ("occupancy", "fraction", Better::Neither),
        ("copy_vs_memcpy", "fraction", Better::Higher),
        ("hit_rate", "%", Better::Higher),
        ("divergent_warps", "GB/s", Better::Higher),
        ("expected_ways", "ways", Better::Neither),
        ("kernel", "ms", Better::Lower),
    ] {
        assert_eq!(Better::for_metric(name, unit), want, "{name} in {unit}");
    }
}

#[test]
fn non_finite_numbers_in_vars_and_axis_values_are_refused_with_key_and_line() {
    let cases = [
        (
            format!("{OK}[vars]\nn = 4\nm = nan\n"),
            "sweeps/t.toml:9: [vars] `m` is `NaN`, not a finite number (hint: a number a C constant can hold, or a string in quotes)",
        ),
        (
            format!("{OK}[vars]\nn = -inf\n"),
            "sweeps/t.toml:8: [vars] `n` is `-inf`, not a finite number",
        ),
        (
            format!("{OK}[[axis]]\nname = \"x\"\nvalues = [1.5, inf]\n"),
            "sweeps/t.toml:7: axis `x` has the value `inf`, not a finite number",
        ),
    ];
    for (text, want) in cases {
        let e = parse(&text).unwrap_err();
        assert!(e.starts_with(want), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }
    let s = parse(&format!("{OK}[vars]\nmode = \"nan\"\n")).unwrap();
    assert_eq!(
        s.vars["mode"],
        Value::Str("nan".into()),
        "a string stays one"
    );
}

#[test]
fn flags_that_name_an_output_of_the_compiler_are_refused_with_the_flag() {
    let hint = format!("(hint: {})", super::axis::OUTPUT_HINT);
    let flags = |f: &str| {
        format!("bench = \"b\"\nflags = [{f}]\n[[axis]]\nname = \"threads\"\nrange = [1, 8]\n[[metric]]\npattern = \"mflops\"\n")
    };
    for (given, flag) in [
        ("\"-O3\", \"-o\", \"/tmp/x\"", "-o"),
        ("\"-o/tmp/x\"", "-o/tmp/x"),
        ("\"-O3 --output-file=/tmp/x\"", "--output-file=/tmp/x"),
        ("\"-odir\", \"/tmp\"", "-odir"),
        ("\"--output-directory\", \"/tmp\"", "--output-directory"),
        ("\"-dumpdir\", \"/tmp/\", \"-fstack-usage\"", "-dumpdir"),
        ("\"-aux-info\", \"/tmp/a\"", "-aux-info"),
        (
            "\"-fdump-tree-original=/tmp/t\"",
            "-fdump-tree-original=/tmp/t",
        ),
        ("\"-MF\", \"/tmp/d\"", "-MF"),
        ("\"-Xcompiler=-O2,-o,/tmp/x\"", "-o"),
        ("\"-Wl,-o,/tmp/x\"", "-o"),
        ("\"--keep-dir=/tmp\"", "--keep-dir=/tmp"),
        ("\"-optf\", \"opts.txt\"", "-optf"),
        ("\"--output=/tmp/x\"", "--output=/tmp/x"),
        ("\"@/tmp/rsp\"", "@/tmp/rsp"),
        ("\"-Xlinker\", \"--output=/tmp/x\"", "--output=/tmp/x"),
        ("\"-Wl,-Map=/tmp/x.map\"", "-Map=/tmp/x.map"),
        ("\"-Wp,-MD,/tmp/x.d\"", "-Wp,-MD"),
        ("\"-Xcompiler=-Wp,-MMD,/tmp/x.d\"", "-Wp,-MMD"),
        ("\"-Wl,--out-implib,/tmp/x\"", "--out-implib"),
        (
            "\"-Xlinker\", \"--dependency-file=/tmp/x\"",
            "--dependency-file=/tmp/x",
        ),
        ("\"-fprofile-generate=/tmp/p\"", "-fprofile-generate=/tmp/p"),
        ("\"-Wa,-adhln=/tmp/x.lst\"", "-adhln=/tmp/x.lst"),
        ("\"-Xptxas=-o,/tmp/x\"", "-o"),
        ("\"-keep\"", "-keep"),
    ] {
        let e = parse(&flags(given)).unwrap_err();
        assert_eq!(
            e,
            format!("sweeps/t.toml:2: `flags` has `{flag}`, which names an output of the compiler {hint}"),
            "{given}"
        );
    }
    assert!(parse(&flags("\"-O3\", \"-lineinfo\", \"-Xcompiler=-O2\"")).is_ok());
    assert!(parse(&flags(
        "\"-MD\", \"-fprofile-generate\", \"-arch=sm_90\", \"--keep-device-functions\""
    ))
    .is_ok());
    let e = parse(&format!(
        "{OK}[[axis]]\nname = \"opt\"\ncompiler_flags = true\nvalues = [\"-O2\", \"-O3 -o /tmp/x\"]\n"
    ))
    .unwrap_err();
    assert_eq!(
        e,
        format!("sweeps/t.toml:7: axis `opt` has the value `-O3 -o /tmp/x` with `-o`, which names an output of the compiler {hint}")
    );
}
