//! Where a command's output options point: stdout (`-`, `/dev/stdout`), or one of the command's
//! own inputs, which an output would overwrite (`--export-json` over the spec, `analyze --out`
//! over the CSV it reads).

use super::error::{one_line, CliError};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Whether `path` names this process's stdout: `-`, or a file that is what stdout is now
/// (`/dev/stdout`, `/proc/self/fd/1`, the pipe or file the shell connected it to).
pub(crate) fn is_stdout(path: &Path) -> bool {
    if path.as_os_str() == "-" {
        return true;
    }
    let Ok(named) = std::fs::metadata(path) else {
        return false;
    };
    // SAFETY: fstat fills a zeroed stat of descriptor 1; a closed stdout returns -1.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(1, &mut st) } != 0 {
        return false;
    }
    named.dev() == st.st_dev && named.ino() == st.st_ino
}

/// Whether `a` and `b` are one file: the same inode where both exist (a link, `./x` and `x`),
/// else the same absolute path.
pub(crate) fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => {
            let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
            abs(a) == abs(b)
        }
    }
}

/// Refuses an output option (`option`, as the user wrote it) whose files `outputs` include one of
/// the command's `inputs`: it would be overwritten by what is made of it.
pub(crate) fn refuse_own_inputs(
    option: &str,
    outputs: &[PathBuf],
    inputs: &[PathBuf],
    hint: &str,
) -> Result<(), CliError> {
    for out in outputs {
        if let Some(input) = inputs.iter().find(|i| same_file(out, i)) {
            let named = if out == input {
                String::new()
            } else {
                format!(" (`{}`)", one_line(&input.display().to_string()))
            };
            return Err(CliError::Usage(format!(
                "`{option}` would overwrite `{}`{named}, which this command reads (hint: {hint})",
                one_line(&out.display().to_string())
            )));
        }
    }
    Ok(())
}

/// Refuses an `--out` that names something other than a folder (a file, a device): the readers
/// write their files into a folder there, made if missing, and `File exists` (exit 4, as a full
/// disk) would not say what to change. So is one that no folder can be made at (see
/// [`refuse_a_path_under_no_folder`]).
pub(crate) fn refuse_a_file_as_folder(out: Option<&Path>) -> Result<(), CliError> {
    match out {
        Some(out) if out.exists() && !out.is_dir() => Err(CliError::Usage(format!(
            "--out `{}` is a file, not a folder (hint: --out names the folder its files go into, made if missing)",
            one_line(&out.display().to_string())
        ))),
        _ => refuse_a_path_under_no_folder("--out", out),
    }
}

/// Refuses an `--out` inside a run folder (strictly: the run folder itself is where `analyze`
/// writes by default, `plot` its `charts/`), but for the folder the command writes there by
/// default (`allowed`: `export`; `plot --out RUN/charts` wrote `RUN/charts/charts/`, review 21 F4): `analyze RUN --out RUN/passes` wrote analysis.csv among the passes' CSVs,
/// and every resume of the run then refused it; `report --out RUN/points` wrote into the run
/// (review 20a M2).
pub(crate) fn refuse_inside_a_run(out: Option<&Path>, allowed: &[&str]) -> Result<(), CliError> {
    let Some(out) = out else {
        return Ok(());
    };
    let real = sweep::files::real_path(out);
    for run in real.ancestors().skip(1) {
        if !sweep::store::RunDir::new(run).is_run() {
            continue;
        }
        if allowed.iter().any(|a| real == run.join(a)) {
            return Ok(());
        }
        return Err(CliError::Usage(format!(
            "--out `{}` lies inside the run folder `{}`, whose files sweep reads back (hint: name a folder outside the run)",
            one_line(&out.display().to_string()),
            one_line(&run.display().to_string())
        )));
    }
    Ok(())
}

/// Refuses an `option` (`--out`, `run --output`) where no folder can be made: one under a file
/// (`results.csv/sub`), or a link, or under a link, to nothing. Each said `Not a directory` or
/// `File exists` (exit 4, as a full disk), naming the whole path, not the part to change.
pub(crate) fn refuse_a_path_under_no_folder(
    option: &str,
    out: Option<&Path>,
) -> Result<(), CliError> {
    let Some(out) = out else {
        return Ok(());
    };
    let shown = |p: &Path| one_line(&p.display().to_string());
    for part in out.ancestors().filter(|p| !p.as_os_str().is_empty()) {
        let Ok(own) = std::fs::symlink_metadata(part) else {
            continue;
        };
        let under = if part == out {
            String::new()
        } else {
            format!(" lies under `{}`, which", shown(part))
        };
        match std::fs::metadata(part) {
            Err(_) if own.file_type().is_symlink() => {
                let to = std::fs::read_link(part)
                    .map(|t| format!(" `{}`", shown(&t)))
                    .unwrap_or_default();
                return Err(CliError::Usage(format!(
                    "{option} `{}`{under} is a link to{to}, which does not exist (hint: make the folder it points to, or give another {option})",
                    shown(out)
                )));
            }
            Ok(m) if !m.is_dir() && part != out => {
                return Err(CliError::Usage(format!(
                    "{option} `{}`{under} is a file, not a folder (hint: {option} names the folder its files go into, made if missing)",
                    shown(out)
                )));
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_and_its_file_are_one_file_and_two_files_are_not() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b, link) = (
            tmp.path().join("a"),
            tmp.path().join("b"),
            tmp.path().join("l"),
        );
        std::fs::write(&a, "a").unwrap();
        std::fs::write(&b, "b").unwrap();
        std::os::unix::fs::symlink(&a, &link).unwrap();
        assert!(same_file(&a, &link));
        assert!(!same_file(&a, &b));
        assert!(same_file(
            &tmp.path().join("new"),
            &tmp.path().join("./new")
        ));
        let err = refuse_own_inputs(
            "--out x",
            std::slice::from_ref(&link),
            &[b.clone(), a.clone()],
            "h",
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            err,
            format!(
                "`--out x` would overwrite `{}` (`{}`), which this command reads (hint: h)",
                link.display(),
                a.display()
            )
        );
        assert!(refuse_own_inputs("--out x", &[b], &[a], "h").is_ok());
        assert!(is_stdout(Path::new("-")));
        assert!(!is_stdout(&link));
    }
}
