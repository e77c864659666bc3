//! The engine's limits. Each is a genesis param once scripts are deployed
//! on chain; the defaults are BRIEF §8's starting values.

/// The bounds of one script call. Every field feeds the result: two nodes
/// with different limits can disagree, so they come from consensus params.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Largest source accepted, in bytes.
    pub max_source_bytes: u32,
    /// The guest's whole linear memory (C stack, data and heap), in bytes.
    /// QuickJS's own allocation limit is the same figure.
    pub max_memory_bytes: u32,
    /// Fuel for the call itself: compiling and running the source, parsing
    /// the input, the function, and serialising its result.
    pub fuel_per_call: u64,
    /// QuickJS's stack limit, in bytes of the C stack in linear memory.
    pub js_stack_bytes: u32,
    /// Largest canonical-JSON input, in bytes.
    pub max_input_bytes: u32,
    /// Largest result (or error message) read back, in bytes.
    pub max_output_bytes: u32,
    /// What one `stave.call` costs in fuel before its bytes.
    pub host_call_fuel: u64,
    /// What each byte of a host call's name, argument and result costs.
    pub host_byte_fuel: u64,
    /// Largest argument or result of one host call, in bytes.
    pub max_host_bytes: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_source_bytes: 64 * 1024,
            max_memory_bytes: 32 * 1024 * 1024,
            fuel_per_call: 50_000_000,
            js_stack_bytes: 256 * 1024,
            max_input_bytes: 1024 * 1024,
            max_output_bytes: 64 * 1024,
            host_call_fuel: 20_000,
            host_byte_fuel: 20,
            max_host_bytes: 64 * 1024,
        }
    }
}

impl Limits {
    /// Rejects limits the guest cannot run under.
    pub fn check(&self) -> Result<(), String> {
        let most_stack = GUEST_C_STACK_BYTES / 2;
        if self.js_stack_bytes == 0 || self.js_stack_bytes > most_stack {
            return Err(format!(
                "js_stack_bytes {} must be between 1 and {most_stack}",
                self.js_stack_bytes
            ));
        }
        if self.max_memory_bytes > i32::MAX as u32 {
            return Err(format!(
                "max_memory_bytes {} is over {}",
                self.max_memory_bytes,
                i32::MAX
            ));
        }
        Ok(())
    }
}

/// The guest's C stack (guest/build.sh links it with `-z stack-size`):
/// QuickJS's limit must stay well below it, so deep recursion always ends
/// in QuickJS's `RangeError` rather than a trap.
pub const GUEST_C_STACK_BYTES: u32 = 1024 * 1024;
