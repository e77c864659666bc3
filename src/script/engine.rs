//! The engine: the guest compiled once, and one fresh instance per call.

use std::sync::mpsc;
use std::sync::OnceLock;

use wasmtime::{
    Config, Instance, InstancePre, Linker, Module, Store, StoreLimitsBuilder, Trap, TypedFunc,
};

use super::guest::GUEST_WASM;
use super::json;
use super::limits::Limits;
use super::outcome::{Failure, Outcome};
use super::store::{self, Host, HostLink, State};
use super::wasi;

/// wasmtime's limit on the native stack a call may use. QuickJS's limit
/// (in linear memory) must end deep recursion long before this, for every
/// shape: the parser's nesting of parentheses takes more than 16 bytes of
/// native stack per byte of linear-memory stack, so 8 MiB was not enough
/// at the largest QuickJS stack the limits allow (512 KiB); 64 MiB leaves
/// a ratio of 128 (`tests/script_golden_vectors.rs` runs every shape there).
const MAX_WASM_STACK: usize = 64 << 20;
/// The call thread's stack: wasmtime's limit plus room for the host side.
/// Only the pages a call touches are ever committed.
const THREAD_STACK: usize = MAX_WASM_STACK + (4 << 20);
/// Fuel for instantiation, `_initialize`, `stave_init` and copying the
/// inputs in: bounded, never charged (gas has a fixed charge for it).
const SETUP_FUEL: u64 = 1_000_000_000;
/// Error messages read back from the guest are cut to this many bytes.
const MAX_MESSAGE: usize = 1024;

/// One call: run `source`, then its global `function` on `input`.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    pub source: &'a [u8],
    pub function: &'a str,
    pub input: &'a serde_json::Value,
    /// Only compile the source (deploy's check): no function is called.
    pub compile_only: bool,
}

/// Whether instances come from the pre-linked [`InstancePre`] (the fast
/// path) or are linked afresh. Either way fuel and results are the same;
/// the golden tests run both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Instantiation {
    PreLinked,
    Fresh,
}

/// The compiled guest. Build it once ([`engine`]); compiling takes about
/// a second and cannot be cached on disk without `unsafe`.
pub struct Engine {
    engine: wasmtime::Engine,
    module: Module,
    linker: Linker<State>,
    pre: InstancePre<State>,
}

/// The settings `guest::ENGINE_SETTINGS` names, and nothing else.
/// Threads are off because the crate is built without wasmtime's
/// `threads` feature.
fn config() -> Config {
    let mut c = Config::new();
    c.consume_fuel(true)
        .cranelift_nan_canonicalization(true)
        .wasm_simd(false)
        .wasm_relaxed_simd(false)
        .max_wasm_stack(MAX_WASM_STACK)
        // Unused (calls are synchronous), but Engine::new refuses a
        // max_wasm_stack above it.
        .async_stack_size(MAX_WASM_STACK);
    c
}

/// Why the engine could not be built: the node's fault, never a script's.
#[derive(Debug, Clone, thiserror::Error)]
#[error("script engine: {step}: {message}")]
pub struct EngineError {
    step: &'static str,
    message: String,
}

fn at(step: &'static str) -> impl Fn(wasmtime::Error) -> EngineError {
    move |e| EngineError {
        step,
        message: format!("{e:#}"),
    }
}

/// The process's engine, compiled on first use.
pub fn engine() -> Result<&'static Engine, Failure> {
    static ENGINE: OnceLock<Result<Engine, EngineError>> = OnceLock::new();
    ENGINE
        .get_or_init(Engine::new)
        .as_ref()
        .map_err(|e| Failure::Engine(e.to_string()))
}

