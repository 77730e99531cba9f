//! Stage `compile`: the build command of a point, and the toolchain it is built with.

use crate::exec::{self, Cmd, Sink};
use crate::points::Point;
use crate::render::Bench;
use crate::spec::{Spec, Value};
use std::path::Path;
use std::time::Duration;

/// The compiler, its version and the target, found once per sweep.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Toolchain {
    pub compiler: String,
    /// First line(s) of `--version` that name the release; part of the cache key.
    pub version: String,
    /// `sm_90`, or None for a host compiler.
    pub arch: Option<String>,
    /// Where the arch came from: `spec`, `gpu` or `default`.
    pub arch_from: String,
}

#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    #[error(
        "compiler `{compiler}` not found (hint: {})",
        no_compiler_hint(compiler)
    )]
    NoCompiler { compiler: String },
    /// Found, but the operating system would not start it: a compiler that is there was said
    /// to be missing.
    #[error(
        "compiler `{compiler}` could not be started: {why} (hint: {})",
        start_hint(why)
    )]
    CannotStart { compiler: String, why: String },
    /// `<compiler> --version` exited non-zero: a compiler that is there was said to be missing.
    #[error("compiler `{compiler}` failed on `{compiler} --version` (hint: run it by hand to see why; set `compiler` in the spec to another one)")]
    VersionFailed { compiler: String },
    /// `<compiler> --version` ran past the spec's `build_timeout_s`: sweep would wait for it for
    /// ever, before its first point.
    #[error("compiler `{compiler}` did not answer `{compiler} --version` within {} s (hint: run it by hand to see what it waits for; `build_timeout_s` in the spec is its limit)", secs.as_secs_f64())]
    NoAnswer {
        compiler: String,
        secs: std::time::Duration,
    },
}

fn start_hint(why: &str) -> &'static str {
    if why.contains("os error 24") || why.contains("os error 23") {
        "too many files open: raise the limit (`ulimit -n`) or close some"
    } else {
        "check that it is executable and that the machine has memory and processes to spare"
    }
}

fn no_compiler_hint(compiler: &str) -> &'static str {
    if compiler.contains("nvcc") {
        "put nvcc on PATH, e.g. `export PATH=/usr/local/cuda/bin:$PATH`, or set `compiler` in the spec"
    } else {
        "install it or put it on PATH, or set `compiler` in the spec"
    }
}

/// Arch used when the spec names none and no GPU is visible (`sweep build` on a login node).
pub const DEFAULT_ARCH: &str = "sm_90";

impl Toolchain {
    pub fn find(spec: &Spec, gpu_arch: Option<String>) -> Result<Toolchain, CompileError> {
        let out = exec::query_confined(&spec.compiler, &["--version"], spec.build_timeout)
            .map_err(|e| match e {
                exec::NoAnswer::TimedOut(secs) => CompileError::NoAnswer {
                    compiler: spec.compiler.clone(),
                    secs,
                },
                exec::NoAnswer::NotFound => CompileError::NoCompiler {
                    compiler: spec.compiler.clone(),
                },
                exec::NoAnswer::CannotStart(why) => CompileError::CannotStart {
                    compiler: spec.compiler.clone(),
                    why,
                },
                exec::NoAnswer::Failed => CompileError::VersionFailed {
                    compiler: spec.compiler.clone(),
                },
            })?;
        let version = out
            .lines()
            .filter(|l| !l.trim().is_empty())
            .filter(|l| l.contains("release") || l.contains("ersion") || l.contains("Build"))
            .collect::<Vec<_>>()
            .join(" | ");
        let (arch, arch_from) = target(spec, gpu_arch);
        Ok(Toolchain {
            compiler: spec.compiler.clone(),
            version: if version.is_empty() {
                out.trim().to_string()
            } else {
                version
            },
            arch,
            arch_from: arch_from.to_string(),
        })
    }

    /// Where the compiler's program is, links followed: `compiler` itself when it names a path,
    /// else the first of its name on PATH. Part of the cache key: another `cc` first on PATH (a
    /// wrapper that adds flags, another install of the same release) builds another binary.
    pub fn program(&self) -> Option<std::path::PathBuf> {
        let given = if self.compiler.contains('/') {
            std::path::PathBuf::from(&self.compiler)
        } else {
            exec::on_path(&self.compiler)?
        };
        Some(given.canonicalize().unwrap_or(given))
    }

    /// The compiler and target the spec names, the compiler not asked for its version (no
    /// version, no GPU asked for its arch): what a point built by hand uses ([`by_hand`]).
    pub fn named(spec: &Spec) -> Toolchain {
        let (arch, arch_from) = target(spec, None);
        Toolchain {
            compiler: spec.compiler.clone(),
            version: String::new(),
            arch,
            arch_from: arch_from.to_string(),
        }
    }
}

/// The arch to build for, and where it came from: none for a host compiler, else the spec's, the
/// GPU's, or [`DEFAULT_ARCH`].
fn target(spec: &Spec, gpu_arch: Option<String>) -> (Option<String>, &'static str) {
    if !spec.is_nvcc() {
        (None, "none")
    } else if let Some(a) = &spec.arch {
        (Some(a.clone()), "spec")
    } else if let Some(a) = gpu_arch {
        (Some(a), "gpu")
    } else {
        (Some(DEFAULT_ARCH.to_string()), "default")
    }
}

