//! Power, SM clock and temperature while a point measures: samples from a [`PowerSource`]
//! (nvidia-smi on a GPU host; a fake in tests), summarised over the window from the point's start
//! gate to its exit.
//!
//! nvidia-smi is asked for `power.draw.instant` (on an H100 `power.draw` is a 1 s average, too slow
//! for a point of ~0.4 s) every 20 ms; on the H100 host the instant reading itself changes about
//! every 100 ms, so a point of 0.4 s holds 3-5 distinct readings, and a
//! single metric of ~25 ms none of its own: the columns are per point, not per metric.

use std::collections::BTreeMap;
use std::io::BufRead;
use std::sync::{Arc, Mutex};

/// The per-point columns, in header order.
pub const COLUMNS: [&str; 6] = crate::schema::POWER_COLUMNS;

/// One reading; `t` in seconds since the Unix epoch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    pub t: f64,
    pub watts: f64,
    pub sm_mhz: f64,
    pub temp_c: f64,
}

/// Something that has power samples for a time window.
pub trait PowerSource: Send + Sync {
    fn between(&self, from: f64, to: f64) -> Vec<Sample>;
    /// Why no sample comes, where the source can tell.
    fn trouble(&self) -> Option<String> {
        None
    }
}

/// Seconds since the Unix epoch, now.
pub fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// The point's power columns from the samples of its window `from..to`: mean and max watts,
/// energy (mean watts x window), mean SM clock, max temperature, how many samples. Empty when the
/// window holds no sample (the cells stay empty rather than guessed).
pub fn summarize(samples: &[Sample], from: f64, to: f64) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    let inside: Vec<&Sample> = samples
        .iter()
        .filter(|s| s.t >= from && s.t <= to)
        .collect();
    if inside.is_empty() || to <= from {
        return out;
    }
    let n = inside.len() as f64;
    let mean_w = inside.iter().map(|s| s.watts).sum::<f64>() / n;
    let values = [
        mean_w,
        inside.iter().map(|s| s.watts).fold(f64::MIN, f64::max),
        mean_w * (to - from),
        inside.iter().map(|s| s.sm_mhz).sum::<f64>() / n,
        inside.iter().map(|s| s.temp_c).fold(f64::MIN, f64::max),
        n,
    ];
    for (c, v) in COLUMNS.iter().zip(values) {
        out.insert(c.to_string(), v);
    }
    out
}

/// One line of `nvidia-smi --query-gpu=timestamp,power.draw.instant,clocks.sm,temperature.gpu
/// --format=csv,noheader,nounits`: `2026/11/24 15:48:23.589, 125.23, 1980, 36` (local time).
pub fn parse_line(line: &str) -> Option<Sample> {
    let mut f = line.split(',').map(str::trim);
    let ts = f.next()?;
    let t = chrono::NaiveDateTime::parse_from_str(ts, "%Y/%m/%d %H:%M:%S%.f").ok()?;
    let t = instant(t.and_local_timezone(chrono::Local), now())?;
    // `nan` or `inf` is no reading.
    let mut num = || {
        f.next()
            .and_then(|v| v.parse::<f64>().ok())
            .filter(|v| v.is_finite())
    };
    Some(Sample {
        t,
        watts: num()?,
        sm_mhz: num()?,
        temp_c: num()?,
    })
}

/// Seconds since the Unix epoch of a local time: of the two a DST change repeats, the one nearer
/// `now` (a sample is read within milliseconds of its stamp).
fn instant<Tz: chrono::TimeZone>(
    local: chrono::LocalResult<chrono::DateTime<Tz>>,
    now: f64,
) -> Option<f64> {
    let secs = |t: &chrono::DateTime<Tz>| t.timestamp_millis() as f64 / 1e3;
    match local {
        chrono::LocalResult::Single(t) => Some(secs(&t)),
        chrono::LocalResult::Ambiguous(a, b) => {
            let (a, b) = (secs(&a), secs(&b));
            Some(if (a - now).abs() <= (b - now).abs() {
                a
            } else {
                b
            })
        }
        chrono::LocalResult::None => None,
    }
}

/// Samples nvidia-smi prints every `period_ms` for one GPU, kept while it runs (the process is
/// killed when this is dropped). `$SWEEP_NVIDIA_SMI` names another program (tests).
pub struct NvidiaSmi {
    samples: Arc<Mutex<Vec<Sample>>>,
    child: Mutex<std::process::Child>,
    /// The first line nvidia-smi wrote to stderr (why it ended, as a rule).
    said: Arc<Mutex<Option<String>>>,
    /// The last line of its stdout that did not read as a sample (`[N/A]` readings).
    unread: Arc<Mutex<Option<String>>>,
    /// Its stdout has ended: no sample will come.
    closed: Arc<std::sync::atomic::AtomicBool>,
}

/// Keeps a line (cut to 120 characters) in `slot`; `first`: only when it holds none yet.
fn keep_line(slot: &Mutex<Option<String>>, line: &str, first: bool) {
    let line = line.trim();
    if let Ok(mut s) = slot.lock() {
        if !line.is_empty() && (!first || s.is_none()) {
            *s = Some(line.chars().take(120).collect());
        }
    }
}

