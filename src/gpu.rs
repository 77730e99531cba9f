//! The GPUs of this host (through `nvidia-smi`) and the per-GPU lock that keeps two sweeps
//! from measuring on one GPU at once.

use crate::exec;
use crate::store::GpuState;
use std::fs::TryLockError;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

const FIELDS: &str =
    "index,name,uuid,driver_version,compute_cap,clocks.sm,clocks.mem,temperature.gpu";

/// Every GPU `nvidia-smi` sees, or an empty list when there is none (or no nvidia-smi).
pub fn list() -> Vec<GpuState> {
    exec::query(
        "nvidia-smi",
        &[
            &format!("--query-gpu={FIELDS}"),
            "--format=csv,noheader,nounits",
        ],
    )
    .map(|out| parse_smi(&out))
    .unwrap_or_default()
}

pub fn parse_smi(out: &str) -> Vec<GpuState> {
    out.lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| {
            let f: Vec<String> = l.split(',').map(|s| s.trim().to_string()).collect();
            (f.len() == 8).then(|| GpuState {
                index: f[0].clone(),
                name: f[1].clone(),
                uuid: f[2].clone(),
                driver: f[3].clone(),
                compute_cap: f[4].clone(),
                sm_clock_mhz: f[5].clone(),
                mem_clock_mhz: f[6].clone(),
                temperature_c: f[7].clone(),
            })
        })
        .collect()
}

/// `9.0` -> `sm_90`.
pub fn arch_of(gpu: &GpuState) -> Option<String> {
    let (major, minor) = gpu.compute_cap.split_once('.')?;
    Some(format!("sm_{}{}", major.trim(), minor.trim()))
}

/// `--gpus`: which GPUs a run uses, parsed once on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GpuChoice {
    /// `--gpus all`: every GPU this process may see.
    All,
    /// `--gpus 0,2`: these indices or UUIDs, in this order.
    List(Vec<String>),
}

impl std::str::FromStr for GpuChoice {
    type Err = std::convert::Infallible;

