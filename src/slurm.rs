//! `sweep slurm`: a Slurm job-array script for a sharded sweep, one array task per shard.
//!
//! Task `i` runs `sweep run SPEC --shard i/N` into its own run folder; running a task again
//! resumes the unfinished run of its shard. The script is written beside the runs
//! (`<output>/<sweep>/slurm-array-<N>.sh`) and submitted with `sbatch` through [`crate::exec`].

use crate::exec::{self, Cmd};
use crate::points::{self, Shard, Split};
use crate::spec::Spec;
use crate::store::{self, Dialect, Manifest};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `sweep slurm --help`, after the options.
pub const HELP: &str = "\
Task i runs `sweep run SPEC --shard i/N --output OUT --cache CACHE -q` (absolute paths) into its
own run folder; a task that runs again resumes its shard's unfinished run. --submit submits only
the shards without a finished run of this spec (sbatch --array=...).

Builds run on the compute nodes, or ahead of time on a login node with nvcc:
  sweep build SPEC --cache /shared/cache
  sweep slurm SPEC --shards 8 --gres gpu:1 --cache /shared/cache --submit
When every task has ended: sweep merge OUT/<sweep>";

/// One job array: what every task runs and what Slurm is asked for.
#[derive(Clone, Debug)]
pub struct Job {
    /// The sweep's name (`output/<sweep>/`).
    pub sweep: String,
    pub spec_hash: String,
    /// Absolute, as every path of the job: the tasks run elsewhere, in another working folder.
    pub spec: PathBuf,
    /// The tasks' working folder (`#SBATCH --chdir`).
    pub workdir: PathBuf,
    /// What `sweep slurm` was asked, its paths made absolute.
    pub request: Request,
    /// Points in each shard: with `--split series` a shard can get none.
    pub shard_sizes: Vec<usize>,
}

#[derive(Debug, thiserror::Error)]
pub enum SlurmError {
    #[error("`--shards {0}` is out of range (hint: 1 to 10000 shards, one array task each)")]
    Shards(usize),
    #[error("`--{option} {value}` cannot go into an #SBATCH line: {reason}")]
    Option {
        option: &'static str,
        value: String,
        reason: &'static str,
    },
    #[error(transparent)]
    Points(#[from] points::PointsError),
    /// A path that cannot be made absolute.
    #[error("cannot use `{path}` in the job: {source}")]
    Path {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot use `{path}` in the job: #SBATCH lines cannot hold a path with spaces or quotes (hint: --output elsewhere, or run from another folder)")]
    PathInScript { path: PathBuf },
    #[error("cannot use {path:?} in the job: the script names it on a comment line, where a line break would start a command (hint: rename it without the line break)")]
    PathWithLineBreak { path: PathBuf },
    #[error(
        "cannot write `{path}`: {source}{}",
        crate::store::space::write_hint(source)
    )]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "`sbatch` not found (hint: run on a Slurm login node, or submit the script there by hand)"
    )]
    NoSbatch,
    #[error(transparent)]
    Exec(exec::ExecError),
    #[error("`{line}` failed with {how}: {stderr}")]
    Submit {
        line: String,
        how: String,
        stderr: String,
    },
    #[error("`{line}` printed no job id: `{stdout}`")]
    NoJobId { line: String, stdout: String },
}

/// What `sweep slurm` was asked.
#[derive(Clone, Debug)]
pub struct Request {
    pub shards: usize,
    pub split: Split,
    pub binary: PathBuf,
    pub output: PathBuf,
    pub cache: PathBuf,
    /// `-j` of each task, when given.
    pub jobs: Option<usize>,
    /// `--csv-dialect` of every task, so that the shards' CSVs merge.
    pub dialect: Dialect,
    pub partition: Option<String>,
    pub gres: Option<String>,
    pub time: Option<String>,
    pub cpus_per_task: Option<usize>,
}

