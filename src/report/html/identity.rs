//! The run's identity: what ran, where and with what (spec, bench, command line, machine, driver,
//! compiler, commit), enough to run it again.

use crate::report::escape;
use crate::store::Manifest;
use std::fmt::Write as _;

/// The spec's own description of the sweep, when it has one.
pub(super) fn description(m: &Manifest) -> Option<String> {
    let spec: toml::Value = toml::from_str(&m.spec).ok()?;
    let d = spec.get("description")?.as_str()?.trim();
    (!d.is_empty()).then(|| d.to_string())
}

/// A row of the identity table; none when `v` is empty.
fn row(h: &mut String, k: &str, v: &str) {
    if v.trim().is_empty() {
        return;
    }
    let _ = writeln!(h, "<tr><th>{}</th><td>{}</td></tr>", escape(k), escape(v));
}

/// What ran, where and with what: enough to run it again.
pub(super) fn machine(h: &mut String, m: &Manifest) {
    h.push_str("<h2 id=\"run\">Run</h2>\n<table>\n");
    row(
        h,
        "spec",
        &format!("{} (sha256 {:.12})", m.spec_path, m.spec_hash),
    );
    row(h, "bench", &m.bench);
    if let Some((program, args)) = m.command.split_first() {
        let line = crate::exec::Cmd::new(program.as_str())
            .args(args.iter().cloned())
            .line();
        let dir = if m.cwd.is_empty() {
            String::new()
        } else {
            format!(" (in {})", m.cwd)
        };
        row(h, "command", &format!("{line}{dir}"));
    }
    row(h, "overrides", &m.overrides.join(" "));
    row(h, "host", &m.host);
    let end = |i: &str| m.gpus_end.iter().find(|g| g.index == i);
    for g in &m.gpus_start {
        let clocks = match end(&g.index) {
            Some(e) => format!(
                "SM {} MHz, memory {} MHz, {} °C at the end",
                e.sm_clock_mhz, e.mem_clock_mhz, e.temperature_c
            ),
            None => format!(
                "SM {} MHz, memory {} MHz, {} °C at start",
                g.sm_clock_mhz, g.mem_clock_mhz, g.temperature_c
            ),
        };
        row(
            h,
            &format!("GPU {}", g.index),
            &format!("{} (compute {}), {clocks}", g.name, g.compute_cap),
        );
    }
    let mut drivers: Vec<&str> = m.gpus_start.iter().map(|g| g.driver.as_str()).collect();
    drivers.dedup();
    row(h, "driver", &drivers.join(", "));
    let arch = m
        .arch
        .as_deref()
        .map_or(String::new(), |a| format!(", {a}"));
    row(
        h,
        "compiler",
        &format!(
            "{} {}{arch}",
            m.compiler,
            compiler_release(&m.compiler_version)
        ),
    );
    let commit = if m.git_commit.is_empty() {
        "not a git checkout".to_string()
    } else if m.git_dirty == Some(true) {
        format!(
            "{} (tracked files changed since: the commit alone is not what ran)",
            m.git_commit
        )
    } else {
        m.git_commit.clone()
    };
    row(h, "git commit", &commit);
    let sweep = match (&m.sweep_version, &m.sweep_commit) {
        (Some(v), Some(c)) => format!("{v} (commit {c:.12})"),
        (Some(v), None) => v.clone(),
        _ => String::new(),
    };
    row(h, "sweep", &sweep);
    row(h, "started", &when(&m.started));
    let finished = match m.finished.as_deref() {
        Some(f) => match took(&m.started, f) {
            Some(t) => format!("{} ({t} after the start)", when(f)),
            None => when(f),
        },
        None => "-".to_string(),
    };
    row(h, "finished", &finished);
    row(h, "state", m.state.as_str());
    h.push_str("</table>\n");
}

/// An RFC 3339 time stamp as people read it, to the second in UTC (`2026-11-26 18:26:04 UTC`, not
/// `2026-11-26T18:26:04.283942974+00:00`); as it is where it does not parse.
pub(super) fn when(stamp: &str) -> String {
    chrono::DateTime::parse_from_rfc3339(stamp).map_or(stamp.to_string(), |t| {
        t.with_timezone(&chrono::Utc)
            .format("%Y-%m-%d %H:%M:%S UTC")
            .to_string()
    })
}

/// How long from `start` to `end` (RFC 3339), as the terminal writes a run's time (`6 min 03 s`).
fn took(start: &str, end: &str) -> Option<String> {
    let (a, b) = (
        chrono::DateTime::parse_from_rfc3339(start).ok()?,
        chrono::DateTime::parse_from_rfc3339(end).ok()?,
    );
    let secs = (b - a).num_milliseconds() as f64 / 1000.0;
    (secs >= 0.0).then(|| crate::events::terminal::duration(secs))
}

/// The compiler's version in one line: nvcc's from `release` (`release 13.0, V13.0.88`), any
/// other's first line (not `cc --version`'s licence).
pub(super) fn compiler_release(v: &str) -> String {
    let from = v.find("release").unwrap_or(0);
    v[from..]
        .split(['|', '\n'])
        .next()
        .unwrap_or_default()
        .trim()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_to_the_second_in_utc_and_the_run_s_length_is_said() {
        assert_eq!(
            when("2026-11-26T18:26:04.283942974+00:00"),
            "2026-11-26 18:26:04 UTC"
        );
        assert_eq!(when("2026-11-26T19:26:04+01:00"), "2026-11-26 18:26:04 UTC");
        assert_eq!(when("yesterday"), "yesterday");
        assert_eq!(
            took(
                "2026-11-26T18:26:04.283942974+00:00",
                "2026-11-26T18:32:07.121578686+00:00"
            )
            .as_deref(),
            Some("6 min 03 s")
        );
        assert_eq!(took("2026-11-26T18:26:04Z", "later"), None);
    }

    #[test]
    fn the_compiler_is_one_line_whatever_it_prints() {
        for (version, line) in [
            (
                "Cuda compilation tools, release 13.0, V13.0.88 | Build cuda_13.0.r13.0/compiler.36424714_0",
                "release 13.0, V13.0.88",
            ),
            (
                "cc (Debian 12.2.0-14) 12.2.0 | Copyright (C) 2022 Free Software Foundation, Inc. | This is free software",
                "cc (Debian 12.2.0-14) 12.2.0",
            ),
            ("cc 12\nCopyright", "cc 12"),
            ("", ""),
        ] {
            assert_eq!(compiler_release(version), line, "{version}");
        }
    }

    #[test]
    fn the_identity_names_a_missing_commit_and_shows_no_empty_row() {
        let m = Manifest {
            spec_path: "sweeps/saw.toml".into(),
            bench: "saw".into(),
            command: vec![
                "sweep".into(),
                "run".into(),
                "sweeps/saw.toml".into(),
                "--set".into(),
                "a=1 2".into(),
            ],
            compiler: "cc".into(),
            ..Default::default()
        };
        let mut h = String::new();
        machine(&mut h, &m);
        assert!(
            h.contains("<tr><th>git commit</th><td>not a git checkout</td></tr>"),
            "{h}"
        );
        assert!(
            h.contains("<tr><th>command</th><td>sweep run sweeps/saw.toml --set 'a=1 2'</td></tr>"),
            "{h}"
        );
        assert!(!h.contains("<td></td>"), "an empty row: {h}");
        for absent in ["host", "driver", "overrides", "sweep<"] {
            assert!(!h.contains(&format!("<th>{absent}")), "{absent}: {h}");
        }
    }
}
