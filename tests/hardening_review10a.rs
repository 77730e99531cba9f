//! Review 10 of issue 38, the run side: what a hostile user found on the tree after the ninth
//! round, each fixed with a test that failed before. Real programs built with `cc`, real runs,
//! real signals.

use crate::common::{self, project};
use crate::hardening::write;
use std::path::Path;
use std::time::{Duration, Instant};

/// A bench `daemon` whose program runs `line` through `system()`, then waits a minute and prints
/// its MFlops; `sweeps/daemon.toml`, one point.
fn daemon_bench(p: &Path, line: &str) {
    write(
        p,
        "cuda/daemon/daemon.c",
        &format!("#include \"params.h\"\n#include <stdio.h>\n#include <stdlib.h>\n#include <unistd.h>\nint main(void) {{\n  system(\"{line}\");\n  sleep(60);\n  printf(\"MFlops: %d\\n\", THREADS);\n  return 0;\n}}\n"),
    );
    write(p, "cuda/daemon/params.h.tera", "#define THREADS {{ threads }}\n");
    write(
        p,
        "sweeps/daemon.toml",
        "bench = \"daemon\"\ncompiler = \"cc\"\n[[axis]]\nname = \"threads\"\nvalues = [1]\n[[metric]]\npattern = \"mflops\"\n",
    );
}

/// Review 10a, H1: a program that starts a daemon the classic way (fork, setsid, fork again, the
/// middle one exits; here `setsid sh -c 'env -i sleep N &'`) leaves the daemon in a session and
/// group whose leader is gone, without a mark of sweep. sweep told the guard only groups that a
/// live descendant leads, so a SIGKILL of sweep while the point ran left the daemon running
/// under pid 1. A group that holds nothing but sweep's descendants is told too.
#[test]
fn a_daemon_whose_group_leader_is_gone_does_not_outlive_a_sigkilled_sweep() {
    if !common::on_path("setsid") || !common::on_path("env") {
        return common::skip("no setsid or env on PATH");
    }
    let p = project();
    let secs = format!("{}", 700_000 + std::process::id());
    daemon_bench(p.path(), &format!("setsid sh -c 'env -i sleep {secs} &'"));
    let mut child = common::sweep_process(p.path())
        .args(["run", "sweeps/daemon.toml", "-q", "--no-analyze"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(60);
    while common::sleeps(&secs).is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        !common::sleeps(&secs).is_empty(),
        "the point's daemon never started"
    );
    // A second for sweep to see the daemon's group (it looks every half second).
    std::thread::sleep(Duration::from_millis(1500));
    child.kill().unwrap();
    child.wait().unwrap();
    let until = Instant::now() + Duration::from_secs(5);
    while !common::sleeps(&secs).is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left = common::sleeps(&secs);
    for pid in &left {
        // SAFETY: kills this test's own leftover sleeps.
        unsafe { libc::kill(*pid, libc::SIGKILL) };
    }
    assert!(
        left.is_empty(),
        "a daemon outlived the SIGKILLed sweep: {left:?}"
    );
}
