//! Who made a name in a folder that several sweeps share (a build cache, an output folder of
//! Slurm shards): this process among the sweeps of every host and pid namespace. A pid alone told
//! neither two containers' sweeps apart (they shared one name and removed each other's folders,
//! review 15 F2) nor a sweep of another host from a dead one (its folders were removed, F1).

/// This process: `<pid>-<nonce>-<host>`, the middle part 64 random bits (hex).
pub fn owner() -> &'static str {
    static OWNER: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    OWNER.get_or_init(|| format!("{}-{:016x}-{}", std::process::id(), nonce(), host_name()))
}

/// 64 random bits (the kernel's; else what the clock and the stack say).
fn nonce() -> u64 {
    let mut buf = [0u8; 8];
    // SAFETY: getrandom writes at most `buf.len()` bytes into a buffer we own.
    let got = unsafe { libc::getrandom(buf.as_mut_ptr().cast(), buf.len(), 0) };
    if got == buf.len() as isize {
        return u64::from_ne_bytes(buf);
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    now ^ (&buf as *const _ as u64).rotate_left(32) ^ u64::from(std::process::id())
}

/// This host's name as a part of a file name: ASCII letters, digits, `.`, `_` and `-` only.
pub fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most `buf.len()` bytes into a buffer we own.
    let ok = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } == 0;
    let name: String = buf
        .iter()
        .take_while(|b| ok && **b != 0)
        .take(64)
        .map(|&b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'.' | b'_' | b'-' => b as char,
            _ => '_',
        })
        .collect();
    if name.is_empty() {
        "host".to_string()
    } else {
        name
    }
}

/// An owner's pid and host; the host None for an older sweep's name (a pid alone), taken for
/// this host's.
pub fn pid_and_host(owner: &str) -> (Option<i32>, Option<&str>) {
    let mut parts = owner.splitn(3, '-');
    let pid = parts.next().and_then(|p| p.parse::<i32>().ok());
    (pid, parts.nth(1))
}

/// Whether `owner` names a process of this host (or is an older sweep's pid alone).
pub fn of_this_host(owner: &str) -> bool {
    pid_and_host(owner)
        .1
        .is_none_or(|h| Some(h) == pid_and_host(self::owner()).1)
}

/// Whether process `pid` of this host exists (one of another user's counts).
pub fn alive(pid: Option<i32>) -> bool {
    // SAFETY: kill with signal 0 only asks whether the process exists.
    pid.is_some_and(|p| {
        p > 0
            && (unsafe { libc::kill(p, 0) } == 0
                || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_owner_is_this_pid_a_random_part_and_this_host() {
        let (pid, host) = pid_and_host(owner());
        assert_eq!(pid, Some(std::process::id() as i32));
        assert_eq!(host.map(str::to_string), Some(host_name()));
        assert!(of_this_host(owner()) && of_this_host("12"));
        assert!(!of_this_host("12-00000000000000ab-elsewhere"));
        assert_eq!(
            pid_and_host("12-00000000000000ab-gpu-node-01"),
            (Some(12), Some("gpu-node-01"))
        );
        assert_ne!(nonce(), nonce());
    }
}
