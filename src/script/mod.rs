//! The script engine (issue 25): JavaScript for PROGRAMMABLE policies and
//! proofs, with the same result and the same fuel on every node.
//!
//! QuickJS-ng, compiled to wasm32-wasi (`guest/`, built reproducibly by
//! `guest/build.sh` and committed with its sha256), runs in wasmtime with
//! fuel metering:
//!
//! ```text
//!  Call{source, function, input}        (json: canonical, integers only)
//!        │ check: size, UTF-8, input     (no instance yet)
//!        ▼
//!  engine ── fresh instance per call ── guest (QuickJS-ng, wasm32-wasi)
//!    │  setup fuel: _initialize, stave_init, inputs copied in
//!    │  call fuel:  compile + run + function + JSON.stringify
//!    │  stave.call(name, arg) ──channel──▶ caller's Host (charged per call/byte)
//!    ▼
//!  Outcome{result: canonical JSON | Failure, fuel}
//! ```
//!
//! Nothing a script sees depends on the node: the clock, randomness and
//! I/O are gone (`wasi` stubs, the guest's prelude), NaNs are canonical,
//! SIMD is off, and QuickJS's stack limit lives in linear memory. Fuel
//! counts wasm instructions of the pinned guest under the pinned wasmtime,
//! so the [`engine_id`] names everything a result depends on.

mod engine;
mod guest;
pub mod json;
mod limits;
mod memory;
mod outcome;
mod store;
mod wasi;

pub use engine::{engine, Call, Engine, EngineError, Instantiation};
pub use guest::{engine_id, guest_sha256, ENGINE_SETTINGS, GUEST_WASM, WASMTIME_VERSION};
pub use limits::{Limits, GUEST_C_STACK_BYTES};
pub use outcome::{Failure, Outcome};
pub use store::{Host, NoHost};
