//! An axis of a spec: `[[axis]]` as written, checked and expanded into its values.

use super::Value;
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct AxisFile {
    pub(super) name: String,
    pub(super) range: Option<Vec<i64>>,
    pub(super) step: Option<i64>,
    pub(super) pow2: Option<Vec<i64>>,
    pub(super) values: Option<Vec<Value>>,
    #[serde(default)]
    pub(super) compiler_flags: bool,
    /// Words for the axis on charts (read by [`super::Labels`]).
    #[allow(dead_code)]
    pub(super) label: Option<String>,
}

#[derive(Clone, Debug)]
pub struct Axis {
    pub name: String,
    pub values: Vec<Value>,
    /// The value is split on spaces and added to the build command.
    pub compiler_flags: bool,
}

pub(super) fn valid_ident(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Why an `[[axis]]` table is wrong (the spec adds its file and line).
#[derive(Debug, thiserror::Error)]
pub enum AxisError {
    #[error("axis name `{0}` is not an identifier (hint: letters, digits and `_`, not starting with a digit)")]
    NotIdentifier(String),
    #[error("axis `{0}` needs exactly one of `range`, `pow2`, `values`")]
    NotOneKind(String),
    #[error("axis `{0}`: `step` only goes with `range`")]
    StepWithoutRange(String),
    #[error(
        "axis `{name}`: `{key}` has {items} items (hint: two, `{key} = [first, last]`{})",
        step_hint(key)
    )]
    NotTwoBounds {
        name: String,
        key: &'static str,
        items: usize,
    },
    #[error("axis `{name}` has step {step} (hint: step must be > 0)")]
    BadStep { name: String, step: i64 },
    #[error("axis `{name}` is empty: {from}..{to} step {step} (hint: start must be <= end)")]
    EmptyRange {
        name: String,
        from: i64,
        to: i64,
        step: i64,
    },
    #[error("axis `{name}` has {count} values (hint: at most 1000000)")]
    TooMany { name: String, count: i128 },
    #[error("axis `{name}`: pow2 bounds {from} and {to} must be powers of two")]
    NotPowersOfTwo { name: String, from: i64, to: i64 },
    #[error("axis `{name}` is empty: pow2 {from}..{to} (hint: start must be <= end)")]
    EmptyPow2 { name: String, from: i64, to: i64 },
    #[error("axis `{0}` is empty: values = [] (hint: list at least one value)")]
    NoValues(String),
    #[error("axis `{0}` has compiler_flags = true, so its values must be strings")]
    FlagsNotStrings(String),
    #[error("axis `{name}` has the value `{value}` with `{flag}`, which names an output of the compiler (hint: {OUTPUT_HINT})")]
    OutputFlag {
        name: String,
        value: String,
        flag: String,
    },
    #[error("axis `{name}` has the value {value:?}, a number with blanks at its edge (hint: the readers of results.csv read a padded number as the number, so it would be one x with the number written without them; write it without)")]
    EdgeBlanks { name: String, value: String },
    #[error("axis `{name}` has the value {value:?}, only blanks (hint: the readers of results.csv read a cell of blanks as an empty one, another value; write the text without them)")]
    OnlyBlanks { name: String, value: String },
    #[error("axis `{name}` has `{a}` and `{b}`, two values that are one number (hint: the analysis and the charts would read their points as one x and average them; write each number once)")]
    OneNumber { name: String, a: String, b: String },
    #[error("axis `{name}` has the value `{value}`, not a finite number (hint: a number a C constant can hold, or a string in quotes)")]
    NotFinite { name: String, value: f64 },
}

/// The hint of a refused output flag.
pub const OUTPUT_HINT: &str = "sweep puts the binary in its build cache; leave out -o, --output, --output-file, -odir, --output-directory, -MF, -Wp,-MD, --dependency-output, --dependency-file, --out-implib, --keep-dir, -keep, -save-temps, -Map, --options-file, -dumpdir, -dumpbase, -aux-info, -fdump-*=FILE, -fdump-ada-spec, -fprofile-generate=DIR, -Wa,-a*=FILE, -time=FILE, nvcc's -time, -fdevice-time-trace, --run and -Xfatbin --create, and @file";

