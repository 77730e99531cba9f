//! What a program left behind when it ended, out of its process group: a `setsid` grandchild (a
//! daemon, `setsid sleep 1000 &`) leaves the group that sweep kills, and outlived the point.
//!
//! sweep is a child subreaper (PR_SET_CHILD_SUBREAPER): what a program orphans becomes sweep's
//! child instead of init's, so it stays among sweep's descendants. Each started command carries a
//! mark of its own in its environment, [`TREE_ENV`]`=<sweep pid>-<n>`, which every process it
//! starts inherits; when the command ends, sweep's descendants that carry its mark are killed,
//! and only they: a parallel build or another point has another mark, and what sweep starts
//! otherwise (the guard, short queries, power sampling) has none.
//!
//! A subreaper's orphans are its children: one that ends by itself is a zombie of sweep until
//! sweep reaps it (one a point, they filled the process table of a long sweep), and one that
//! cleared or changed its environment (`setsid env -i daemon`) carries no mark. sweep knows the
//! children it started itself ([`own`]); any other child is an orphan, reaped when it ended and
//! killed when it carries no mark of a command still running. Every half second the process
//! groups that sweep's descendants made for themselves are told to the guard ([`watch_escapes`]),
//! which kills them if sweep dies first.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, RwLock};
use std::time::{Duration, Instant};

/// The environment variable that marks the processes of one started command.
pub const TREE_ENV: &str = "SWEEP_TREE";

static NEXT: AtomicU64 = AtomicU64::new(0);

/// Makes sweep the subreaper of what its programs orphan (once; a kernel without it leaves them
/// to init, as before).
pub(super) fn become_subreaper() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    // SAFETY: prctl sets one attribute of this process.
    ONCE.call_once(|| unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    });
}

/// Held for reading while a child is started and made known, for writing while orphans are
/// reaped: a child that ends before it is known is never taken for an orphan.
static STARTING: RwLock<()> = RwLock::new(());
/// The children sweep started itself and has not reaped: their owners wait for them.
static OWN: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// Starts a child with `start`, made known as sweep's own by the pids `pids` gives (so it is
/// never reaped as an orphan); [`disown`] each once it is reaped.
pub fn own<T>(
    start: impl FnOnce() -> std::io::Result<T>,
    pids: impl Fn(&T) -> Vec<i32>,
) -> std::io::Result<T> {
    let _starting = STARTING.read().unwrap_or_else(|e| e.into_inner());
    let started = start()?;
    OWN.lock()
        .unwrap_or_else(|e| e.into_inner())
        .extend(pids(&started));
    Ok(started)
}

/// Child `pid`, started by [`own`], was reaped by its owner.
pub fn disown(pid: i32) {
    OWN.lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|&p| p != pid);
}

/// The marked commands started and not yet ended ([`started`], [`kill_left_behind`]).
static LIVE: AtomicU64 = AtomicU64::new(0);

/// A marked command started: until it ends, an orphan without a mark may be its (a helper it
/// started with a cleared environment and still talks to), and is not killed.
pub(super) fn started() {
    LIVE.fetch_add(1, Ordering::SeqCst);
}

/// Whether this process looks after its orphans ([`adopt_orphans`]).
static ADOPTING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// From now on, this process reaps and kills its orphans (see the module's doc). Only where every
/// child is started through [`own`] (the `sweep` binary): a library user's own children, started
/// otherwise, would be taken for orphans.
pub(super) fn adopt_orphans() {
    become_subreaper();
    ADOPTING.store(true, Ordering::SeqCst);
}

/// A new mark (`<sweep pid>-<n>`): the value of [`TREE_ENV`] for one command.
pub(super) fn new_mark() -> String {
    let mark = format!(
        "{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    MARKS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(mark.clone());
    mark
}

/// The marks of the commands not yet ended ([`new_mark`], [`kill_left_behind`]): an orphan that
/// carries one of this sweep's form but none of these made it up (review 16a A3: a build's
/// leftover with `SWEEP_TREE=<sweep pid>-999999` was spared to the end, writing in the cache).
static MARKS: Mutex<std::collections::BTreeSet<String>> =
    Mutex::new(std::collections::BTreeSet::new());

/// Every process of /proc: pid and parent pid.
fn processes() -> Vec<(i32, i32)> {
    processes_with_state()
        .into_iter()
        .map(|(p, pp, _)| (p, pp))
        .collect()
}

/// Every process of /proc: pid, parent pid and state (`Z` for a zombie).
fn processes_with_state() -> Vec<(i32, i32, char)> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| stat(pid).map(|s| (pid, s.parent, s.state)))
        .collect()
}

/// Every process of /proc with what its stat says.
fn all_stats() -> Vec<(i32, Stat)> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| stat(pid).map(|s| (pid, s)))
        .collect()
}

