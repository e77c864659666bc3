//! What a guest instance's store holds, and the `stave` host imports that
//! carry `stave.call(name, arg)` to the caller's [`Host`].
//!
//! The store must be `'static` and runs on its own thread (for its stack),
//! so the host stays with the caller: each call travels over a channel and
//! the caller answers it (`super::engine`). Charges are taken from the
//! call's fuel here, before and after the host answers, so a host call
//! costs the same whatever the host did to answer it.

use std::sync::mpsc::{Receiver, Sender};

use wasmtime::{Caller, Linker, StoreLimits, Trap};

use super::limits::Limits;
use super::memory;

/// The host functions a script can reach through `stave.call(name, arg)`.
/// `arg` is the argument's JSON text; the answer is a result's JSON text,
/// or a message the script sees as a thrown `Error`. An answer must be a
/// pure function of (name, arg, state): that is what keeps fuel and
/// results equal on every node.
pub trait Host {
    fn call(&mut self, name: &str, arg: &str) -> Result<String, String>;
}

/// A host with no functions: every `stave.call` throws.
pub struct NoHost;

impl Host for NoHost {
    fn call(&mut self, name: &str, _arg: &str) -> Result<String, String> {
        Err(format!("no host function {name:?} here"))
    }
}

/// One `stave.call`, on its way to the caller's [`Host`].
pub(super) struct HostRequest {
    pub name: String,
    pub arg: String,
}

/// The instance's end of the channel pair to the caller.
pub(super) struct HostLink {
    pub requests: Sender<HostRequest>,
    pub replies: Receiver<Result<String, String>>,
}

pub(super) struct State {
    pub limits: StoreLimits,
    pub link: HostLink,
    pub costs: Limits,
    /// The last host answer, until `host_result` copies it out.
    pub pending: Vec<u8>,
}

/// Takes `fuel` from the call, or traps as fuel exhaustion would.
fn charge(c: &mut Caller<'_, State>, fuel: u64) -> wasmtime::Result<()> {
    let left = c.get_fuel()?;
    if left < fuel {
        c.set_fuel(0)?;
        return Err(wasmtime::Error::from(Trap::OutOfFuel));
    }
    c.set_fuel(left - fuel)
}

pub(super) fn add_to(linker: &mut Linker<State>) -> wasmtime::Result<()> {
    linker.func_wrap("stave", "host_call", host_call)?;
    linker.func_wrap(
        "stave",
        "host_result",
        |mut c: Caller<'_, State>, dst: i32| {
            let bytes = std::mem::take(&mut c.data_mut().pending);
            memory::write(&mut c, dst, &bytes)
        },
    )?;
    Ok(())
}

fn host_call(
    mut c: Caller<'_, State>,
    name: i32,
    name_len: i32,
    arg: i32,
    arg_len: i32,
) -> wasmtime::Result<i32> {
    let costs = c.data().costs;
    let in_bytes = u64::from(name_len as u32) + u64::from(arg_len as u32);
    charge(
        &mut c,
        costs
            .host_call_fuel
            .saturating_add(costs.host_byte_fuel.saturating_mul(in_bytes)),
    )?;
    let reply = if in_bytes > u64::from(costs.max_host_bytes) {
        Err(format!(
            "the host call's name and argument are {in_bytes} bytes, over {}",
            costs.max_host_bytes
        ))
    } else {
        let name = String::from_utf8_lossy(&memory::read(&mut c, name, name_len)?).into_owned();
        let arg = String::from_utf8_lossy(&memory::read(&mut c, arg, arg_len)?).into_owned();
        ask(&c.data().link, name, arg)?
    };
    let cap = costs.max_host_bytes as usize;
    let reply = match reply {
        Ok(r) if r.len() > cap => Err(format!(
            "the host's answer is {} bytes, over {cap}",
            r.len()
        )),
        Err(m) if m.len() > cap => Err(truncate(m, cap)),
        other => other,
    };
    let (bytes, n) = match reply {
        Ok(r) => {
            let n = i32::try_from(r.len())?;
            (r.into_bytes(), n)
        }
        Err(m) => {
            let n = -i32::try_from(m.len())? - 1;
            (m.into_bytes(), n)
        }
    };
    charge(
        &mut c,
        costs.host_byte_fuel.saturating_mul(bytes.len() as u64),
    )?;
    c.data_mut().pending = bytes;
    Ok(n)
}

/// `m` cut to at most `cap` bytes, at a character boundary.
fn truncate(mut m: String, cap: usize) -> String {
    let mut end = cap;
    while !m.is_char_boundary(end) {
        end -= 1;
    }
    m.truncate(end);
    m
}

/// Sends the request to the caller's thread and waits for its answer.
fn ask(link: &HostLink, name: String, arg: String) -> wasmtime::Result<Result<String, String>> {
    link.requests
        .send(HostRequest { name, arg })
        .map_err(|_| wasmtime::format_err!("the script's caller went away"))?;
    link.replies
        .recv()
        .map_err(|_| wasmtime::format_err!("the script's caller went away"))
}
