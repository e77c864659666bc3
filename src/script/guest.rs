//! The committed guest and the identity of the engine that runs it.

use sha2::{Digest, Sha256};

/// QuickJS-ng 0.16.2 for wasm32-wasi, built by guest/build.sh.
pub const GUEST_WASM: &[u8] = include_bytes!("../../guest/stave-guest.wasm");

/// The pinned wasmtime (Cargo.toml's `=48.0.8`; a test checks Cargo.lock).
pub const WASMTIME_VERSION: &str = "48.0.8";

/// The engine settings that can change a result or its fuel, as hashed
/// into the engine id. `super::engine::config` applies exactly these.
pub const ENGINE_SETTINGS: &str =
    "consume_fuel=on;nan_canonicalization=on;simd=off;relaxed_simd=off;\
threads=off;max_wasm_stack=67108864;wasi=stub(clock=0,writes=dropped,random=none)";

/// sha256 of the guest.
pub fn guest_sha256() -> [u8; 32] {
    Sha256::digest(GUEST_WASM).into()
}

/// `engine_id = sha256(guest ‖ wasmtime version ‖ settings)`: two nodes
/// with the same id give every script the same result and fuel.
pub fn engine_id() -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(GUEST_WASM);
    h.update(WASMTIME_VERSION.as_bytes());
    h.update(ENGINE_SETTINGS.as_bytes());
    h.finalize().into()
}
