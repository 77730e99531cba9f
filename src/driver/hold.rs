//! Start-up without contention, and the GPU's rest kept.
//!
//! Every point is a new process, and a process that loads the CUDA driver while no other process
//! holds it pays ~100 ms for it; with two GPUs measuring at once, each program's driver load, context
//! creation and even its samples wait on the other GPU's start-up (on two H100s of one host, 128
//! points of the thread sweep: start-up 323 ms instead of 195, measuring 467 ms instead of 360;
//! docs/measurements.md, "Two GPUs"). [`DriverHold`] keeps the driver loaded and an idle primary
//! context on each GPU of the sweep for the whole run, from sweep's own process: programs then
//! start in ~100-130 ms on one or two GPUs and measure as fast beside each other as alone.
//!
//! That start-up is also the GPU's rest between two programs' measurements (~250 ms), and a shorter
//! rest brings a slow state of the GPU back (shared-memory grid stores 6-8 % low; docs/measurements.md,
//! "A slow state of the GPU"). [`Rest`] keeps it: a program's gate opens no sooner than
//! [`REST`] after the previous program on that GPU exited, so the GPU idles as long as before.
use std::ffi::{c_int, c_uint, c_void, CStr};
use std::time::{Duration, Instant};

/// From a program's exit to the next one's gate: with the driver held, the previous program's
/// teardown (~30 ms) plus this keeps the GPU's idle between two measurements at the ~250-260 ms it
/// had when each program loaded the driver itself.
pub const REST: Duration = Duration::from_millis(230);

/// What a run on `gpus` holds and how long each GPU rests: the driver and a context on every GPU,
/// with [`REST`] between programs, when the programs start one after another (`prestart` 0) and
/// `SWEEP_HOLD` is not `0`; otherwise nothing and no rest (each program's own start-up is the
/// rest, as before). Where the driver cannot be held (no libcuda, a GPU it does not list) the run
/// goes on as before.
pub fn for_run(gpus: &[crate::store::GpuState], prestart: usize) -> (Option<DriverHold>, Duration) {
    let off = std::env::var("SWEEP_HOLD").is_ok_and(|v| v == "0");
    if gpus.is_empty() || prestart > 0 || off {
        return (None, Duration::ZERO);
    }
    let uuids: Vec<&str> = gpus.iter().map(|g| g.uuid.as_str()).collect();
    match DriverHold::new(&uuids) {
        Ok(hold) => (Some(hold), REST),
        Err(_) => (None, Duration::ZERO),
    }
}

/// The CUDA driver loaded by sweep's own process and a primary context retained on each GPU of the
/// sweep, released when dropped. Where there is no driver (a host-program sweep, a machine without
/// a GPU) it holds nothing and says why.
pub struct DriverHold {
    release: Option<unsafe extern "C" fn(c_int) -> c_int>,
    devices: Vec<c_int>,
}

