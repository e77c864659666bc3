//! Bounds-checked access to the guest's linear memory. Every pointer and
//! length comes from the guest, so none is trusted.

use wasmtime::{Caller, Extern, Memory};

use super::store::State;

fn memory(caller: &mut Caller<'_, State>) -> wasmtime::Result<Memory> {
    match caller.get_export("memory") {
        Some(Extern::Memory(m)) => Ok(m),
        _ => Err(wasmtime::format_err!("the guest exports no memory")),
    }
}

/// `len` bytes at `ptr`, or an error when any of them lies outside memory.
pub(super) fn read(
    caller: &mut Caller<'_, State>,
    ptr: i32,
    len: i32,
) -> wasmtime::Result<Vec<u8>> {
    let mem = memory(caller)?;
    let start = ptr as u32 as usize;
    let end = start
        .checked_add(len as u32 as usize)
        .ok_or_else(|| wasmtime::format_err!("guest range {ptr}+{len} overflows"))?;
    mem.data(&*caller)
        .get(start..end)
        .map(<[u8]>::to_vec)
        .ok_or_else(|| wasmtime::format_err!("guest range {start}..{end} is outside memory"))
}

/// Writes `bytes` at `ptr`, or errors when they do not fit in memory.
pub(super) fn write(
    caller: &mut Caller<'_, State>,
    ptr: i32,
    bytes: &[u8],
) -> wasmtime::Result<()> {
    let mem = memory(caller)?;
    mem.write(&mut *caller, ptr as u32 as usize, bytes)
        .map_err(|e| wasmtime::format_err!("guest write of {} bytes at {ptr}: {e}", bytes.len()))
}

/// A little-endian u32 at `ptr`.
pub(super) fn read_u32(caller: &mut Caller<'_, State>, ptr: i32) -> wasmtime::Result<u32> {
    let b = read(caller, ptr, 4)?;
    let arr: [u8; 4] = b
        .as_slice()
        .try_into()
        .map_err(|_| wasmtime::format_err!("short read at {ptr}"))?;
    Ok(u32::from_le_bytes(arr))
}