/// Flags of the point: the spec's `flags`, then the values of its `compiler_flags` axes.
pub fn point_flags(spec: &Spec, point: &Point) -> Vec<String> {
    let mut flags = spec.flags.clone();
    for axis in spec.axes.iter().filter(|a| a.compiler_flags) {
        if let Some(Value::Str(s)) = point.get(&axis.name) {
            flags.extend(s.split_whitespace().map(String::from));
        }
    }
    flags
}

/// `nvcc -arch=sm_90 -I<point dir> -I<common> [-MD -MF <deps>] -o <out> <source> <flags...>`: with
/// `deps` the compiler also lists every file it read there (make's format; gcc, clang and nvcc
/// alike), which the build cache checks before it reuses the binary.
pub fn command(
    tc: &Toolchain,
    bench: &Bench,
    flags: &[String],
    header_dir: &Path,
    deps: Option<&Path>,
    out: &Path,
) -> Cmd {
    let mut cmd = Cmd::new(&tc.compiler);
    if let Some(arch) = &tc.arch {
        cmd = cmd.arg(format!("-arch={arch}"));
    }
    cmd = cmd.arg(format!("-I{}", header_dir.display()));
    if let Some(common) = &bench.common {
        cmd = cmd.arg(format!("-I{}", common.display()));
    }
    if let Some(deps) = deps {
        cmd = cmd.arg("-MD").arg("-MF").arg(deps.display().to_string());
    }
    cmd.arg("-o")
        .arg(out.display().to_string())
        .arg(bench.source.display().to_string())
        .args(flags.iter().cloned())
        .nice(BUILD_NICE)
}

/// The build of `point` by hand, from headers rendered into `dir` into `dir/bench`: the command
/// [`command`] gives a sweep's builds, for the toolchain the spec names, less the dependency list
/// that only the build cache reads (`sweep render --out` prints it).
pub fn by_hand(spec: &Spec, bench: &Bench, point: &Point, dir: &Path) -> Cmd {
    command(
        &Toolchain::named(spec),
        bench,
        &point_flags(spec, point),
        dir,
        None,
        &dir.join("bench"),
    )
}

/// Niceness added to every build: nvcc on every core must not slow the host side of the program
/// that measures meanwhile (its samples wait on the CPU between launches; on an H100 the
/// measuring phase took 395 ms per point in a cold sweep against 316 ms in a warm one; docs/measurements.md).
pub const BUILD_NICE: i32 = 10;

/// Builds; the log (command line first) goes to `log`. Killed at once when `stop` says so (an
/// interrupted run does not use it).
pub fn build(
    cmd: &Cmd,
    timeout: Duration,
    log: &Path,
    stop: &dyn Fn() -> bool,
) -> Result<exec::Outcome, exec::ExecError> {
    exec::start_and_wait_unless(cmd, timeout, Sink::Merged(log), stop)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// What `sweep render --out` prints is the sweep's own build command: arch, include paths,
    /// output, source, the spec's flags then a `compiler_flags` axis's words, quoted for a shell.
    #[test]
    fn a_point_built_by_hand_gets_the_sweeps_build_command() {
        let spec = Spec::parse(
            Path::new("t.toml"),
            "bench = \"b\"\ncompiler = \"nvcc\"\nflags = [\"-O3\", \"-Xptxas -v\"]\n[[axis]]\nname = \"opt\"\nvalues = [\"-DA=1 -DB\"]\ncompiler_flags = true\n[[metric]]\npattern = \"mflops\"\n",
        )
        .unwrap();
        let point = &crate::points::expand(&spec).unwrap()[0];
        let bench = Bench {
            name: "b".into(),
            dir: PathBuf::from("/c/b"),
            source: PathBuf::from("/c/b/b.cu"),
            templates: vec![],
            common: Some(PathBuf::from("/c/common")),
        };
        let cmd = by_hand(&spec, &bench, point, Path::new("hand"));
        assert_eq!(
            cmd.line(),
            "nvcc -arch=sm_90 -Ihand -I/c/common -o hand/bench /c/b/b.cu -O3 '-Xptxas -v' -DA=1 -DB"
        );
        let mut host = spec.clone();
        host.compiler = "cc".into();
        let cmd = by_hand(&host, &bench, point, Path::new("hand"));
        assert!(cmd.line().starts_with("cc -Ihand "), "{}", cmd.line());
    }

    #[test]
    fn a_missing_compiler_gets_a_hint_for_what_it_is() {
        let nvcc = CompileError::NoCompiler {
            compiler: "nvcc".into(),
        };
        assert!(nvcc.to_string().contains("put nvcc on PATH"), "{nvcc}");
        let cc = CompileError::NoCompiler {
            compiler: "clang-99".into(),
        };
        assert_eq!(
            cc.to_string(),
            "compiler `clang-99` not found (hint: install it or put it on PATH, or set `compiler` in the spec)"
        );
    }
}