impl Engine {
    /// Compiles the guest and links its imports.
    pub fn new() -> Result<Engine, EngineError> {
        let engine = wasmtime::Engine::new(&config()).map_err(at("wasmtime config"))?;
        let module = Module::new(&engine, GUEST_WASM).map_err(at("compiling the guest"))?;
        let mut linker = Linker::new(&engine);
        wasi::add_to(&mut linker).map_err(at("linking the WASI stubs"))?;
        store::add_to(&mut linker).map_err(at("linking the host functions"))?;
        let pre = linker
            .instantiate_pre(&module)
            .map_err(at("pre-linking the guest"))?;
        Ok(Engine {
            engine,
            module,
            linker,
            pre,
        })
    }

    /// Runs one call in a fresh instance.
    pub fn run(&self, call: &Call<'_>, limits: &Limits, host: &mut dyn Host) -> Outcome {
        self.run_with(call, limits, host, Instantiation::PreLinked)
    }

    /// [`Engine::run`], choosing how the instance is made.
    pub fn run_with(
        &self,
        call: &Call<'_>,
        limits: &Limits,
        host: &mut dyn Host,
        how: Instantiation,
    ) -> Outcome {
        let input = match check(call, limits) {
            Ok(input) => input,
            Err(f) => {
                return Outcome {
                    result: Err(f),
                    fuel: 0,
                }
            }
        };
        let (req_tx, req_rx) = mpsc::channel();
        let (rep_tx, rep_rx) = mpsc::channel();
        let link = HostLink {
            requests: req_tx,
            replies: rep_rx,
        };
        std::thread::scope(|s| {
            // Owned by this closure: if the host panics, unwinding drops the
            // sender, so an instance waiting for an answer fails instead of
            // waiting on while the scope waits for it.
            let rep_tx = rep_tx;
            let worker = std::thread::Builder::new()
                .name("stave-script".into())
                .stack_size(THREAD_STACK)
                .spawn_scoped(s, || self.run_in_store(call, &input, limits, link, how));
            let worker = match worker {
                Ok(w) => w,
                Err(e) => return engine_failure(format!("starting the script thread: {e}")),
            };
            // Ends when the instance's store, which holds the sender, drops.
            for req in req_rx.iter() {
                if rep_tx.send(host.call(&req.name, &req.arg)).is_err() {
                    break;
                }
            }
            worker
                .join()
                .unwrap_or_else(|_| engine_failure("the script thread panicked".into()))
        })
    }

    fn run_in_store(
        &self,
        call: &Call<'_>,
        input: &str,
        limits: &Limits,
        link: HostLink,
        how: Instantiation,
    ) -> Outcome {
        let store_limits = StoreLimitsBuilder::new()
            .memory_size(limits.max_memory_bytes as usize)
            .instances(1)
            .memories(1)
            .tables(1)
            .build();
        let state = State {
            limits: store_limits,
            link,
            costs: *limits,
            pending: Vec::new(),
        };
        let mut store = Store::new(&self.engine, state);
        store.limiter(|s| &mut s.limits);
        let setup = self.set_up(&mut store, call, input, limits, how);
        let (instance, args) = match setup {
            Ok(v) => v,
            Err(e) => return engine_failure(format!("setting up the guest: {e}")),
        };
        let result = run_call(&mut store, &instance, args, limits);
        let fuel = limits
            .fuel_per_call
            .saturating_sub(store.get_fuel().unwrap_or(0));
        let result = match result {
            Ok(status) => read_result(&mut store, &instance, status, limits, call.compile_only),
            Err(e) => Err(trapped(&e)),
        };
        let fuel = if result == Err(Failure::OutOfFuel) {
            limits.fuel_per_call
        } else {
            fuel
        };
        Outcome { result, fuel }
    }