impl Job {
    /// Checks the request and makes every path absolute.
    pub fn new(spec: &Spec, mut req: Request) -> Result<Job, SlurmError> {
        if req.shards == 0 || req.shards > 10_000 {
            return Err(SlurmError::Shards(req.shards));
        }
        let path_err = |p: &Path, source: std::io::Error| SlurmError::Path {
            path: p.to_path_buf(),
            source,
        };
        let here = Path::new(".");
        let workdir = here.canonicalize().map_err(|e| path_err(here, e))?;
        for p in [&mut req.binary, &mut req.output, &mut req.cache] {
            if !p.is_absolute() {
                *p = workdir.join(&*p);
            }
        }
        let spec_path = spec
            .path
            .canonicalize()
            .map_err(|e| path_err(&spec.path, e))?;
        let all = points::expand(spec)?;
        let mut shard_sizes = vec![0; req.shards];
        for owner in points::assign(&all, req.shards, req.split, &points::x_axis(spec)) {
            shard_sizes[owner] += 1;
        }
        let job = Job {
            sweep: spec.name.clone(),
            spec_hash: spec.hash.clone(),
            spec: spec_path,
            workdir,
            request: req,
            shard_sizes,
        };
        job.check()?;
        Ok(job)
    }

    fn check(&self) -> Result<(), SlurmError> {
        let plain = |option: &'static str, value: &Option<String>| match value {
            Some(v)
                if v.is_empty()
                    || v.chars()
                        .any(|c| c.is_whitespace() || c.is_control() || "'\"#\\".contains(c)) =>
            {
                Err(SlurmError::Option {
                    option,
                    value: v.clone(),
                    reason: "it is empty or holds a space, quote, `#` or backslash",
                })
            }
            _ => Ok(()),
        };
        plain("partition", &self.request.partition)?;
        plain("gres", &self.request.gres)?;
        if let Some(t) = &self.request.time {
            let ok = regex::Regex::new(r"^(\d+-)?\d+(:\d+){0,2}$|^(?i:infinite|unlimited)$")
                .map(|r| r.is_match(t))
                .unwrap_or(false);
            if !ok {
                return Err(SlurmError::Option {
                    option: "time",
                    value: t.clone(),
                    reason: "not a Slurm time (hint: HH:MM:SS, MM, or D-HH:MM:SS)",
                });
            }
        }
        // The script's comments name these unquoted: a line break in one would make the rest of
        // the path a command that every task runs.
        for p in [&self.spec, &self.request.cache, &self.request.binary] {
            if p.to_string_lossy().chars().any(|c| c == '\n' || c == '\r') {
                return Err(SlurmError::PathWithLineBreak { path: p.clone() });
            }
        }
        for p in [&self.request.output, &self.workdir] {
            if p.to_string_lossy()
                .chars()
                .any(|c| c.is_whitespace() || c == '"' || c == '\'')
            {
                return Err(SlurmError::PathInScript { path: p.clone() });
            }
        }
        Ok(())
    }

    /// `<output>/<sweep>/`: the runs, the script and the task logs.
    pub fn sweep_dir(&self) -> PathBuf {
        self.request.output.join(&self.sweep)
    }

    pub fn script_path(&self) -> PathBuf {
        self.sweep_dir()
            .join(format!("slurm-array-{}.sh", self.request.shards))
    }

    /// The log of each task: `%A` is the array's job id, `%a` the task id.
    pub fn log_path(&self, ext: &str) -> PathBuf {
        self.sweep_dir().join(format!("slurm-%A_%a.{ext}"))
    }

    /// What every task runs, less its `--shard` (which the shell fills in from the task id).
    pub fn task_command(&self) -> Cmd {
        let path = |p: &Path| p.display().to_string();
        let mut cmd = Cmd::new(path(&self.request.binary))
            .arg("run")
            .arg(path(&self.spec))
            .args([
                "--output".to_string(),
                path(&self.request.output),
                "--cache".into(),
                path(&self.request.cache),
                "--split".into(),
                self.request.split.as_str().to_string(),
                "--csv-dialect".into(),
                self.request.dialect.name().into(),
            ]);
        if let Some(j) = self.request.jobs.or(self.request.cpus_per_task) {
            cmd = cmd.args(["-j".to_string(), j.to_string()]);
        }
        cmd.arg("-q")
    }

    /// The job-array script.
    pub fn script(&self) -> String {
        let mut s = String::from("#!/bin/bash\n");
        let mut sbatch = |k: &str, v: &str| s.push_str(&format!("#SBATCH --{k}={v}\n"));
        sbatch("job-name", &format!("sweep-{}", self.sweep));
        sbatch("array", &format!("0-{}", self.request.shards - 1));
        sbatch("output", &self.log_path("out").display().to_string());
        sbatch("error", &self.log_path("err").display().to_string());
        sbatch("chdir", &self.workdir.display().to_string());
        if let Some(p) = &self.request.partition {
            sbatch("partition", p);
        }
        if let Some(g) = &self.request.gres {
            sbatch("gres", g);
        }
        if let Some(t) = &self.request.time {
            sbatch("time", t);
        }
        if let Some(c) = self.request.cpus_per_task {
            sbatch("cpus-per-task", &c.to_string());
        }
        let n = self.request.shards;
        let sweep_dir = self.sweep_dir();
        s.push_str(&format!(
            "#
# Written by `sweep slurm` for sweep `{sweep}` (spec {spec}, sha256 {hash:.12}).
# Array task i runs shard i/{n} into its own run folder {dir}/<stamp>-shard-i-of-{n}/.
# A task that runs again resumes its shard's unfinished run; a shard that already finished
# starts a new run, so resubmit with `sweep slurm ... --submit`, which skips finished shards.
# The builds run here on the compute node, or ahead of time on a login node with
# `sweep build SPEC --cache {cache}` (the same cache folder as below).
# When every task has ended: sweep merge {dir}
set -euo pipefail
shard=\"${{SLURM_ARRAY_TASK_ID:?not a Slurm array task: submit this script with sbatch}}/{n}\"
echo \"sweep: shard $shard of {sweep} on $(hostname), job ${{SLURM_ARRAY_JOB_ID:-?}}_${{SLURM_ARRAY_TASK_ID}}\"
exec {command} --shard \"$shard\"
",
            sweep = self.sweep,
            spec = self.spec.display(),
            hash = self.spec_hash,
            dir = sweep_dir.display(),
            cache = self.request.cache.display(),
            command = self.task_command().line(),
        ));
        s
    }
}