/// The first of `flags` (compiler arguments, one per item) that names a file or folder the
/// compiler would write (nvcc's and gcc's: `-o`, `-o<path>`, `--output-file`, `-odir`,
/// `--output-directory`, `-MF`, `--dependency-output`, `--keep-dir`, `-save-temps`, a linker's
/// `--output` and `-Map`), or reads more options from (`-optf`, `--options-file`, `@file`), also inside `-Xcompiler`/`-Xlinker`/`-Wl,`
/// lists: such a flag would make a build write outside the run's folders. `nvcc`: the compiler is
/// nvcc, whose own short options `-opt-info`, `-objtemp` and `-optix-ir` name no file (to gcc,
/// `-opt-info` is `-o pt-info`), while its `-time FILE` and `-fdevice-time-trace FILE` write one.
pub fn output_flag<'a>(flags: impl IntoIterator<Item = &'a str>, nvcc: bool) -> Option<String> {
    const LONG: [&str; 31] = [
        // `--output=x` (gcc), `--output-file`, `--output-directory` (nvcc), a linker's `--output`.
        "--output",
        // A linker's map file (`-Wl,-Map=x`).
        "-Map",
        "--Map",
        "--options-file",
        "--dependency-output",
        "--keep-dir",
        "-keep-dir",
        "-save-temps",
        "--save-temps",
        "-MF",
        // gcc's folder and name for its dumps and auxiliary files (`-fstack-usage`), and the
        // prototypes file.
        "-dumpdir",
        "-dumpbase",
        "-aux-info",
        // A linker's import library and dependency file (`-Wl,--out-implib,x`).
        "--out-implib",
        "--dependency-file",
        // Where a profiled program writes its counts (when it runs), clang's records and traces.
        "-fprofile-generate=",
        "-fprofile-dir=",
        "-fprofile-note=",
        "-foptimization-record-file",
        "-ftime-trace=",
        // gcc's `-time=FILE` (a bare `-time` prints to stderr), the Ada spec gcc writes into the
        // folder it runs in, clang's compilation database entry, diagnostics and crash files.
        "-time=",
        "-fdump-ada-spec",
        "-MJ",
        "--serialize-diagnostics",
        "-fcrash-diagnostics-dir",
        "-fmodules-cache-path",
        // fatbinary's `--create=FILE` (through `-Xfatbin`), gold's and lld's reports and
        // reproducer archives.
        "--create",
        "--print-symbol-counts",
        "--reproduce",
        "--why-extract",
        // nvcc's `--run-args` (with `--run`: the program runs during its build).
        "--run-args",
    ];
    // nvcc's `-time FILE`/`--time=FILE` (a CSV of each phase's time) and
    // `-fdevice-time-trace FILE` (a JSON trace), in either spelling.
    const NVCC_LONG: [&str; 4] = [
        "-time",
        "--time",
        "-fdevice-time-trace",
        "--fdevice-time-trace",
    ];
    const NVCC_NOT_OUTPUT: [&str; 3] = ["-opt-info", "-objtemp", "-optix-ir"];
    // gcc's `-Xassembler X` and `-Xpreprocessor X` hand the next word to that tool, as `-Wa,X`
    // and `-Wp,X` do (review 13a F1: `-Xassembler -adhln=FILE` wrote the listing outside).
    let mut words: Vec<String> = Vec::new();
    let mut tool: Option<&str> = None;
    for flag in flags {
        match tool.take() {
            Some(prefix) => words.push(format!("{prefix}{flag}")),
            None => {
                tool = match flag.trim() {
                    "-Xassembler" => Some("-Wa,"),
                    "-Xpreprocessor" => Some("-Wp,"),
                    _ => None,
                };
                words.push(flag.to_string());
            }
        }
    }
    for flag in words.iter().map(String::as_str) {
        // `-Xcompiler=-o,x`, `-Wl,-o,x`, `--compiler-options=..`: each item of the list too.
        // `-Wp,-MD,x` (the preprocessor's dependency file), `-Wa,-adhln=x` (the assembler's
        // listing), `-Xptxas=-o,x`.
        let list = [
            "-Xcompiler=",
            "-Xlinker=",
            "--compiler-options=",
            "--linker-options=",
            "-Wl,",
            "-Wp,",
            "-Wa,",
            "-Xptxas=",
            "--ptxas-options=",
            "-Xnvlink=",
            "--nvlink-options=",
            "-Xfatbin=",
            "--fatbin-options=",
        ]
        .iter()
        .find_map(|p| flag.strip_prefix(p).map(|rest| (*p, rest)));
        let items: Vec<&str> = match list {
            Some((_, rest)) => rest.split(',').collect(),
            None => vec![flag],
        };
        let preprocessor = flag.starts_with("-Wp,") || items.iter().any(|i| i.trim() == "-Wp");
        let assembler = flag.starts_with("-Wa,") || items.iter().any(|i| i.trim() == "-Wa");
        // nvcc's `-keep`: the intermediate files go into the folder it runs in.
        // nvcc's `--run`: the program runs during its build, in the folder sweep runs in, and
        // on the GPU beside another point's measurement (review 13a F4).
        if nvcc && matches!(flag.trim(), "--run" | "-run" | "-run-args") {
            return Some(flag.trim().to_string());
        }
        if matches!(flag.trim(), "-keep" | "--keep") {
            return Some(flag.trim().to_string());
        }
        for item in items {
            let item = item.trim();
            if preprocessor && matches!(item, "-MD" | "-MMD") {
                return Some(format!("-Wp,{item}"));
            }
            if assembler && ((item.starts_with("-a") && item.contains('=')) || item == "--MD") {
                return Some(item.to_string());
            }
            // `@file`: more arguments from a file, which may name an output.
            // `-fdump-tree-all=x`, `-fopt-info-vec=x`: a dump into a file of its own.
            let dump_file = (item.starts_with("-fdump-") || item.starts_with("-fopt-info"))
                && item.contains('=');
            let nvcc_option = |names: &[&str]| {
                nvcc && names.iter().any(|n| {
                    item == *n
                        || item
                            .strip_prefix(n)
                            .is_some_and(|rest| rest.starts_with('='))
                })
            };
            if nvcc_option(&NVCC_LONG) {
                return Some(item.to_string());
            }
            if (item.starts_with("-o") && !nvcc_option(&NVCC_NOT_OUTPUT))
                || item.starts_with('@')
                || dump_file
                || LONG.iter().any(|l| item.starts_with(l))
            {
                return Some(item.to_string());
            }
        }
    }
    None
}