/// What /proc/<pid>/stat says of a process that the scans read.
struct Stat {
    /// `Z` for a zombie.
    state: char,
    parent: i32,
    group: i32,
}

fn stat(pid: i32) -> Option<Stat> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid pgrp ...`: comm may hold spaces and parentheses.
    let mut rest = stat.rsplit_once(')')?.1.split_whitespace();
    Some(Stat {
        state: rest.next()?.chars().next()?,
        parent: rest.next()?.parse().ok()?,
        group: rest.next()?.parse().ok()?,
    })
}

/// The descendants of `root` among `procs`.
fn descendants(root: i32, procs: &[(i32, i32)]) -> HashSet<i32> {
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for &(pid, ppid) in procs {
        children.entry(ppid).or_default().push(pid);
    }
    let mut found = HashSet::new();
    let mut todo = vec![root];
    while let Some(p) = todo.pop() {
        for &c in children.get(&p).into_iter().flatten() {
            if found.insert(c) {
                todo.push(c);
            }
        }
    }
    found
}

/// Whether the environment process `pid` started with holds an entry that `wanted` accepts.
fn marked(pid: i32, wanted: &dyn Fn(&[u8]) -> bool) -> bool {
    std::fs::read(format!("/proc/{pid}/environ"))
        .is_ok_and(|env| env.split(|b| *b == 0).any(wanted))
}

/// Kills, with SIGKILL, the processes among `candidates()` that `wanted` marks, again until none
/// is left (one may start another meanwhile); the pids killed.
fn kill_marked(candidates: impl Fn() -> HashSet<i32>, wanted: &dyn Fn(&[u8]) -> bool) -> Vec<i32> {
    let mut killed = Vec::new();
    for _ in 0..50 {
        let hit: Vec<i32> = candidates()
            .into_iter()
            .filter(|&p| marked(p, wanted))
            .collect();
        if hit.is_empty() {
            break;
        }
        for &p in &hit {
            // SAFETY: kill only sends a signal.
            unsafe { libc::kill(p, libc::SIGKILL) };
        }
        killed.extend(hit);
    }
    killed
}

/// Kills what the command marked `mark` (one [`started`]) left among sweep's descendants, and
/// reaps those that became sweep's children (a subreaper's orphans are its to reap).
pub(super) fn kill_left_behind(mark: &str) {
    let _ = LIVE.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
    MARKS.lock().unwrap_or_else(|e| e.into_inner()).remove(mark);
    let entry = format!("{TREE_ENV}={mark}").into_bytes();
    let me = std::process::id() as i32;
    let killed = kill_marked(|| descendants(me, &processes()), &|e: &[u8]| {
        e == entry.as_slice()
    });
    reap(killed);
    orphans();
}

/// The process groups told to the guard by [`watch_escapes`], each with the processes in it
/// that were seen among sweep's descendants; a group is untold when the last of them is gone.
static TOLD: Mutex<std::collections::BTreeMap<i32, HashSet<i32>>> =
    Mutex::new(std::collections::BTreeMap::new());

/// Every half second, tells the guard the process group of each of sweep's descendants that
/// left the groups sweep started (`setsid env -i daemon`: no mark, no known group), whether
/// sweep adopted it as an orphan or its parent, a point's program, still holds it: the guard
/// kills those groups too when sweep dies before a command's end has killed them (its programs
/// die with it, and their escaped children go to init, out of every tree sweep could find).
/// Started with the guard.
pub(super) fn watch_escapes() {
    let _ = std::thread::Builder::new()
        .name("escapes".into())
        .spawn(|| loop {
            std::thread::sleep(Duration::from_millis(500));
            tell_escapes();
        });
}

fn tell_escapes() {
    let me = std::process::id() as i32;
    // SAFETY: getpgrp only reads.
    let mine = unsafe { libc::getpgrp() };
    let live: Vec<(i32, Stat)> = all_stats()
        .into_iter()
        .filter(|(_, s)| s.state != 'Z')
        .collect();
    let parents: Vec<(i32, i32)> = live.iter().map(|(p, s)| (*p, s.parent)).collect();
    let ours = descendants(me, &parents);
    // The live processes of each group.
    let mut members: HashMap<i32, Vec<i32>> = HashMap::new();
    for (pid, s) in &live {
        members.entry(s.group).or_default().push(*pid);
    }
    // No lock against starts: a child started but not yet known is told once too, which only
    // keeps its own group, which dies with sweep anyway, told until it is gone.
    let own = OWN.lock().map(|o| o.clone()).unwrap_or_default();
    let mut told = TOLD.lock().unwrap_or_else(|e| e.into_inner());
    for &pid in &ours {
        if own.contains(&pid) || told.values().any(|t| t.contains(&pid)) {
            continue;
        }
        let Some(pgid) = stat(pid).map(|s| s.group).filter(|&g| g > 1) else {
            continue;
        };
        // Only a group that holds nothing but sweep's tree: one a process joined from outside
        // (its shell's, sweep's own) holds processes that are not sweep's to kill. Its leader may
        // be gone: a daemon forks, calls setsid and forks again, and the middle one exits (the
        // group and session keep its pid, and lead to no live process).
        let only_ours = members
            .get(&pgid)
            .is_some_and(|m| m.iter().all(|p| ours.contains(p)));
        if pgid == mine || !only_ours {
            continue;
        }
        if !told.contains_key(&pgid) {
            // A group sweep started is known to the guard already (and closed by its owner).
            if super::guard::knows(pgid) {
                continue;
            }
            super::guard::tell_guard(pgid);
        }
        told.entry(pgid).or_default().insert(pid);
    }
    told.retain(|&pgid, pids| {
        pids.retain(|p| ours.contains(p));
        if pids.is_empty() {
            super::guard::tell_guard(-pgid);
        }
        !pids.is_empty()
    });
}

/// Orphan `pid` was reaped: its group is untold once it holds no other told process.
fn forget(pid: i32) {
    let mut told = TOLD.lock().unwrap_or_else(|e| e.into_inner());
    let Some(pgid) = told.iter().find(|(_, t)| t.contains(&pid)).map(|(g, _)| *g) else {
        return;
    };
    let pids = told.get_mut(&pgid).expect("found above");
    pids.remove(&pid);
    if pids.is_empty() {
        told.remove(&pgid);
        super::guard::tell_guard(-pgid);
    }
}

/// sweep's orphans (children it did not start itself): each one that ended is reaped, and each
/// one that still runs without a mark of this sweep (its environment cleared or changed: it can
/// be told from no command's) is killed once no marked command runs (it may be a running one's).
fn orphans() {
    if !ADOPTING.load(Ordering::SeqCst) {
        return;
    }
    let me = std::process::id() as i32;
    let ours = format!("{TREE_ENV}={me}-").into_bytes();
    // Again while one killed leaves orphans of its own.
    for _ in 0..10 {
        let mut killed = Vec::new();
        {
            let _no_start = STARTING.write().unwrap_or_else(|e| e.into_inner());
            let own = OWN.lock().map(|o| o.clone()).unwrap_or_default();
            let live: Vec<Vec<u8>> = MARKS
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .map(|m| format!("{TREE_ENV}={m}").into_bytes())
                .collect();
            let made_up = |e: &[u8]| e.starts_with(&ours) && !live.iter().any(|m| m == e);
            for (pid, _, state) in processes_with_state()
                .into_iter()
                .filter(|&(p, pp, _)| pp == me && !own.contains(&p))
            {
                if state == 'Z' {
                    let mut status = 0;
                    // SAFETY: reaps one child that no owner waits for, without blocking.
                    if unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } == pid {
                        forget(pid);
                    }
                } else if (LIVE.load(Ordering::SeqCst) == 0
                    && !marked(pid, &|e: &[u8]| e.starts_with(&ours)))
                    || marked(pid, &made_up)
                {
                    // SAFETY: kill only sends a signal.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                    killed.push(pid);
                }
            }
        }
        if killed.is_empty() {
            break;
        }
        reap(killed);
    }
}

/// Waits (a second at most) for the killed processes to end, reaping those that are sweep's
/// children by then; one that is another's child (its parent killed too, not gone yet) becomes
/// sweep's when its parent ends.
fn reap(mut pids: Vec<i32>) {
    let until = Instant::now() + Duration::from_secs(1);
    while !pids.is_empty() && Instant::now() < until {
        pids.retain(|&p| {
            let mut status = 0;
            // SAFETY: waits for one pid without blocking.
            let r = unsafe { libc::waitpid(p, &mut status, libc::WNOHANG) };
            let ended = r == p || (r < 0 && !std::path::Path::new(&format!("/proc/{p}")).exists());
            if r == p {
                forget(p);
            }
            !ended
        });
        if !pids.is_empty() {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// For the guard, once sweep (pid `sweep`) is gone: kills every process that carries a mark of
/// that sweep, wherever it was reparented.
pub(super) fn kill_all_marked_by(sweep: i32) {
    let prefix = format!("{TREE_ENV}={sweep}-").into_bytes();
    let all = || processes().into_iter().map(|(p, _)| p).collect();
    kill_marked(all, &|e: &[u8]| e.starts_with(&prefix));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descendants_follow_the_parents_and_stop_at_the_root() {
        let procs = [(10, 1), (11, 10), (12, 11), (13, 1), (14, 13)];
        assert_eq!(descendants(10, &procs), HashSet::from([11, 12]));
        assert_eq!(descendants(12, &procs), HashSet::new());
    }
}