/// The shards of this spec that already have a finished run under `output/<sweep>/`: shard
/// index -> the latest such run.
pub fn finished_shards(job: &Job) -> BTreeMap<usize, PathBuf> {
    let mut done = BTreeMap::new();
    for dir in store::runs_of(&job.request.output, &job.sweep) {
        let Ok(m) = Manifest::load(&dir) else {
            continue;
        };
        let Some(shard) = m.shard.as_deref().and_then(|s| s.parse::<Shard>().ok()) else {
            continue;
        };
        if shard.count == job.request.shards
            && m.spec_hash == job.spec_hash
            && m.split == Some(job.request.split)
            && m.state == crate::store::RunState::Finished
        {
            done.insert(shard.index, dir);
        }
    }
    done
}

/// What `sweep slurm` wrote, and what is left to submit.
#[derive(Debug)]
pub struct Prepared {
    pub script: PathBuf,
    /// Shards with a finished run of this spec (not submitted again).
    pub finished: BTreeMap<usize, PathBuf>,
    /// Shards to submit: those with points and without a finished run.
    pub todo: Vec<usize>,
    /// Shards that hold no point (nothing to submit).
    pub empty: Vec<usize>,
    /// `sbatch [--array=<todo>] SCRIPT` (`--array` only when some shards are left out).
    pub sbatch: Cmd,
}

