//! Stage `render`: finds a bench folder and renders its Tera templates for one point.
//!
//! `fill.rs` is Tera itself, with caps on what a template renders and on `range`; `bounded.rs`
//! runs it in a worker process with a memory and a time limit (what the `sweep` binary does).

mod bounded;
mod fill;

pub use bounded::{isolate, serve, CPU_LIMIT, MEMORY_LIMIT, WALL_LIMIT, WORKER_COMMAND};
pub use fill::{MAX_RANGE, MAX_RENDERED};

use crate::points::Point;
use crate::spec::Spec;
use fill::{Refusal, Var};
use std::path::{Path, PathBuf};

/// A bench: `cuda/<name>/` with one program and its `*.tera` templates.
#[derive(Clone, Debug)]
pub struct Bench {
    pub name: String,
    pub dir: PathBuf,
    /// The program: `<name>.cu`, `.c` or `.cpp`.
    pub source: PathBuf,
    pub templates: Vec<PathBuf>,
    /// `cuda/common/` beside the bench, when there is one (on the include path).
    pub common: Option<PathBuf>,
}

#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("bench `{bench}` not found: no folder `cuda/{bench}` beside or above `{spec}` (hint: `sweep list` shows the benches)")]
    NoBench { bench: String, spec: String },
    #[error("bench `{bench}` has no program: expected `{dir}/{bench}.cu` (or .c / .cpp)")]
    NoSource { bench: String, dir: String },
    #[error("cannot read `{path}`: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("template `{template}` line {line}: variable `{variable}` is not defined for point {point} (hint: add an axis or a [vars] entry named `{variable}`)")]
    Undefined {
        template: String,
        line: usize,
        variable: String,
        point: String,
    },
    #[error("`{link}` is a link to `{target}` that cannot be followed: {cause} (hint: point it at a file that exists, or replace it with the file)")]
    BadLink {
        link: String,
        target: String,
        #[source]
        cause: LinkError,
    },
    /// Tera refused the template: its innermost reason is shown, on one line.
    #[error("template `{template}`: {}", innermost(source))]
    Template {
        template: String,
        #[source]
        source: tera::Error,
    },
    #[error("template `{template}` needs more than {limit} of memory for point {point}, the limit of rendering: it was stopped (hint: a header holds constants; does a loop grow a string or a list without end, e.g. `{{% set_global s = s ~ s %}}`?)")]
    TooMuchMemory {
        template: String,
        point: String,
        /// The limit, in words (`1 GiB`).
        limit: String,
    },
    #[error("template `{template}` renders for more than {limit} for point {point}, the limit of rendering: it was stopped (hint: a header holds constants; does a loop run away, e.g. nested `range`s?)")]
    TooSlow {
        template: String,
        point: String,
        /// The limit, in words (`10 s of CPU time`).
        limit: String,
    },
    /// The worker that renders died of something else than the limits (or answered garbage).
    #[error("template `{template}` could not be rendered for point {point}: the renderer {how} (hint: `sweep render SPEC --point N` renders one point alone)")]
    Worker {
        template: String,
        point: String,
        how: String,
    },
    #[error("cannot start the renderer `{program} render-worker`: {source} (hint: templates are rendered in a process of their own, with limits)")]
    NoWorker {
        program: String,
        #[source]
        source: std::io::Error,
    },
    #[error("template `{template}` in `{dir}` would write a header named `{header}`, which is no file name (hint: name it `<header>.tera`, e.g. `params.h.tera`)")]
    BadHeaderName {
        template: String,
        dir: String,
        header: String,
    },
    /// A header named as a file sweep writes beside it in `points/<id>/` (`stdout.txt`,
    /// `run.cmd`, ...): one would replace the other.
    #[error("template `{template}` in `{dir}` would write a header named `{header}`, a file sweep writes itself in each point's folder (hint: rename the template; taken: {taken})")]
    HeaderTaken {
        template: String,
        dir: String,
        header: String,
        taken: String,
    },
}

