//! Script engine benchmarks (issue 25), in process.
//!
//! 1. Compiling the guest: once per process, at first use.
//! 2. A trivial call: a fresh instance (instantiate, `_initialize`,
//!    QuickJS's runtime and context, the prelude) plus the smallest call;
//!    both instantiation paths.
//! 3. A policy call: docs/examples/promotion.js (the README's walkthrough),
//!    with one host call.
//! 4. The fuel-to-time ratio the gas rate rests on: a loop that burns the
//!    whole per-call fuel, and the same minus the trivial call.
//!
//! Run: `cargo bench --bench script_engine -- <calls>` (default 400).

use std::time::{Duration, Instant};

use serde_json::json;
use stave::script::{engine, Call, Engine, Host, Instantiation, Limits, NoHost};

const TRIVIAL: &str = "function decide(i) { return { allow: true }; }";
const POLICY: &str = include_str!("../docs/examples/promotion.js");
const BURN: &str = "function decide(i) { let x = 0; for (;;) x++; }";

struct Counts;
impl Host for Counts {
    fn call(&mut self, _name: &str, _arg: &str) -> Result<String, String> {
        Ok("2".into())
    }
}

fn arg(n: usize, default: usize) -> usize {
    std::env::args()
        .filter(|a| !a.starts_with('-'))
        .nth(n)
        .and_then(|a| a.parse().ok())
        .unwrap_or(default)
}

fn pct(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(i).map_or(0.0, |d| d.as_secs_f64() * 1e3)
}

/// Runs `calls` calls; prints p50/p99 in ms and the fuel of one.
fn measure(
    e: &Engine,
    label: &str,
    source: &str,
    input: &serde_json::Value,
    calls: usize,
    how: Instantiation,
    host: &mut dyn Host,
) -> (f64, u64) {
    let call = Call {
        source: source.as_bytes(),
        function: "decide",
        input,
        compile_only: false,
    };
    let limits = Limits::default();
    let mut times = Vec::with_capacity(calls);
    let mut fuel = 0;
    for _ in 0..calls {
        let t = Instant::now();
        let o = e.run_with(&call, &limits, host, how);
        times.push(t.elapsed());
        fuel = o.fuel;
    }
    times.sort();
    let p50 = pct(&times, 0.5);
    println!(
        "{label:<34} p50 {p50:.3} ms  p99 {:.3} ms  fuel {fuel}",
        pct(&times, 0.99)
    );
    (p50, fuel)
}

fn main() {
    let calls = arg(1, 400);
    let t = Instant::now();
    let e = engine().expect("the engine compiles");
    println!(
        "compile the guest (once per process): {:.0} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    let empty = json!({});
    let (trivial, trivial_fuel) = measure(
        e,
        "trivial call, pre-linked",
        TRIVIAL,
        &empty,
        calls,
        Instantiation::PreLinked,
        &mut NoHost,
    );
    measure(
        e,
        "trivial call, linked afresh",
        TRIVIAL,
        &empty,
        calls,
        Instantiation::Fresh,
        &mut NoHost,
    );
    let input = json!({"request": {"consumer": "ab12", "territory": "GB"}, "time": 1_700_000_000u64,
                       "params": {"until": 1_800_000_000u64, "cap": 3}});
    measure(
        e,
        "promotion policy, one host call",
        POLICY,
        &input,
        calls,
        Instantiation::PreLinked,
        &mut Counts,
    );
    let (burn, burn_fuel) = measure(
        e,
        "loop to the fuel limit",
        BURN,
        &empty,
        calls.div_ceil(20),
        Instantiation::PreLinked,
        &mut NoHost,
    );
    let ns_per_fuel = (burn - trivial) * 1e6 / (burn_fuel - trivial_fuel) as f64;
    println!(
        "fuel-to-time: {ns_per_fuel:.4} ns per fuel ({:.1} M fuel per ms); a {}-fuel call runs {:.2} ms of script",
        1e-6 / ns_per_fuel * 1e6,
        Limits::default().fuel_per_call,
        Limits::default().fuel_per_call as f64 * ns_per_fuel / 1e6
    );
}
