//! `stave script run|engine`: the script engine on this machine, with no
//! node: a dry run prints what a call gives and the fuel it burns, the
//! same figures every validator gets (docs/scripts.md).

use std::path::PathBuf;

use anyhow::Context;
use serde_json::{json, Value};

use super::Output;
use crate::script::{self, Call, Host, Limits};

#[derive(clap::Subcommand, Debug)]
pub enum ScriptCmd {
    /// Run a script locally: compile FILE, then call its FUNCTION on INPUT.
    Run(RunArgs),
    /// The engine's identity: engine id, guest hash, wasmtime, limits.
    Engine,
}

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// The script's source (UTF-8 JavaScript).
    pub file: PathBuf,
    /// The input, as JSON (integers only; larger than 2^53 − 1 as strings).
    #[arg(long, default_value = "{}")]
    pub input: String,
    /// The global function to call.
    #[arg(long, default_value = "decide")]
    pub function: String,
    /// Only check that the source compiles, as deploying it does.
    #[arg(long)]
    pub compile_only: bool,
    /// Fuel for the call (default: the engine's per-call limit).
    #[arg(long)]
    pub fuel: Option<u64>,
    /// Answers for `stave.call`: a JSON object from function name to the
    /// value every call of that name returns, e.g. `{"grants.count": 2}`.
    /// Without it, every host call throws.
    #[arg(long, default_value = "{}")]
    pub host: String,
}

/// `--host`: canned answers by function name.
struct CannedHost(serde_json::Map<String, Value>);

impl Host for CannedHost {
    fn call(&mut self, name: &str, _arg: &str) -> Result<String, String> {
        self.0
            .get(name)
            .map(Value::to_string)
            .ok_or_else(|| format!("no host function {name:?} (give one with --host)"))
    }
}

pub fn run(cmd: ScriptCmd, out: Output) -> anyhow::Result<()> {
    match cmd {
        ScriptCmd::Run(a) => run_file(a, out),
        ScriptCmd::Engine => {
            out.print(&engine_info());
            Ok(())
        }
    }
}

fn run_file(a: RunArgs, out: Output) -> anyhow::Result<()> {
    let source = std::fs::read(&a.file).with_context(|| format!("reading {}", a.file.display()))?;
    let input: Value = serde_json::from_str(&a.input)
        .with_context(|| format!("--input is not JSON: {}", a.input))?;
    let host: Value =
        serde_json::from_str(&a.host).with_context(|| format!("--host is not JSON: {}", a.host))?;
    let Value::Object(answers) = host else {
        anyhow::bail!(
            "--host must be a JSON object of function name to answer, not {}",
            a.host
        );
    };
    let mut limits = Limits::default();
    if let Some(fuel) = a.fuel {
        limits.fuel_per_call = fuel;
    }
    let engine = script::engine().map_err(|e| anyhow::anyhow!("{e}"))?;
    let call = Call {
        source: &source,
        function: &a.function,
        input: &input,
        compile_only: a.compile_only,
    };
    let outcome = engine.run(&call, &limits, &mut CannedHost(answers));
    let answer = match &outcome.result {
        Ok(text) => {
            let result: Value =
                serde_json::from_str(text).context("the engine's canonical JSON")?;
            json!({"ok": true, "result": result, "fuel": outcome.fuel})
        }
        Err(f) => {
            json!({"ok": false, "failure": f.kind(), "code": f.code(), "message": f.to_string(), "fuel": outcome.fuel})
        }
    };
    out.print(&answer);
    match &outcome.result {
        Ok(_) => Ok(()),
        Err(f) => Err(anyhow::anyhow!("{} ({})", f, f.kind())),
    }
}

fn engine_info() -> Value {
    let l = Limits::default();
    json!({
        "engine_id": hex::encode(script::engine_id()),
        "guest_sha256": hex::encode(script::guest_sha256()),
        "guest_bytes": script::GUEST_WASM.len(),
        "wasmtime": script::WASMTIME_VERSION,
        "settings": script::ENGINE_SETTINGS,
        "max_source_bytes": l.max_source_bytes,
        "max_memory_bytes": l.max_memory_bytes,
        "fuel_per_call": l.fuel_per_call,
        "js_stack_bytes": l.js_stack_bytes,
        "max_input_bytes": l.max_input_bytes,
        "max_output_bytes": l.max_output_bytes,
        "host_call_fuel": l.host_call_fuel,
        "host_byte_fuel": l.host_byte_fuel,
        "max_host_bytes": l.max_host_bytes,
    })
}