/// The files (and the `control-<n>` folders) that sweep itself writes in a point's folder,
/// beside the rendered headers. Written out here, as rendering comes before the stages that
/// write them; a test holds the list to the names their writers use (the cache's log, run's stdout ...).
const POINT_FILES: [&str; 11] = [
    "build.log",
    "run.cmd",
    "stdout.txt",
    "stderr.txt",
    "ncu.csv",
    "profile.cmd",
    "profile.stdout.txt",
    "profile.stderr.txt",
    "power.cmd",
    "power.stdout.txt",
    "power.stderr.txt",
];

impl RenderError {
    /// Whether the environment, not the input, is at fault: no process to render in, or no
    /// descriptor or memory to read the bench's files with.
    pub fn environment(&self) -> bool {
        match self {
            RenderError::NoWorker { .. } => true,
            RenderError::Io { source, .. }
            | RenderError::BadLink {
                cause: LinkError::Io(source),
                ..
            } => matches!(
                source.raw_os_error(),
                Some(libc::EMFILE | libc::ENFILE | libc::ENOMEM)
            ),
            _ => false,
        }
    }
}

/// Why a link among a bench's files cannot be followed.
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    /// It points nowhere, or cannot be read.
    #[error(transparent)]
    Io(std::io::Error),
    #[error("it loops")]
    Loop,
}