fn step_hint(key: &str) -> &'static str {
    if key == "range" {
        ", and `step = n` for a step"
    } else {
        ""
    }
}

pub(super) fn expand_axis(a: &AxisFile, nvcc: bool) -> Result<Axis, AxisError> {
    let name = &a.name;
    if !valid_ident(name) {
        return Err(AxisError::NotIdentifier(name.clone()));
    }
    let given = [a.range.is_some(), a.pow2.is_some(), a.values.is_some()];
    if given.iter().filter(|g| **g).count() != 1 {
        return Err(AxisError::NotOneKind(name.clone()));
    }
    if a.step.is_some() && a.range.is_none() {
        return Err(AxisError::StepWithoutRange(name.clone()));
    }
    let bounds = |key: &'static str, v: &Option<Vec<i64>>| match v.as_deref() {
        None => Ok(None),
        Some(&[from, to]) => Ok(Some([from, to])),
        Some(other) => Err(AxisError::NotTwoBounds {
            name: name.clone(),
            key,
            items: other.len(),
        }),
    };
    let (range, pow2) = (bounds("range", &a.range)?, bounds("pow2", &a.pow2)?);
    let values = if let Some([from, to]) = range {
        let step = a.step.unwrap_or(1);
        if step <= 0 {
            return Err(AxisError::BadStep {
                name: name.clone(),
                step,
            });
        }
        if from > to {
            return Err(AxisError::EmptyRange {
                name: name.clone(),
                from,
                to,
                step,
            });
        }
        let count = (to as i128 - from as i128) / step as i128 + 1;
        if count > 1_000_000 {
            return Err(AxisError::TooMany {
                name: name.clone(),
                count,
            });
        }
        // In i128: `i * step` may pass i64 where `from + i * step` does not (from = i64::MIN).
        (0..count)
            .map(|i| Value::Int((from as i128 + i * step as i128) as i64))
            .collect()
    } else if let Some([from, to]) = pow2 {
        let pow = |v: i64| v > 0 && (v & (v - 1)) == 0;
        if !pow(from) || !pow(to) {
            return Err(AxisError::NotPowersOfTwo {
                name: name.clone(),
                from,
                to,
            });
        }
        if from > to {
            return Err(AxisError::EmptyPow2 {
                name: name.clone(),
                from,
                to,
            });
        }
        let mut v = Vec::new();
        let mut x = Some(from);
        while let Some(p) = x.filter(|&p| p <= to) {
            v.push(Value::Int(p));
            x = p.checked_mul(2);
        }
        v
    } else {
        let values = a.values.clone().unwrap_or_default();
        if values.is_empty() {
            return Err(AxisError::NoValues(name.clone()));
        }
        values
    };
    if let Some(Value::Float(value)) = values
        .iter()
        .find(|v| matches!(v, Value::Float(x) if !x.is_finite()))
    {
        return Err(AxisError::NotFinite {
            name: name.clone(),
            value: *value,
        });
    }
    // A number written with blanks at its edge: the readers of results.csv read a padded number
    // as the number, so `" 1"` and `"1"` would be one x, their points averaged (review 13b F11).
    // Text keeps its blanks (`"  lead"` and `"lead"` are two groups). A number with a decimal
    // comma too (`" 1,5"`): the semicolon dialect reads it as one.
    let number = |t: &str| crate::schema::Dialect::Semicolon.parse_number(t).is_some();
    if let Some(Value::Str(text)) = values
        .iter()
        .find(|v| matches!(v, Value::Str(t) if t.trim() != t.as_str() && number(t)))
    {
        return Err(AxisError::EdgeBlanks {
            name: name.clone(),
            value: crate::units::visible(text).into_owned(),
        });
    }
    // Text of blanks alone (`" "`, a tab, U+00A0): read back as an empty cell, its rows were
    // another point's values, refused by every reader of the run it made (review 18a F1).
    if let Some(Value::Str(text)) = values
        .iter()
        .find(|v| matches!(v, Value::Str(t) if !t.is_empty() && t.trim().is_empty()))
    {
        return Err(AxisError::OnlyBlanks {
            name: name.clone(),
            value: crate::units::visible(text).into_owned(),
        });
    }
    // Two numbers written apart that are one number (`0` and `-0.0`, a float and an integer past
    // 2^53): two points that every reading along this axis would average into one (review 12b
    // H1). Integers past 2^53 stay apart as integers (compare and merge key them exactly).
    let numbers: Vec<(usize, f64)> = values
        .iter()
        .enumerate()
        .filter_map(|(i, v)| match v {
            Value::Int(n) => Some((i, *n as f64)),
            Value::Float(x) => Some((i, *x)),
            Value::Str(_) => None,
        })
        .collect();
    for (k, &(i, x)) in numbers.iter().enumerate() {
        if let Some(&(j, _)) = numbers[..k].iter().find(|&&(j, y)| {
            y == x
                && !matches!((&values[i], &values[j]), (Value::Int(_), Value::Int(_)))
                && values[i].to_string() != values[j].to_string()
        }) {
            return Err(AxisError::OneNumber {
                name: name.clone(),
                a: values[j].to_string(),
                b: values[i].to_string(),
            });
        }
    }
    if a.compiler_flags && values.iter().any(|v| !matches!(v, Value::Str(_))) {
        return Err(AxisError::FlagsNotStrings(name.clone()));
    }
    if a.compiler_flags {
        for v in &values {
            let text = v.to_string();
            if let Some(flag) = output_flag(text.split_whitespace(), nvcc) {
                return Err(AxisError::OutputFlag {
                    name: name.clone(),
                    value: text,
                    flag,
                });
            }
        }
    }
    Ok(Axis {
        name: name.clone(),
        values,
        compiler_flags: a.compiler_flags,
    })
}