/// Why the driver could not be held.
#[derive(Debug, thiserror::Error)]
pub enum HoldError {
    #[error("libcuda.so.1 not found")]
    NoDriver,
    #[error("`{0}` missing from libcuda")]
    Missing(&'static str),
    #[error("`{0}` failed")]
    Failed(&'static str),
    #[error("held {held} of {wanted} GPUs (no CUDA device with the other UUIDs)")]
    Gpus { held: usize, wanted: usize },
}

type Init = unsafe extern "C" fn(c_uint) -> c_int;
type Count = unsafe extern "C" fn(*mut c_int) -> c_int;
type Get = unsafe extern "C" fn(*mut c_int, c_int) -> c_int;
type Uuid = unsafe extern "C" fn(*mut [u8; 16], c_int) -> c_int;
type Retain = unsafe extern "C" fn(*mut *mut c_void, c_int) -> c_int;
type Release = unsafe extern "C" fn(c_int) -> c_int;

impl DriverHold {
    /// Holds the GPUs whose `nvidia-smi` UUIDs (`GPU-xxxxxxxx-xxxx-...`) are given. Err says why
    /// nothing could be held (the sweep then runs as before, each program loading the driver).
    pub fn new(uuids: &[&str]) -> Result<DriverHold, HoldError> {
        let mut hold = DriverHold {
            release: None,
            devices: Vec::new(),
        };
        if uuids.is_empty() {
            return Ok(hold);
        }
        // SAFETY: dlopen/dlsym with NUL-terminated names; each symbol is cast to the signature the
        // CUDA driver API documents for it, and called with valid pointers to locals.
        unsafe {
            let lib = libc::dlopen(c"libcuda.so.1".as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL);
            if lib.is_null() {
                return Err(HoldError::NoDriver);
            }
            // The library stays loaded until the process exits: unloading a CUDA driver is not
            // supported while any of its state may remain.
            let sym = |name: &'static CStr| {
                let p = libc::dlsym(lib, name.as_ptr());
                (!p.is_null())
                    .then_some(p)
                    .ok_or(HoldError::Missing(name.to_str().unwrap_or("?")))
            };
            let init: Init = std::mem::transmute(sym(c"cuInit")?);
            let count: Count = std::mem::transmute(sym(c"cuDeviceGetCount")?);
            let get: Get = std::mem::transmute(sym(c"cuDeviceGet")?);
            let uuid: Uuid = std::mem::transmute(sym(c"cuDeviceGetUuid")?);
            let retain: Retain = std::mem::transmute(sym(c"cuDevicePrimaryCtxRetain")?);
            hold.release = Some(std::mem::transmute::<*mut c_void, Release>(sym(
                c"cuDevicePrimaryCtxRelease_v2",
            )?));
            if init(0) != 0 {
                return Err(HoldError::Failed("cuInit"));
            }
            let mut n: c_int = 0;
            if count(&mut n) != 0 {
                return Err(HoldError::Failed("cuDeviceGetCount"));
            }
            for ordinal in 0..n {
                let (mut dev, mut id) = (0 as c_int, [0u8; 16]);
                if get(&mut dev, ordinal) != 0 || uuid(&mut id, dev) != 0 {
                    continue;
                }
                if !uuids
                    .iter()
                    .any(|u| u.eq_ignore_ascii_case(&uuid_text(&id)))
                {
                    continue;
                }
                let mut ctx = std::ptr::null_mut();
                if retain(&mut ctx, dev) == 0 {
                    hold.devices.push(dev);
                }
            }
        }
        if hold.devices.len() < uuids.len() {
            return Err(HoldError::Gpus {
                held: hold.devices.len(),
                wanted: uuids.len(),
            });
        }
        Ok(hold)
    }

    /// How many GPUs hold a context of sweep's.
    #[cfg(test)]
    pub fn held(&self) -> usize {
        self.devices.len()
    }
}

impl Drop for DriverHold {
    fn drop(&mut self) {
        if let Some(release) = self.release {
            for &dev in &self.devices {
                // SAFETY: the device was retained by `new` with the same driver.
                unsafe { release(dev) };
            }
        }
    }
}

/// `GPU-` and the 16 bytes as 8-4-4-4-12 hex digits, as `nvidia-smi` prints a UUID.
fn uuid_text(b: &[u8; 16]) -> String {
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "GPU-{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// The GPU's rest: when its last program exited, and how long to wait before the next gate opens.
pub struct Rest {
    last_exit: Option<Instant>,
    rest: Duration,
}

impl Rest {
    pub fn new(rest: Duration) -> Rest {
        Rest {
            last_exit: None,
            rest,
        }
    }

    /// A program on this GPU exited (a point, a control re-run, a profile or power pass).
    pub fn exited(&mut self) {
        self.last_exit = Some(Instant::now());
    }

    /// Sleeps until the GPU has rested since the last exit (at once when it has, or none yet).
    pub fn wait(&self) {
        if let Some(t) = self.last_exit {
            let left = self.rest.saturating_sub(t.elapsed());
            if !left.is_zero() {
                std::thread::sleep(left);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_uuid_reads_as_nvidia_smi_prints_it() {
        let b = [
            0x8f, 0x0a, 0x1b, 0x2c, 0x3d, 0x4e, 0x5f, 0x60, 0x71, 0x82, 0x93, 0xa4, 0xb5, 0xc6,
            0xd7, 0xe8,
        ];
        assert_eq!(uuid_text(&b), "GPU-8f0a1b2c-3d4e-5f60-7182-93a4b5c6d7e8");
    }

    #[test]
    fn the_gate_waits_out_the_rest_after_an_exit_and_not_before_any() {
        let mut r = Rest::new(Duration::from_millis(120));
        let t = Instant::now();
        r.wait();
        assert!(
            t.elapsed() < Duration::from_millis(60),
            "no exit yet: no wait"
        );
        r.exited();
        let t = Instant::now();
        r.wait();
        assert!(
            t.elapsed() >= Duration::from_millis(115),
            "{:?}",
            t.elapsed()
        );
        std::thread::sleep(Duration::from_millis(130));
        let t = Instant::now();
        r.wait();
        assert!(t.elapsed() < Duration::from_millis(60), "rested already");
    }

    #[test]
    fn nothing_to_hold_holds_nothing_and_a_missing_gpu_is_said() {
        assert_eq!(DriverHold::new(&[]).unwrap().held(), 0);
        // Here (CI) there is no driver, or no GPU with this UUID: either way an Err that says why.
        let why = DriverHold::new(&["GPU-00000000-0000-0000-0000-000000000000"]).err();
        assert!(why.is_some_and(|w| !w.to_string().is_empty()));
    }
}