impl Prepared {
    /// What to tell the user before submitting: warnings, then plain lines.
    pub fn describe(&self, job: &Job) -> (Vec<String>, Vec<String>) {
        let n = job.request.shards;
        let list = |ids: &[usize]| {
            ids.iter()
                .map(|i| format!("{i}/{n}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut warnings = Vec::new();
        if !self.empty.is_empty() {
            warnings.push(format!(
                "shard {} {} no point: with `--split series` a series never spans two shards (hint: `--split points`, or fewer shards)",
                list(&self.empty),
                if self.empty.len() == 1 { "holds" } else { "hold" }
            ));
        }
        let total: usize = job.shard_sizes.iter().sum();
        let mut lines = vec![format!(
            "wrote {} ({}, one per shard of the {} of `{}`)",
            self.script.display(),
            crate::words::plural(n, "array task"),
            crate::words::plural(total, "point"),
            job.sweep
        )];
        if !self.finished.is_empty() {
            let done: Vec<usize> = self.finished.keys().copied().collect();
            lines.push(format!(
                "shard {} already finished (runs in {}); not submitted again",
                list(&done),
                job.sweep_dir().display()
            ));
        }
        if self.todo.is_empty() {
            lines.push(format!(
                "nothing to submit: every shard with points has a finished run (to run them all again: sbatch {})",
                self.script.display()
            ));
        } else {
            lines.push(format!("submit: {}", self.sbatch.line()));
        }
        lines.push(format!(
            "merge when every task has ended: sweep merge {}",
            job.sweep_dir().display()
        ));
        (warnings, lines)
    }
}

/// Writes the script (creating `<output>/<sweep>/`, where Slurm writes the task logs) and works
/// out which shards still need to run.
pub fn prepare(job: &Job) -> Result<Prepared, SlurmError> {
    let dir = job.sweep_dir();
    let script = job.script_path();
    let write_err = |path: &Path, source: std::io::Error| SlurmError::Write {
        path: path.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(&dir).map_err(|e| write_err(&dir, e))?;
    std::fs::write(&script, job.script()).map_err(|e| write_err(&script, e))?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| write_err(&script, e))?;
    let finished = finished_shards(job);
    let empty: Vec<usize> = (0..job.request.shards)
        .filter(|&i| job.shard_sizes[i] == 0)
        .collect();
    let todo: Vec<usize> = (0..job.request.shards)
        .filter(|&i| !finished.contains_key(&i) && job.shard_sizes[i] > 0)
        .collect();
    let mut sbatch = Cmd::new("sbatch");
    if todo.len() < job.request.shards && !todo.is_empty() {
        sbatch = sbatch.arg(format!("--array={}", ranges(&todo)));
    }
    let sbatch = sbatch.arg(script.display().to_string());
    Ok(Prepared {
        script,
        finished,
        todo,
        empty,
        sbatch,
    })
}

/// `[0, 1, 2, 5, 7, 8]` -> `0-2,5,7-8` (Slurm's array syntax).
pub fn ranges(ids: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let mut j = i;
        while j + 1 < ids.len() && ids[j + 1] == ids[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            ids[i].to_string()
        } else {
            format!("{}-{}", ids[i], ids[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

/// Runs `sbatch` (with `--parsable`) and returns the job id it printed.
pub fn submit(sbatch: &Cmd) -> Result<String, SlurmError> {
    let mut sbatch = sbatch.clone();
    sbatch.args.insert(0, "--parsable".into());
    let sbatch = &sbatch;
    let out = exec::capture(sbatch).map_err(|e| match e {
        exec::ExecError::NotFound { .. } => SlurmError::NoSbatch,
        e => SlurmError::Exec(e),
    })?;
    if out.code != Some(0) {
        let how = out
            .code
            .map(|c| format!("exit code {c}"))
            .unwrap_or_else(|| "a signal".into());
        return Err(SlurmError::Submit {
            line: sbatch.line(),
            how,
            stderr: one_line(&out.stderr),
        });
    }
    // `--parsable` prints `<job id>` or `<job id>;<cluster>`.
    let id = out
        .stdout
        .trim()
        .split(';')
        .next()
        .unwrap_or("")
        .to_string();
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_digit()) {
        return Err(SlurmError::NoJobId {
            line: sbatch.line(),
            stdout: one_line(&out.stdout),
        });
    }
    Ok(id)
}

fn one_line(s: &str) -> String {
    let lines: Vec<&str> = s.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    lines.join(" / ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job() -> Job {
        Job {
            sweep: "saw".into(),
            spec_hash: "0123456789abcdef".into(),
            spec: "/p/sweeps/saw.toml".into(),
            workdir: "/p".into(),
            request: Request {
                shards: 4,
                split: Split::Series,
                binary: "/opt/sweep/bin/sweep".into(),
                output: "/scratch/out".into(),
                cache: "/shared/cache".into(),
                jobs: None,
                dialect: Dialect::Semicolon,
                partition: Some("gpu".into()),
                gres: Some("gpu:1".into()),
                time: Some("01:30:00".into()),
                cpus_per_task: Some(8),
            },
            shard_sizes: vec![16; 4],
        }
    }

    #[test]
    fn script_runs_one_shard_per_array_task() {
        let s = job().script();
        let directives: Vec<&str> = s.lines().filter(|l| l.starts_with("#SBATCH")).collect();
        assert_eq!(
            directives,
            [
                "#SBATCH --job-name=sweep-saw",
                "#SBATCH --array=0-3",
                "#SBATCH --output=/scratch/out/saw/slurm-%A_%a.out",
                "#SBATCH --error=/scratch/out/saw/slurm-%A_%a.err",
                "#SBATCH --chdir=/p",
                "#SBATCH --partition=gpu",
                "#SBATCH --gres=gpu:1",
                "#SBATCH --time=01:30:00",
                "#SBATCH --cpus-per-task=8",
            ]
        );
        // Slurm reads #SBATCH lines only before the first command.
        let first_command = s.lines().position(|l| !l.starts_with('#')).unwrap();
        assert!(s
            .lines()
            .skip(first_command)
            .all(|l| !l.starts_with("#SBATCH")));
        assert!(s.contains("shard=\"${SLURM_ARRAY_TASK_ID:?"), "{s}");
        assert!(s.ends_with(
            "exec /opt/sweep/bin/sweep run /p/sweeps/saw.toml --output /scratch/out --cache /shared/cache --split series --csv-dialect semicolon -j 8 -q --shard \"$shard\"\n"
        ));
    }

    #[test]
    fn options_that_would_break_the_script_are_refused() {
        type Edit = fn(&mut Job);
        let cases: Vec<(Edit, &str)> = vec![
            (
                |j| j.request.time = Some("90 min".into()),
                "`--time 90 min` cannot go into an #SBATCH line: not a Slurm time",
            ),
            (
                |j| j.request.partition = Some("gpu\n#SBATCH --x".into()),
                "`--partition gpu\n#SBATCH --x` cannot go",
            ),
            (
                |j| j.request.gres = Some(String::new()),
                "`--gres ` cannot go into an #SBATCH line: it is empty",
            ),
            (
                |j| j.request.output = "/a b".into(),
                "cannot use `/a b` in the job: #SBATCH lines cannot hold a path with spaces",
            ),
            (
                |j| j.spec = "/p/sweeps/x\ntouch HACKED\n/saw.toml".into(),
                "cannot use \"/p/sweeps/x\\ntouch HACKED\\n/saw.toml\" in the job: the script names it on a comment line, where a line break would start a command (hint: rename it without the line break)",
            ),
            (
                |j| j.request.cache = "/c\rache".into(),
                "cannot use \"/c\\rache\" in the job",
            ),
        ];
        for (edit, want) in cases {
            let mut j = job();
            edit(&mut j);
            let err = j.check().unwrap_err().to_string();
            assert!(err.starts_with(want), "got {err:?}, want {want:?}");
        }
        for t in ["15", "1-00:00:00", "2:30", "UNLIMITED", "12:00:00"] {
            let mut j = job();
            j.request.time = Some(t.into());
            assert!(j.check().is_ok(), "{t}");
        }
    }

    #[test]
    fn array_ranges_use_slurm_syntax() {
        assert_eq!(ranges(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
        assert_eq!(ranges(&[3]), "3");
    }
}