/// The last error of `e`'s chain of sources, on one line (Tera's own message only says that
/// rendering failed; its reason is at the end of the chain).
fn innermost(e: &(dyn std::error::Error + 'static)) -> String {
    let mut last = e;
    while let Some(s) = last.source() {
        last = s;
    }
    last.to_string().replace('\n', " ")
}

/// Whether a file name is an editor's, not the user's: Emacs's lock (`.#x.cu`, a link to
/// nowhere) and auto-save (`#x.cu#`), a backup (`x.cu~`), Vim's swap (`.x.cu.swp`, `.swo`, ...).
/// The build cache's key, the resume's fingerprint and the templates leave them out.
pub fn editor_file(name: &str) -> bool {
    let vim_swap = name.starts_with('.')
        && name
            .rsplit_once('.')
            .is_some_and(|(_, ext)| ext.len() == 3 && ext.starts_with("sw"));
    name.starts_with(".#")
        || (name.len() > 1 && name.starts_with('#') && name.ends_with('#'))
        || name.ends_with('~')
        || vim_swap
}

/// The header a template renders into: its file name less `.tera`.
fn header_name(template: &str) -> &str {
    template.trim_end_matches(".tera")
}

const SOURCE_EXTS: [&str; 3] = ["cu", "c", "cpp"];

impl Bench {
    /// `bench = "name"` is looked up as `cuda/name` in the spec's folder and each folder above it;
    /// a value with a `/` is a path relative to the spec's folder.
    pub fn locate(spec: &Spec) -> Result<Bench, RenderError> {
        let spec_dir = spec
            .path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        let spec_dir = if spec_dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            spec_dir
        };
        let dir = if spec.bench.contains('/') {
            Some(spec_dir.join(&spec.bench)).filter(|d| d.is_dir())
        } else {
            spec_dir.canonicalize().ok().and_then(|abs| {
                abs.ancestors()
                    .map(|a| a.join("cuda").join(&spec.bench))
                    .find(|d| d.is_dir())
            })
        };
        let dir = dir.ok_or_else(|| RenderError::NoBench {
            bench: spec.bench.clone(),
            spec: spec.path.display().to_string(),
        })?;
        Bench::open(&dir)
    }

    pub fn open(dir: &Path) -> Result<Bench, RenderError> {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let source = SOURCE_EXTS
            .iter()
            .map(|ext| dir.join(format!("{name}.{ext}")))
            .find(|p| p.is_file())
            .ok_or_else(|| RenderError::NoSource {
                bench: name.clone(),
                dir: dir.display().to_string(),
            })?;
        let mut templates: Vec<PathBuf> = walkdir::WalkDir::new(dir)
            .max_depth(1)
            .into_iter()
            .filter_map(Result::ok)
            .map(|e| e.into_path())
            // Regular files only (through links): a FIFO named `x.tera` would block the read.
            .filter(|p| p.extension().is_some_and(|e| e == "tera") && p.is_file())
            .filter(|p| {
                !p.file_name()
                    .is_some_and(|n| editor_file(&n.to_string_lossy()))
            })
            .collect();
        templates.sort();
        // `...tera` would render into `points/<id>/..`: every point would fail on it.
        for t in &templates {
            let template = t
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default();
            let header = header_name(&template);
            if matches!(header, "" | "." | "..") {
                return Err(RenderError::BadHeaderName {
                    template: template.clone(),
                    dir: dir.display().to_string(),
                    header: header.to_string(),
                });
            }
            // `stdout.txt.tera` rendered a header that the program's output then replaced (the
            // point's headers no longer what it was built from); `control-1.tera` stopped the
            // run at its first control re-run.
            if POINT_FILES.contains(&header) || header.starts_with("control-") {
                return Err(RenderError::HeaderTaken {
                    template: template.clone(),
                    dir: dir.display().to_string(),
                    header: header.to_string(),
                    taken: format!("{}, control-<n>", POINT_FILES.join(", ")),
                });
            }
        }
        let common = dir
            .parent()
            .map(|p| p.join("common"))
            .filter(|c| c.is_dir());
        let bench = Bench {
            name,
            dir: dir.to_path_buf(),
            source,
            templates,
            common,
        };
        // A link that cannot be followed is refused here, once, not at every point's build.
        bench.input_files()?;
        Ok(bench)
    }

    /// Every file that goes into the binary but the rendered headers: the bench's own files
    /// (templates included) and `cuda/common/`, sorted by path. A symbolic link counts as the
    /// file it points to (the cache key hashes that file's content, so editing the target
    /// rebuilds); a link that points nowhere, or a loop of links, is an error naming it. Only
    /// regular files are listed: a FIFO or socket is no input (reading one would block).
    ///
    /// An editor's files are no input and are skipped ([`editor_file`]): Emacs's lock, a link to
    /// nowhere that exists while a file has unsaved changes, would stop every run.
    pub fn input_files(&self) -> Result<Vec<PathBuf>, RenderError> {
        let mut files = Vec::new();
        for d in [Some(&self.dir), self.common.as_ref()]
            .into_iter()
            .flatten()
        {
            let walk = walkdir::WalkDir::new(d)
                .follow_links(true)
                .into_iter()
                .filter_entry(|e| e.depth() == 0 || !editor_file(&e.file_name().to_string_lossy()));
            for e in walk {
                let by_editor = |e: &walkdir::Error| {
                    e.path()
                        .and_then(Path::file_name)
                        .is_some_and(|n| editor_file(&n.to_string_lossy()))
                };
                if e.as_ref().is_err_and(by_editor) {
                    continue;
                }
                let e = e.map_err(|e| {
                    let link = e.path().map(Path::to_path_buf).unwrap_or_else(|| d.clone());
                    let target = std::fs::read_link(&link)
                        .map(|t| t.display().to_string())
                        .unwrap_or_default();
                    RenderError::BadLink {
                        link: link.display().to_string(),
                        target,
                        cause: e.into_io_error().map_or(LinkError::Loop, LinkError::Io),
                    }
                })?;
                if e.file_type().is_file() {
                    files.push(e.into_path());
                }
            }
        }
        files.sort();
        Ok(files)
    }

    /// Every input file ([`Self::input_files`]) with its name from the bench's parent folder
    /// (`hostsaw/hostsaw.c`, `common/sweep.cuh`): what the build cache's key and the fingerprint hash.
    pub fn named_inputs(&self) -> Result<Vec<(String, PathBuf)>, RenderError> {
        let base = self.dir.parent().unwrap_or(&self.dir);
        Ok(self
            .input_files()?
            .into_iter()
            .map(|f| {
                (
                    f.strip_prefix(base)
                        .unwrap_or(&f)
                        .to_string_lossy()
                        .into_owned(),
                    f,
                )
            })
            .collect())
    }

    /// A hash of every input file's path (from the bench's parent) and content: what a resumed
    /// run checks so that its rows all come from one program.
    pub fn fingerprint(&self) -> Result<String, RenderError> {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        for (rel, file) in self.named_inputs()? {
            h.update(rel.as_bytes());
            h.update([0]);
            // A file that cannot be read now is hashed by its name alone; the build says why.
            // Out of descriptors or memory, no file can be told from a changed one: an error.
            match std::fs::read(&file) {
                Ok(bytes) => h.update(bytes),
                Err(e)
                    if matches!(
                        e.raw_os_error(),
                        Some(libc::EMFILE | libc::ENFILE | libc::ENOMEM)
                    ) =>
                {
                    return Err(RenderError::Io {
                        path: file.display().to_string(),
                        source: e,
                    })
                }
                Err(_) => {}
            }
            h.update([0]);
        }
        Ok(crate::spec::hex(&h.finalize()[..16]))
    }
}