    /// Instantiates, initialises QuickJS and copies the inputs in, all on
    /// setup fuel. Returns `stave_call`'s arguments.
    fn set_up(
        &self,
        store: &mut Store<State>,
        call: &Call<'_>,
        input: &str,
        limits: &Limits,
        how: Instantiation,
    ) -> wasmtime::Result<(Instance, CallArgs)> {
        store.set_fuel(SETUP_FUEL)?;
        let instance = match how {
            Instantiation::PreLinked => self.pre.instantiate(&mut *store)?,
            Instantiation::Fresh => self.linker.instantiate(&mut *store, &self.module)?,
        };
        instance
            .get_typed_func::<(), ()>(&mut *store, "_initialize")?
            .call(&mut *store, ())?;
        let init: TypedFunc<(i32, i32), i32> =
            instance.get_typed_func(&mut *store, "stave_init")?;
        let status = init.call(
            &mut *store,
            (limits.max_memory_bytes as i32, limits.js_stack_bytes as i32),
        )?;
        if status != 0 {
            return Err(wasmtime::format_err!("stave_init returned {status}"));
        }
        let (src, src_len) = put(store, &instance, call.source)?;
        let (function, _) = put(store, &instance, call.function.as_bytes())?;
        let (input, input_len) = put(store, &instance, input.as_bytes())?;
        Ok((
            instance,
            CallArgs {
                src,
                src_len,
                function,
                input,
                input_len,
                compile_only: i32::from(call.compile_only),
            },
        ))
    }
}

struct CallArgs {
    src: i32,
    src_len: i32,
    function: i32,
    input: i32,
    input_len: i32,
    compile_only: i32,
}

/// The host-side checks, before any instance exists: source size and
/// encoding, and the input's canonical form and size.
fn check(call: &Call<'_>, limits: &Limits) -> Result<String, Failure> {
    if call.source.len() > limits.max_source_bytes as usize {
        return Err(Failure::SourceTooLarge {
            size: call.source.len(),
            max: limits.max_source_bytes,
        });
    }
    if let Err(e) = std::str::from_utf8(call.source) {
        return Err(Failure::NotUtf8(e.valid_up_to()));
    }
    limits.check().map_err(Failure::Engine)?;
    let input = json::canonical(call.input).map_err(|e| Failure::BadInput(e.to_string()))?;
    if input.len() > limits.max_input_bytes as usize {
        return Err(Failure::InputTooLarge {
            size: input.len(),
            max: limits.max_input_bytes,
        });
    }
    Ok(input)
}

/// Copies `bytes` into a fresh guest buffer, NUL-terminated as QuickJS
/// wants its source and JSON text.
fn put(
    store: &mut Store<State>,
    instance: &Instance,
    bytes: &[u8],
) -> wasmtime::Result<(i32, i32)> {
    let len = i32::try_from(bytes.len())?;
    let alloc: TypedFunc<i32, i32> = instance.get_typed_func(&mut *store, "stave_alloc")?;
    let ptr = alloc.call(&mut *store, len.saturating_add(1))?;
    if ptr == 0 {
        return Err(wasmtime::format_err!(
            "the guest could not allocate {len} bytes"
        ));
    }
    let memory = instance
        .get_memory(&mut *store, "memory")
        .ok_or_else(|| wasmtime::format_err!("the guest exports no memory"))?;
    memory.write(&mut *store, ptr as u32 as usize, bytes)?;
    memory.write(&mut *store, ptr as u32 as usize + bytes.len(), &[0])?;
    Ok((ptr, len))
}

/// `stave_call` on the call's own fuel.
fn run_call(
    store: &mut Store<State>,
    instance: &Instance,
    a: CallArgs,
    limits: &Limits,
) -> wasmtime::Result<i32> {
    let f: TypedFunc<(i32, i32, i32, i32, i32, i32), i32> =
        instance.get_typed_func(&mut *store, "stave_call")?;
    store.set_fuel(limits.fuel_per_call)?;
    f.call(
        &mut *store,
        (
            a.src,
            a.src_len,
            a.function,
            a.input,
            a.input_len,
            a.compile_only,
        ),
    )
}

