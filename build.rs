//! Cargo's build script: the git commit of the sweep source this binary is built from, for the
//! manifest of every run (`sweep_commit`, as `SWEEP_COMMIT` at compile time): `<sha>`,
//! `<sha>-dirty` when the files that go into the binary differ from it, or `unknown` where git or
//! the repository is missing (a tarball, a crate from a registry). It never fails the build.
//!
//! It reruns when those files change (the binary is rebuilt then anyway) and when HEAD moves
//! (a commit, a checkout), not on every build.

use std::path::Path;
use std::process::{Command, Stdio};

/// What goes into the binary, relative to the package: `git status` of these says `-dirty`.
const SOURCES: [&str; 5] = ["src", "assets", "build.rs", "Cargo.toml", "Cargo.lock"];

fn main() {
    let root = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let root = Path::new(&root);
    for s in SOURCES.iter().filter(|s| root.join(s).exists()) {
        println!("cargo:rerun-if-changed={s}");
    }
    let commit = match git_commit(root) {
        Some((sha, dirty, watch)) => {
            for w in watch {
                println!("cargo:rerun-if-changed={}", w.display());
            }
            if dirty {
                format!("{sha}-dirty")
            } else {
                sha
            }
        }
        None => "unknown".into(),
    };
    println!("cargo:rustc-env=SWEEP_COMMIT={commit}");
}

/// `git -C root ARGS`, its output without the final line break; None when git is missing or
/// fails (its messages are not shown). It takes no lock a git command of the user's could meet
/// (`git status` would otherwise refresh the index).
fn git(root: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("--no-optional-locks")
        .arg("-C")
        .arg(root)
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    Some(text.trim_end_matches(['\n', '\r']).to_string())
}

/// The commit HEAD names, whether [`SOURCES`] differ from it, and the git files whose change
/// moves HEAD (to rerun on). None outside a repository, or in one that does not track this
/// package (a tarball unpacked inside another repository's work tree).
fn git_commit(root: &Path) -> Option<(String, bool, Vec<std::path::PathBuf>)> {
    let sha = git(root, &["rev-parse", "--verify", "-q", "HEAD"])?;
    git(root, &["ls-files", "--error-unmatch", "--", "Cargo.toml"])?;
    let mut status = vec!["status", "--porcelain", "--"];
    status.extend(SOURCES);
    let dirty = !git(root, &status)?.is_empty();
    // HEAD, the branch it points to (a loose ref, or the folder a new one appears in when the
    // branch is packed) and packed-refs; only paths that exist: a missing one reruns every build.
    let mut watch = Vec::new();
    let git_path = |name: &str| {
        let p = root.join(git(root, &["rev-parse", "--git-path", name])?);
        Some(p).filter(|p| p.exists())
    };
    watch.extend(git_path("HEAD"));
    watch.extend(git_path("packed-refs"));
    if let Some(branch) = git(root, &["symbolic-ref", "-q", "HEAD"]) {
        match git_path(&branch) {
            Some(loose) => watch.push(loose),
            None => {
                let folder = branch.rsplit_once('/').map_or("refs", |(dir, _)| dir);
                watch.extend(git_path(folder));
            }
        }
    }
    Some((sha, dirty, watch))
}