/// One rendered header: its file name and text.
#[derive(Clone, Debug, PartialEq)]
pub struct Rendered {
    pub file: String,
    pub text: String,
}

/// Renders every template of `bench` for `point`: in the worker with limits once [`isolate`] was
/// called (as the `sweep` binary does), else in this process.
pub fn render(bench: &Bench, spec: &Spec, point: &Point) -> Result<Vec<Rendered>, RenderError> {
    // In the order Tera sees them: a point's value hides a [vars] constant of the same name.
    let mut vars: Vec<(String, Var)> = Vec::new();
    vars.extend(spec.vars.iter().map(|(n, v)| (n.clone(), Var::from(v))));
    vars.extend(point.values.iter().map(|(n, v)| (n.clone(), Var::from(v))));
    vars.push(("point_id".into(), Var::Str(point.id.clone())));
    vars.push(("bench".into(), Var::Str(bench.name.clone())));
    let label = point.label();

    let mut out = Vec::new();
    for path in &bench.templates {
        let template = path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text = std::fs::read_to_string(path).map_err(|source| RenderError::Io {
            path: path.display().to_string(),
            source,
        })?;
        let rendered = bounded::fill(&template, &text, &vars, &label)?;
        out.push(Rendered {
            file: header_name(&template).to_string(),
            text: rendered,
        });
    }
    Ok(out)
}

/// Tera's refusal of `template` (its `text`) at the point labelled `point`, as the error to show:
/// a variable it lacks is named with its line.
fn refused(template: &str, text: &str, point: &str, r: Refusal) -> RenderError {
    let undefined = regex::Regex::new(r"Variable `([A-Za-z_][A-Za-z0-9_.]*)` not found")
        .ok()
        .and_then(|re| re.captures(&r.chain).map(|c| c[1].to_string()));
    match undefined {
        Some(variable) => {
            let root = variable.split('.').next().unwrap_or(&variable).to_string();
            let word =
                regex::Regex::new(&format!(r"\{{[{{%][^}}]*\b{}\b", regex::escape(&root))).ok();
            let line = text
                .lines()
                .position(|l| word.as_ref().is_some_and(|w| w.is_match(l)))
                .map(|i| i + 1)
                .unwrap_or(1);
            RenderError::Undefined {
                template: template.to_string(),
                line,
                variable: root,
                point: point.to_string(),
            }
        }
        None => RenderError::Template {
            template: template.to_string(),
            source: tera::Error::msg(r.innermost),
        },
    }
}

