//! The operating-system side: CPU pinning, peak RSS, and C zlib loaded at run time.

#![allow(unsafe_code)] // CPU pinning and C zlib: system calls and a dlopen'd library

use std::ffi::c_void;

/// Pins the calling thread (and the threads it starts afterwards) to `cpus`.
pub fn pin_current_thread(cpus: &[usize]) -> Result<(), String> {
    // SAFETY: cpu_set_t is plain data; zeroed is its empty state.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        if c >= libc::CPU_SETSIZE as usize {
            return Err(format!("cpu {c} out of range"));
        }
        // SAFETY: `c` was checked against the set's capacity just above.
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    // SAFETY: pid 0 is the calling thread; `set` lives across the call.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc != 0 {
        return Err(format!(
            "sched_setaffinity({cpus:?}): {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// Number of CPUs online.
pub fn cpus_online() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// `VmHWM` (peak resident set) of a process in KiB, from `/proc/PID/status`.
pub fn peak_rss_kib(pid: Option<u32>) -> Option<u64> {
    status_kib(pid, "VmHWM:")
}

/// `VmRSS` (current resident set) of a process in KiB.
pub fn rss_kib(pid: Option<u32>) -> Option<u64> {
    status_kib(pid, "VmRSS:")
}

fn status_kib(pid: Option<u32>, field: &str) -> Option<u64> {
    let path = match pid {
        Some(p) => format!("/proc/{p}/status"),
        None => "/proc/self/status".into(),
    };
    let s = std::fs::read_to_string(path).ok()?;
    s.lines()
        .find(|l| l.starts_with(field))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Resets this process's peak RSS to its current RSS (`/proc/self/clear_refs`, Linux ≥ 4.0).
pub fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

type CompressBound = unsafe extern "C" fn(libc::c_ulong) -> libc::c_ulong;
type Compress2 =
    unsafe extern "C" fn(*mut u8, *mut libc::c_ulong, *const u8, libc::c_ulong, libc::c_int) -> i32;
type Uncompress =
    unsafe extern "C" fn(*mut u8, *mut libc::c_ulong, *const u8, libc::c_ulong) -> i32;

/// The system's C zlib (`libz.so.1`), opened with `dlopen` so that the tool still runs
/// without it (the bulk floor then says it is missing).
#[derive(Clone, Copy)]
pub struct CZlib {
    bound: CompressBound,
    compress2: Compress2,
    uncompress: Uncompress,
}

impl CZlib {
    /// Loads `libz.so.1`.
    pub fn load() -> Result<CZlib, String> {
        // SAFETY: dlopen/dlsym with NUL-terminated names; the handle is never closed, so the
        // function pointers stay valid for the life of the process.
        unsafe {
            let h = libc::dlopen(c"libz.so.1".as_ptr(), libc::RTLD_NOW);
            if h.is_null() {
                return Err("C zlib (libz.so.1) not found: apt-get install zlib1g".into());
            }
            let sym = |name: &std::ffi::CStr| -> Result<*mut c_void, String> {
                let p = libc::dlsym(h, name.as_ptr());
                if p.is_null() {
                    Err(format!("libz.so.1 lacks {name:?}"))
                } else {
                    Ok(p)
                }
            };
            Ok(CZlib {
                bound: std::mem::transmute::<*mut c_void, CompressBound>(sym(c"compressBound")?),
                compress2: std::mem::transmute::<*mut c_void, Compress2>(sym(c"compress2")?),
                uncompress: std::mem::transmute::<*mut c_void, Uncompress>(sym(c"uncompress")?),
            })
        }
    }

    /// zlib stream of `data` at `level` (-1: zlib's default, which is 6).
    pub fn compress(&self, data: &[u8], level: i32) -> Vec<u8> {
        // SAFETY: compressBound is a pure function.
        let cap = unsafe { (self.bound)(data.len() as libc::c_ulong) };
        let mut out = vec![0u8; cap as usize];
        let mut len = cap;
        // SAFETY: `out` has `len` writable bytes; `data` is valid for its length.
        let rc = unsafe {
            (self.compress2)(
                out.as_mut_ptr(),
                &mut len,
                data.as_ptr(),
                data.len() as _,
                level,
            )
        };
        assert_eq!(rc, 0, "compress2 failed");
        out.truncate(len as usize);
        out
    }

    /// Inflates a zlib stream into `out` (whose length is the expected size); false on error.
    pub fn uncompress_into(&self, data: &[u8], out: &mut [u8]) -> bool {
        let mut len = out.len() as libc::c_ulong;
        // SAFETY: `out` has `len` writable bytes; `data` is valid for its length.
        let rc = unsafe {
            (self.uncompress)(out.as_mut_ptr(), &mut len, data.as_ptr(), data.len() as _)
        };
        rc == 0 && len as usize == out.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn czlib_roundtrip() {
        let Ok(z) = CZlib::load() else { return };
        let v = crate::work::value_bytes(30_800);
        let c = z.compress(&v, -1);
        assert!(c.len() < v.len() / 4);
        let mut out = vec![0; v.len()];
        assert!(z.uncompress_into(&c, &mut out));
        assert_eq!(out, v);
    }
}