    /// Never fails: a GPU that is not there is found out by [`select`], which can say which are.
    fn from_str(s: &str) -> Result<GpuChoice, Self::Err> {
        Ok(match s.trim() {
            "all" => GpuChoice::All,
            list => GpuChoice::List(list.split(',').map(|w| w.trim().to_string()).collect()),
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SelectError {
    #[error("gpu `{gpu}` is not visible (hint: visible GPUs: {})", visible.join(", "))]
    NotVisible { gpu: String, visible: Vec<String> },
}

/// The GPUs a run may use: `--gpus all`, `--gpus 0,2`, or (None) the first one this process may
/// see (the first entry of `CUDA_VISIBLE_DEVICES` when it is set, as under Slurm).
pub fn select(all: &[GpuState], wanted: Option<&GpuChoice>) -> Result<Vec<GpuState>, SelectError> {
    let visible = std::env::var("CUDA_VISIBLE_DEVICES").ok();
    select_among(all, wanted, visible.as_deref())
}

/// [`select`] with `visible` for the value of `CUDA_VISIBLE_DEVICES` (None: not set).
fn select_among(
    all: &[GpuState],
    wanted: Option<&GpuChoice>,
    visible: Option<&str>,
) -> Result<Vec<GpuState>, SelectError> {
    let visible: Vec<String> = visible
        .filter(|v| !v.trim().is_empty())
        .map(|v| v.split(',').map(|s| s.trim().to_string()).collect())
        .unwrap_or_default();
    let allowed: Vec<GpuState> = if visible.is_empty() {
        all.to_vec()
    } else {
        visible
            .iter()
            .filter_map(|v| all.iter().find(|g| &g.index == v || &g.uuid == v).cloned())
            .collect()
    };
    match wanted {
        None => Ok(allowed.into_iter().take(1).collect()),
        Some(GpuChoice::All) => Ok(allowed),
        Some(GpuChoice::List(list)) => list
            .iter()
            .map(|w| {
                allowed
                    .iter()
                    .find(|g| &g.index == w || &g.uuid == w)
                    .cloned()
                    .ok_or_else(|| SelectError::NotVisible {
                        gpu: w.clone(),
                        visible: allowed.iter().map(|g| g.index.clone()).collect(),
                    })
            })
            .collect(),
    }
}

/// An exclusive lock file (a GPU's, or a run folder's), held until dropped (or the process dies:
/// the kernel frees it). The file names its holder.
#[derive(Debug)]
pub struct HeldLock {
    _file: std::fs::File,
    pub path: PathBuf,
    /// A second lock held with this one: a run folder's own (see [`HeldLock::with`]).
    _also: Option<std::fs::File>,
    /// A GPU lock's name in the abstract socket namespace (see [`lock`]).
    _name: Option<std::os::unix::net::UnixListener>,
}

impl HeldLock {
    /// This lock, holding `also` (an open file or folder already locked) until it is dropped.
    pub fn with(mut self, also: std::fs::File) -> Self {
        self._also = Some(also);
        self
    }
}

/// Why [`lock`] or [`lock_file`] did not take a lock.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// The lock folder or file could not be made, opened or locked (permissions, a full disk,
    /// ...).
    #[error("cannot open lock `{path}`: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Another process holds it: who, as that process wrote it (empty when it wrote nothing).
    #[error("`{path}` is held by {holder}")]
    Held { path: PathBuf, holder: String },
}

pub fn lock_dir() -> PathBuf {
    std::env::var_os("SWEEP_LOCK_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("sweep-locks"))
}

/// Takes the lock of GPU `key`. When another sweep holds it: wait (`wait`) or return who holds it.
///
/// Beside the lock file, a sweep holds a name in Linux's abstract socket namespace made from the
/// lock file's path: no `rm` removes that name, and the kernel frees it when the process dies. A
/// lock file removed by hand while a sweep runs (a user taking it for a stale lock) let a second
/// sweep make a new file, lock it and measure on the same GPU at the same time (review 11a H2).
/// Where no such name can be bound (another system), the file alone holds, as before.
pub fn lock(dir: &Path, key: &str, holder: &str, wait: bool) -> Result<HeldLock, LockError> {
    std::fs::create_dir_all(dir).map_err(|source| LockError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let path = dir.join(format!("gpu-{}.lock", key.replace(['/', ' '], "_")));
    let name = loop {
        match hold_name(&path) {
            Ok(name) => break name,
            Err(()) if wait => std::thread::sleep(std::time::Duration::from_millis(500)),
            Err(()) => {
                let who = std::fs::read_to_string(&path).unwrap_or_default();
                let who = match who.trim() {
                    "" => "a sweep whose lock file was removed".to_string(),
                    who => who.to_string(),
                };
                return Err(LockError::Held { path, holder: who });
            }
        }
    };
    let mut held = lock_file(path, holder, wait)?;
    held._name = name;
    Ok(held)
}

/// Binds the abstract socket name of lock file `path`: `Ok(None)` where this system has no such
/// names, `Err(())` while another process holds it.
fn hold_name(path: &Path) -> Result<Option<std::os::unix::net::UnixListener>, ()> {
    #[cfg(target_os = "linux")]
    {
        use sha2::{Digest, Sha256};
        use std::os::linux::net::SocketAddrExt;
        use std::os::unix::net::{SocketAddr, UnixListener};
        let dir = path.parent().unwrap_or(Path::new("."));
        let full = std::fs::canonicalize(dir)
            .unwrap_or_else(|_| dir.to_path_buf())
            .join(path.file_name().unwrap_or_default());
        let hash = Sha256::digest(full.as_os_str().as_encoded_bytes());
        let hex: String = hash[..16].iter().map(|b| format!("{b:02x}")).collect();
        let Ok(addr) = SocketAddr::from_abstract_name(format!("sweep-lock-{hex}")) else {
            return Ok(None);
        };
        match UnixListener::bind_addr(&addr) {
            Ok(l) => Ok(Some(l)),
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => Err(()),
            Err(_) => Ok(None),
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = path;
        Ok(None)
    }
}

/// Takes an exclusive flock on `path` (created if missing) and writes `holder` into it. When
/// another process holds it: wait (`wait`) or say who.
pub fn lock_file(path: PathBuf, holder: &str, wait: bool) -> Result<HeldLock, LockError> {
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|source| LockError::Io {
            path: path.clone(),
            source,
        })?;
    // std's lock and try_lock are flock(2) on Linux, the lock that other sweeps take. Only
    // WouldBlock means another process holds it; any other failure is an I/O error.
    let taken = if wait {
        file.lock().map_err(TryLockError::Error)
    } else {
        file.try_lock()
    };
    match taken {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            let mut who = String::new();
            let _ = file.read_to_string(&mut who);
            return Err(LockError::Held {
                path,
                holder: who.trim().to_string(),
            });
        }
        Err(TryLockError::Error(source)) => return Err(LockError::Io { path, source }),
    }
    let _ = file.set_len(0);
    let _ = file.rewind();
    let _ = write!(file, "{holder}");
    Ok(HeldLock {
        _file: file,
        path,
        _also: None,
        _name: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_nvidia_smi() {
        let gpus =
            parse_smi("0, NVIDIA H100 80GB HBM3, GPU-abc, 580.159.04, 9.0, 1980, 2619, 34\n");
        assert_eq!(gpus[0].name, "NVIDIA H100 80GB HBM3");
        assert_eq!(arch_of(&gpus[0]).as_deref(), Some("sm_90"));
    }

    #[test]
    fn second_lock_is_refused_and_names_the_holder() {
        let tmp = tempfile::tempdir().unwrap();
        let first = lock(tmp.path(), "GPU-abc", "pid 1 run output/x", false).unwrap();
        let second = lock(tmp.path(), "GPU-abc", "pid 2", false).unwrap_err();
        assert!(
            matches!(&second, LockError::Held { holder, .. } if holder == "pid 1 run output/x"),
            "{second:?}"
        );
        drop(first);
        assert!(lock(tmp.path(), "GPU-abc", "pid 2", false).is_ok());
    }

    #[test]
    fn a_lock_that_cannot_be_opened_is_an_io_error_not_a_holder() {
        // Paths no user can open as a lock file, root included: a folder where the lock file
        // goes, and a lock folder under a regular file.
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join("gpu-GPU-abc.lock")).unwrap();
        let err = lock(tmp.path(), "GPU-abc", "pid 2", false).unwrap_err();
        assert!(
            matches!(&err, LockError::Io { source, .. } if source.raw_os_error() == Some(libc::EISDIR)),
            "{err:?}"
        );
        assert!(err.to_string().starts_with("cannot open lock `"), "{err}");
        let file = tmp.path().join("plain");
        std::fs::write(&file, "").unwrap();
        let err = lock(&file.join("locks"), "GPU-abc", "pid 2", false).unwrap_err();
        assert!(
            matches!(&err, LockError::Io { path, .. } if path == &file.join("locks")),
            "{err:?}"
        );
    }

    #[test]
    fn select_by_index_and_all() {
        let gpus = parse_smi("0, A, GPU-a, 1, 9.0, 1, 1, 1\n1, B, GPU-b, 1, 9.0, 1, 1, 1\n");
        // Whatever this host's CUDA_VISIBLE_DEVICES: unset, then set as Slurm sets it.
        let select = |wanted: Option<&GpuChoice>| select_among(&gpus, wanted, None);
        let choice = |s: &str| s.parse::<GpuChoice>().unwrap();
        assert_eq!(select(None).unwrap().len(), 1);
        assert_eq!(select(Some(&choice(" all"))).unwrap().len(), 2);
        assert_eq!(select(Some(&choice("1"))).unwrap()[0].uuid, "GPU-b");
        let two = select(Some(&choice("1, GPU-a"))).unwrap();
        assert_eq!(
            (two[0].uuid.as_str(), two[1].uuid.as_str()),
            ("GPU-b", "GPU-a")
        );
        assert_eq!(
            select(Some(&choice("3"))).unwrap_err().to_string(),
            "gpu `3` is not visible (hint: visible GPUs: 0, 1)"
        );
        let only_b = |wanted: Option<&GpuChoice>| select_among(&gpus, wanted, Some("GPU-b"));
        assert_eq!(only_b(None).unwrap()[0].uuid, "GPU-b");
        assert_eq!(only_b(Some(&choice("all"))).unwrap().len(), 1);
        assert_eq!(
            only_b(Some(&choice("0"))).unwrap_err().to_string(),
            "gpu `0` is not visible (hint: visible GPUs: 1)"
        );
        assert_eq!(
            select_among(&gpus, None, Some(" ")).unwrap()[0].uuid,
            "GPU-a"
        );
    }
}
