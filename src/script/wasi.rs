//! The WASI imports the guest links against, stubbed: the clock reads 0,
//! writes are dropped (reported as written), nothing else exists. No
//! randomness and no I/O reach a script.
//!
//! The clock must stay constant, not merely unseen by scripts: QuickJS
//! seeds its Map hash from it, so a moving clock would move fuel.

use wasmtime::{Caller, Linker};

use super::memory;
use super::store::State;

const MODULE: &str = "wasi_snapshot_preview1";
const ERRNO_SUCCESS: i32 = 0;
const ERRNO_BADF: i32 = 8;
const ERRNO_FAULT: i32 = 21;
const ERRNO_INVAL: i32 = 28;
/// More iovecs than one fd_write of wasi-libc's stdio ever passes.
const MAX_IOVS: i32 = 64;

pub(super) fn add_to(linker: &mut Linker<State>) -> wasmtime::Result<()> {
    linker.func_wrap(
        MODULE,
        "clock_time_get",
        |mut c: Caller<'_, State>, _id: i32, _precision: i64, out: i32| match memory::write(
            &mut c,
            out,
            &0u64.to_le_bytes(),
        ) {
            Ok(()) => ERRNO_SUCCESS,
            Err(_) => ERRNO_FAULT,
        },
    )?;
    linker.func_wrap(
        MODULE,
        "fd_write",
        |mut c: Caller<'_, State>, _fd: i32, iovs: i32, n: i32, written: i32| {
            fd_write(&mut c, iovs, n, written)
        },
    )?;
    linker.func_wrap(MODULE, "fd_close", |_: Caller<'_, State>, _fd: i32| {
        ERRNO_BADF
    })?;
    linker.func_wrap(
        MODULE,
        "fd_fdstat_get",
        |_: Caller<'_, State>, _fd: i32, _out: i32| ERRNO_BADF,
    )?;
    linker.func_wrap(
        MODULE,
        "fd_seek",
        |_: Caller<'_, State>, _fd: i32, _off: i64, _whence: i32, _out: i32| ERRNO_BADF,
    )?;
    Ok(())
}

/// Drops the bytes and reports them all written.
fn fd_write(c: &mut Caller<'_, State>, iovs: i32, n: i32, written: i32) -> i32 {
    if !(0..=MAX_IOVS).contains(&n) {
        return ERRNO_INVAL;
    }
    let mut total: u32 = 0;
    for i in 0..n {
        let Some(len_at) = iovs.checked_add(i * 8 + 4) else {
            return ERRNO_FAULT;
        };
        match memory::read_u32(c, len_at) {
            Ok(len) => total = total.saturating_add(len),
            Err(_) => return ERRNO_FAULT,
        }
    }
    match memory::write(c, written, &total.to_le_bytes()) {
        Ok(()) => ERRNO_SUCCESS,
        Err(_) => ERRNO_FAULT,
    }
}