/// Why power is not sampled.
#[derive(Debug, thiserror::Error)]
pub enum PowerError {
    #[error("cannot start `{program}` for power sampling: {source} (hint: it comes with the NVIDIA driver; or drop `power` from [profile])")]
    Start {
        program: String,
        #[source]
        source: std::io::Error,
    },
    #[error("no stdout from nvidia-smi")]
    NoStdout,
}

impl NvidiaSmi {
    pub fn start(gpu: &str, period_ms: u32) -> Result<NvidiaSmi, PowerError> {
        let program = std::env::var("SWEEP_NVIDIA_SMI")
            .ok()
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| "nvidia-smi".into());
        Self::spawn(&program, gpu, period_ms)
    }

    fn spawn(program: &str, gpu: &str, period_ms: u32) -> Result<NvidiaSmi, PowerError> {
        // nvidia-smi's stdout into a pipe is block-buffered: line-buffer it where stdbuf exists,
        // so a sample reaches sweep within its period.
        let mut command = if crate::exec::on_path("stdbuf").is_some() {
            let mut c = std::process::Command::new("stdbuf");
            c.args(["-oL", program]);
            c
        } else {
            std::process::Command::new(program)
        };
        let command = command
            .args([
                "-i",
                gpu,
                "--query-gpu=timestamp,power.draw.instant,clocks.sm,temperature.gpu",
                "--format=csv,noheader,nounits",
                "-lms",
                &period_ms.to_string(),
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .stdin(std::process::Stdio::null());
        let mut child =
            crate::exec::own(|| command.spawn(), |c| vec![c.id() as i32]).map_err(|source| {
                PowerError::Start {
                    program: program.to_string(),
                    source,
                }
            })?;
        let stdout = child.stdout.take().ok_or(PowerError::NoStdout)?;
        let samples: Arc<Mutex<Vec<Sample>>> = Arc::new(Mutex::new(Vec::new()));
        let (said, unread) = (Arc::default(), Arc::default());
        if let Some(stderr) = child.stderr.take() {
            let said = Arc::clone(&said);
            let _ = crate::exec::thread(move || {
                for line in std::io::BufReader::new(stderr).lines() {
                    let Ok(line) = line else { break };
                    keep_line(&said, &line, true);
                }
            });
        }
        let keep = Arc::clone(&samples);
        let not_read = Arc::clone(&unread);
        let closed = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let ended = Arc::clone(&closed);
        let reading = crate::exec::thread(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let Some(sample) = parse_line(&line) else {
                    keep_line(&not_read, &line, false);
                    continue;
                };
                if let Ok(mut v) = keep.lock() {
                    // Old samples are of no use once their points are done: keep ~10 minutes.
                    let cutoff = sample.t - 600.0;
                    if v.first().is_some_and(|f| f.t < cutoff) {
                        v.retain(|x| x.t >= cutoff);
                    }
                    v.push(sample);
                }
            }
            ended.store(true, std::sync::atomic::Ordering::SeqCst);
        });
        if let Err(source) = reading {
            let _ = child.kill();
            let _ = child.wait();
            return Err(PowerError::Start {
                program: program.to_string(),
                source,
            });
        }
        Ok(NvidiaSmi {
            samples,
            child: Mutex::new(child),
            said,
            unread,
            closed,
        })
    }
}

impl PowerSource for NvidiaSmi {
    /// Why no sample comes, where nvidia-smi shows it: it ended (its exit and the first line of
    /// its stderr), or its lines do not read as samples (`[N/A]`: no reading on this GPU).
    fn trouble(&self) -> Option<String> {
        let line = |slot: &Mutex<Option<String>>| slot.lock().ok().and_then(|s| s.clone());
        let ended = self
            .child
            .lock()
            .ok()
            .and_then(|mut c| c.try_wait().ok().flatten());
        if let Some(status) = ended {
            let how = match status.code() {
                Some(c) => format!("exit code {c}"),
                None => "a signal".to_string(),
            };
            // Its stderr may still be on its way to the reader.
            std::thread::sleep(std::time::Duration::from_millis(50));
            return Some(match line(&self.said) {
                Some(l) => format!("`nvidia-smi` ended with {how}: {l}"),
                None => format!("`nvidia-smi` ended with {how}"),
            });
        }
        line(&self.unread).map(|l| format!("nvidia-smi printed no reading: `{l}`"))
    }