/// The guest's status and output as a result.
fn read_result(
    store: &mut Store<State>,
    instance: &Instance,
    status: i32,
    limits: &Limits,
    compile_only: bool,
) -> Result<String, Failure> {
    let most = (limits.max_output_bytes as usize).max(MAX_MESSAGE) + 1;
    let out = read_output(store, instance, most)
        .map_err(|e| Failure::Engine(format!("reading the output: {e}")))?;
    let message = || String::from_utf8_lossy(out.get(..MAX_MESSAGE).unwrap_or(&out)).into_owned();
    match status {
        // A compile-only call that compiles has no result: `null`.
        0 if compile_only => Ok("null".into()),
        0 => ok_result(&out, limits),
        1 => Err(Failure::Threw(message())),
        2 => Err(Failure::OutOfMemory(message())),
        3 => Err(Failure::StackOverflow(message())),
        4 => Err(Failure::Syntax(message())),
        5 => Err(Failure::NoFunction(message())),
        6 => Err(Failure::BadResult(message())),
        7 => Err(Failure::BadInput(message())),
        other => Err(Failure::Engine(format!(
            "the guest returned status {other}"
        ))),
    }
}

/// The guest's output, at most `most` bytes of it: a longer result is
/// refused by its length alone.
fn read_output(
    store: &mut Store<State>,
    instance: &Instance,
    most: usize,
) -> wasmtime::Result<Vec<u8>> {
    store.set_fuel(SETUP_FUEL)?;
    let ptr = instance
        .get_typed_func::<(), i32>(&mut *store, "stave_out_ptr")?
        .call(&mut *store, ())?;
    let len = instance
        .get_typed_func::<(), i32>(&mut *store, "stave_out_len")?
        .call(&mut *store, ())?;
    let memory = instance
        .get_memory(&mut *store, "memory")
        .ok_or_else(|| wasmtime::format_err!("the guest exports no memory"))?;
    let start = ptr as u32 as usize;
    let end = start.saturating_add((len as u32 as usize).min(most));
    memory
        .data(&*store)
        .get(start..end)
        .map(<[u8]>::to_vec)
        .ok_or_else(|| wasmtime::format_err!("output {start}..{end} is outside memory"))
}

/// A successful call's JSON, checked and made canonical.
fn ok_result(out: &[u8], limits: &Limits) -> Result<String, Failure> {
    if out.len() > limits.max_output_bytes as usize {
        return Err(Failure::BadResult(format!(
            "the result is over the limit of {} bytes",
            limits.max_output_bytes
        )));
    }
    let text = std::str::from_utf8(out)
        .map_err(|e| Failure::BadResult(format!("the result is not UTF-8: {e}")))?;
    let value = json::parse(text).map_err(|e| Failure::BadResult(e.to_string()))?;
    // The guest checks the value before JSON.stringify, but toJSON, a boxed
    // primitive or a proxy can still serialise to something else.
    if !value.is_object() {
        return Err(Failure::BadResult(format!(
            "the result serialises to {}, not an object",
            kind_of(&value)
        )));
    }
    json::canonical(&value).map_err(|e| Failure::BadResult(e.to_string()))
}

fn kind_of(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// A call that ended in a trap. Fuel exhaustion and the guest's own traps
/// are results. A native stack overflow is not: its depth depends on this
/// host's machine code (QuickJS's own limit ends every recursion first; the
/// golden vectors check that it does).
fn trapped(e: &wasmtime::Error) -> Failure {
    match e.downcast_ref::<Trap>() {
        Some(Trap::OutOfFuel) => Failure::OutOfFuel,
        Some(Trap::StackOverflow) => {
            Failure::Engine("the guest overflowed the native stack".into())
        }
        Some(trap) => Failure::Trap(trap.to_string()),
        None => Failure::Engine(format!("{e:#}")),
    }
}

fn engine_failure(message: String) -> Outcome {
    Outcome {
        result: Err(Failure::Engine(message)),
        fuel: 0,
    }
}