/// Writes the rendered headers into `dir`.
pub fn write(rendered: &[Rendered], dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for r in rendered {
        std::fs::write(dir.join(&r.file), &r.text)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_files_a_header_may_not_take_are_the_ones_sweep_writes() {
        use crate::profile::{metric_power, ncu};
        let written = [
            crate::cache::LOG,
            "run.cmd",
            crate::run::STDOUT,
            crate::run::STDERR,
            ncu::CSV,
            ncu::CMD,
            ncu::STDOUT,
            ncu::STDERR,
            metric_power::CMD,
            metric_power::STDOUT,
            metric_power::STDERR,
        ];
        assert_eq!(POINT_FILES, written);
    }
    use super::*;

    /// Found in review 5 of issue 38: a template whose loops render gigabytes, a `range` of 10^8
    /// values or a `step_by=0` (Tera's own loops for ever) took every byte of memory and
    /// aborted sweep (SIGABRT). Each is refused in one line naming the template.
    #[test]
    fn a_template_that_runs_away_is_refused_not_rendered_until_memory_runs_out() {
        for (template, want) in [
            (
                "{% for i in range(end=100000) %}{% for j in range(end=1000) %}xx{% endfor %}{% endfor %}",
                "template `params.h.tera`: it renders more than 16 MiB for one point (hint: ",
            ),
            (
                "{% for i in range(end=100000000) %}{% endfor %}",
                "template `params.h.tera`: Function `range` would give 100000000 values, more than 1048576",
            ),
            (
                "{% for i in range(end=5, step_by=0) %}{% endfor %}",
                "template `params.h.tera`: Function `range` was called with `step_by=0`",
            ),
        ] {
            let (_tmp, spec, bench) = setup(template);
            let pts = crate::points::expand(&spec).unwrap();
            let err = render(&bench, &spec, &pts[0]).unwrap_err().to_string();
            assert!(err.starts_with(want), "{template}: {err}");
        }
        let (_tmp, spec, bench) = setup(
            "{% for i in range(start=1, end=10, step_by=3) %}{{ i }},{% endfor %}{% for i in range(end=3) %}{{ i }}{% endfor %}",
        );
        let pts = crate::points::expand(&spec).unwrap();
        assert_eq!(render(&bench, &spec, &pts[0]).unwrap()[0].text, "1,4,7,012");
    }

    fn setup(template: &str) -> (tempfile::TempDir, Spec, Bench) {
        let tmp = tempfile::tempdir().unwrap();
        let bench = tmp.path().join("cuda/b");
        std::fs::create_dir_all(&bench).unwrap();
        std::fs::create_dir_all(tmp.path().join("sweeps")).unwrap();
        std::fs::write(bench.join("b.c"), "int main(){return 0;}").unwrap();
        std::fs::write(bench.join("params.h.tera"), template).unwrap();
        let spec_path = tmp.path().join("sweeps/s.toml");
        let text = "bench = \"b\"\ncompiler = \"cc\"\n[vars]\niters = 100\n[[axis]]\nname=\"threads\"\nrange=[1,2]\n[[axis]]\nname=\"v\"\nvalues=[\"naive\"]\n[[metric]]\npattern=\"mflops\"\n";
        std::fs::write(&spec_path, text).unwrap();
        let spec = Spec::load(&spec_path).unwrap();
        let bench = Bench::locate(&spec).unwrap();
        (tmp, spec, bench)
    }

    #[test]
    fn renders_axes_vars_and_id() {
        let (_tmp, spec, bench) = setup(
            "#define THREADS {{ threads }}\n#define ITERS {{ iters }}\n#define VARIANT_{{ v | upper }} 1\n// {{ point_id }}\n",
        );
        let pts = crate::points::expand(&spec).unwrap();
        let r = render(&bench, &spec, &pts[1]).unwrap();
        assert_eq!(r[0].file, "params.h");
        assert_eq!(
            r[0].text,
            format!(
                "#define THREADS 2\n#define ITERS 100\n#define VARIANT_NAIVE 1\n// {}\n",
                pts[1].id
            )
        );
    }

    #[test]
    fn undefined_variable_names_template_line_and_variable() {
        let (_tmp, spec, bench) = setup("#define A {{ threads }}\n\n#define B {{ blocks }}\n");
        let pts = crate::points::expand(&spec).unwrap();
        let err = render(&bench, &spec, &pts[0]).unwrap_err().to_string();
        assert_eq!(
            err,
            "template `params.h.tera` line 3: variable `blocks` is not defined for point threads=1 v=naive (hint: add an axis or a [vars] entry named `blocks`)"
        );
    }

    #[test]
    fn a_template_that_names_no_header_file_is_refused_up_front() {
        let (tmp, spec, _) = setup("#define A 1\n");
        let dir = tmp.path().join("cuda/b");
        for (template, header) in [("...tera", ".."), ("..tera", "."), ("x.tera", "x")] {
            std::fs::write(dir.join(template), "").unwrap();
            let got = Bench::locate(&spec).map(|_| ()).map_err(|e| e.to_string());
            std::fs::remove_file(dir.join(template)).unwrap();
            if header == "x" {
                assert_eq!(got, Ok(()));
                continue;
            }
            assert_eq!(
                got,
                Err(format!("template `{template}` in `{}` would write a header named `{header}`, which is no file name (hint: name it `<header>.tera`, e.g. `params.h.tera`)", dir.display()))
            );
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_linked_file_enters_the_cache_key_by_what_it_points_to() {
        let (tmp, spec, bench) = setup("#define A 1\n");
        let shared = tmp.path().join("shared");
        std::fs::create_dir_all(&shared).unwrap();
        std::fs::write(shared.join("value.h"), "#define VALUE 1\n").unwrap();
        std::os::unix::fs::symlink(shared.join("value.h"), bench.dir.join("value.h")).unwrap();
        std::os::unix::fs::symlink(&shared, bench.dir.join("inc")).unwrap();
        let tc = crate::compile::Toolchain {
            compiler: "cc".into(),
            version: "1".into(),
            arch: None,
            arch_from: "default".into(),
        };
        let point = &crate::points::expand(&spec).unwrap()[0];
        let rendered = render(&bench, &spec, point).unwrap();
        let key = || crate::cache::Cache::key(&tc, &bench, &rendered, &[]).unwrap();
        let before = key();
        let files = bench.input_files().unwrap();
        assert!(files.contains(&bench.dir.join("value.h")), "{files:?}");
        assert!(
            files.contains(&bench.dir.join("inc/value.h")),
            "a linked folder too"
        );
        std::fs::write(shared.join("value.h"), "#define VALUE 2\n").unwrap();
        assert_ne!(key(), before, "the target changed: another binary");

        // A link to nothing is refused in one line naming it.
        std::os::unix::fs::symlink(tmp.path().join("gone.h"), bench.dir.join("gone.h")).unwrap();
        let err = Bench::locate(&spec).map(|_| ()).unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "`{}` is a link to `{}` that cannot be followed: No such file or directory (os error 2) (hint: point it at a file that exists, or replace it with the file)",
                bench.dir.join("gone.h").display(),
                tmp.path().join("gone.h").display()
            )
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_named_like_a_template_is_no_template_and_no_input() {
        let (_tmp, spec, bench) = setup("#define A 1\n");
        let fifo = bench.dir.join("stuck.h.tera");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let bench = Bench::locate(&spec).unwrap();
        assert_eq!(bench.templates, [bench.dir.join("params.h.tera")]);
        assert!(!bench.input_files().unwrap().contains(&fifo));
        let point = &crate::points::expand(&spec).unwrap()[0];
        assert_eq!(
            render(&bench, &spec, point).unwrap().len(),
            1,
            "rendered without blocking"
        );
    }

    #[test]
    fn an_editors_files_are_told_from_the_users() {
        for (name, editor) in [
            (".#hostsaw.c", true),
            ("#hostsaw.c#", true),
            ("hostsaw.c~", true),
            (".hostsaw.c.swp", true),
            (".params.h.tera.swo", true),
            ("hostsaw.c", false),
            ("params.h.tera", false),
            ("#", false),
            (".clang-format", false),
            ("notes.swp", false),
        ] {
            assert_eq!(editor_file(name), editor, "{name}");
        }
    }

    #[test]
    fn missing_bench_is_named() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("s.toml");
        std::fs::write(
            &p,
            "bench = \"nope\"\n[[axis]]\nname=\"t\"\nrange=[1,2]\n[[metric]]\npattern=\"mflops\"\n",
        )
        .unwrap();
        let spec = Spec::load(&p).unwrap();
        let err = Bench::locate(&spec).unwrap_err().to_string();
        assert!(
            err.starts_with("bench `nope` not found: no folder `cuda/nope`"),
            "{err}"
        );
    }
}