    fn between(&self, from: f64, to: f64) -> Vec<Sample> {
        // Wait (up to 300 ms) for a sample at or after `to`, so the window's end is covered.
        let deadline = std::time::Instant::now() + std::time::Duration::from_millis(300);
        loop {
            // Read before the samples: once it is set, every sample is in.
            let closed = self.closed.load(std::sync::atomic::Ordering::SeqCst);
            let (got, last) = match self.samples.lock() {
                Ok(v) => (
                    v.iter()
                        .filter(|s| s.t >= from && s.t <= to)
                        .copied()
                        .collect::<Vec<_>>(),
                    v.last().map_or(0.0, |s| s.t),
                ),
                Err(_) => return Vec::new(),
            };
            if last >= to || closed || std::time::Instant::now() >= deadline {
                return got;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

impl Drop for NvidiaSmi {
    fn drop(&mut self) {
        if let Ok(mut c) = self.child.lock() {
            let _ = c.kill();
            let _ = c.wait();
            crate::exec::disown(c.id() as i32);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Samples made up in the test, as a GPU host's nvidia-smi would give them.
    struct Fake(Vec<Sample>);
    impl PowerSource for Fake {
        fn between(&self, from: f64, to: f64) -> Vec<Sample> {
            self.0
                .iter()
                .filter(|s| s.t >= from && s.t <= to)
                .copied()
                .collect()
        }
    }

    fn s(t: f64, watts: f64) -> Sample {
        Sample {
            t,
            watts,
            sm_mhz: 1980.0 - watts,
            temp_c: 30.0 + t,
        }
    }

    #[test]
    fn a_window_gets_mean_and_max_watts_energy_clock_and_temperature() {
        let src = Fake(vec![
            s(0.9, 500.0),
            s(1.0, 100.0),
            s(1.1, 300.0),
            s(1.2, 200.0),
            s(1.6, 700.0),
        ]);
        let v = summarize(&src.between(1.0, 1.5), 1.0, 1.5);
        assert_eq!(v["power_w"], 200.0);
        assert_eq!(v["power_max_w"], 300.0);
        assert!((v["energy_j"] - 100.0).abs() < 1e-9);
        assert_eq!(v["power_sm_mhz"], 1780.0);
        assert!((v["power_temp_c"] - 31.2).abs() < 1e-9);
        assert_eq!(v["power_samples"], 3.0);
        assert!(summarize(&src.between(2.0, 3.0), 2.0, 3.0).is_empty());
    }

    /// nvidia-smi prints local time without its offset: in the hour a DST change repeats, a
    /// stamp names two instants, and the one nearer now is meant (a sweep overnight must not lose
    /// an hour of power readings); a stamp of the hour skipped names none.
    #[test]
    fn a_stamp_of_the_repeated_dst_hour_is_the_instant_nearer_now() {
        use chrono::{FixedOffset, LocalResult, TimeZone};
        let at = |offset_h: i32| {
            FixedOffset::east_opt(offset_h * 3600)
                .unwrap()
                .with_ymd_and_hms(2026, 10, 25, 2, 30, 0)
                .unwrap()
        };
        // 02:30 CEST (+2) is 00:30 UTC, 02:30 CET (+1) is 01:30 UTC.
        let (summer, winter) = (at(2), at(1));
        let both = LocalResult::Ambiguous(summer, winter);
        let secs = |t: chrono::DateTime<FixedOffset>| t.timestamp() as f64;
        assert_eq!(instant(both, secs(summer) + 60.0), Some(secs(summer)));
        assert_eq!(instant(both, secs(winter) + 60.0), Some(secs(winter)));
        assert_eq!(
            instant(LocalResult::Single(summer), 0.0),
            Some(secs(summer))
        );
        assert_eq!(instant::<FixedOffset>(LocalResult::None, 0.0), None);
    }

    /// Once nvidia-smi has ended no sample can come: a point does not wait for one (300 ms a
    /// point, for every point of the sweep).
    #[test]
    fn an_ended_nvidia_smi_is_not_waited_for() {
        let smi = NvidiaSmi::spawn("false", "0", 20).unwrap();
        let t0 = std::time::Instant::now();
        while smi.trouble().is_none() {
            assert!(t0.elapsed().as_secs() < 10, "`false` never ended");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        let t = now();
        let t0 = std::time::Instant::now();
        assert!(smi.between(t - 1.0, t).is_empty());
        let waited = t0.elapsed();
        assert!(waited.as_millis() < 150, "waited {waited:?}");
    }

    #[test]
    fn nvidia_smi_lines_are_read_in_local_time() {
        let line = "2026/11/24 15:48:23.589, 125.23, 1980, 36";
        let got = parse_line(line).unwrap();
        let want = chrono::NaiveDate::from_ymd_opt(2026, 11, 24)
            .unwrap()
            .and_hms_milli_opt(15, 48, 23, 589)
            .unwrap()
            .and_local_timezone(chrono::Local)
            .unwrap()
            .timestamp_millis() as f64
            / 1e3;
        assert_eq!(
            got,
            Sample {
                t: want,
                watts: 125.23,
                sm_mhz: 1980.0,
                temp_c: 36.0
            }
        );
        assert_eq!(parse_line("2026/11/24 15:48:23.589, [N/A], 1980, 36"), None);
        assert_eq!(parse_line("garbage"), None);
        assert_eq!(parse_line("2026/11/24 15:48:23.589, nan, 1980, 36"), None);
        assert_eq!(parse_line("2026/11/24 15:48:23.589, 250, inf, 36"), None);
    }
}
