//! Golden vectors of the script engine (issue 25): each script's result
//! and its exact fuel, pinned in tests/fixtures/script_golden.json, the
//! hostile ones included. A change of engine, guest or settings that moves
//! a number fails here. Every vector runs with both instantiation paths
//! and must burn the same fuel on each.
//!
//! Regenerate after a deliberate engine change (and say so in the note):
//! `STAVE_WRITE_GOLDEN=1 cargo test --release --test script_golden_vectors`.

use std::collections::BTreeMap;

use serde_json::{json, Value};
use stave::script::{engine, Call, Host, Instantiation, Limits, Outcome};

const GOLDEN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/script_golden.json"
);

struct Vector {
    name: &'static str,
    /// The outcome's kind, asserted apart from the golden file: "OK" or a
    /// failure kind.
    want: &'static str,
    source: Vec<u8>,
    function: &'static str,
    input: Value,
    compile_only: bool,
}

fn v(name: &'static str, source: &str, input: Value) -> Vector {
    Vector {
        name,
        want: want_of(name),
        source: source.as_bytes().to_vec(),
        function: "decide",
        input,
        compile_only: false,
    }
}

const POLICY: &str = r#"
function decide(input) {
  const r = input.request;
  if (r.territory !== "GB") return { allow: false, reason: "territory " + r.territory };
  if (input.time >= input.params.until) return { allow: false, reason: "promotion over" };
  const used = stave.call("grants.count", { consumer: r.consumer });
  if (used >= input.params.cap) return { allow: false, reason: "cap of " + input.params.cap + " reached" };
  return { allow: true, reason: "promotion" };
}"#;

fn policy_input(territory: &str, time: u64, consumer: &str) -> Value {
    json!({"request": {"territory": territory, "consumer": consumer}, "time": time,
           "params": {"until": 1_800_000_000u64, "cap": 3}})
}

fn recursion(body: &str) -> String {
    format!("function decide(input) {{ {body} }}")
}

fn vectors() -> Vec<Vector> {
    let mut all = vec![
        v("policy_allows_gb_before_the_deadline", POLICY, policy_input("GB", 1_700_000_000, "alice")),
        v("policy_denies_another_territory", POLICY, policy_input("FR", 1_700_000_000, "alice")),
        v("policy_denies_after_the_deadline", POLICY, policy_input("GB", 1_800_000_000, "alice")),
        v("policy_denies_at_the_cap", POLICY, policy_input("GB", 1_700_000_000, "carol")),
        v(
            "result_members_are_sorted_by_utf16",
            "function decide(i) { return { z: 1, '\\ufb33': 2, '\\ud83d\\ude00': 3, a: [true, null, 'é'] }; }",
            json!({}),
        ),
        v(
            "big_integers_travel_as_strings",
            "function decide(i) { return { product: (BigInt(i.amount) * 3n).toString() }; }",
            json!({"amount": "123456789012345678901234567890"}),
        ),
        v(
            "globals_are_the_documented_set",
            "function decide(i) { return { globals: Object.getOwnPropertyNames(globalThis).sort(), \
             math: Object.getOwnPropertyNames(Math).sort() }; }",
            json!({}),
        ),
        v(
            "math_and_nan_bits_are_the_same_everywhere",
            "function decide(i) { const f = new Float64Array([Math.sqrt(-1), 0/0, Math.sin(1e6), Math.exp(0.5)]); \
             return { bytes: Array.from(new Uint8Array(f.buffer)), sin: Math.round(Math.sin(1e6) * 1e12), \
             pow: Math.round(Math.pow(2, 0.5) * 1e15) }; }",
            json!({}),
        ),
        v(
            "regex_sort_and_strings_work",
            "function decide(i) { const w = i.text.match(/[a-z]+/g).sort(); \
             return { words: w, upper: i.text.toUpperCase(), n: w.length }; }",
            json!({"text": "the quick brown fox jumps over the lazy dog"}),
        ),
        v(
            "host_errors_are_catchable",
            "function decide(i) { try { stave.call('no.such.function', 1); } catch (e) { return { caught: e.message }; } }",
            json!({}),
        ),
        v(
            "host_answers_over_the_cap_throw",
            "function decide(i) { try { stave.call('big', null); } catch (e) { return { caught: e.message }; } }",
            json!({}),
        ),
        v(
            "caught_recursion_depth_is_exact",
            "function decide(i) { let d = 0; function f() { d++; f(); } try { f(); } catch (e) { return { depth: d, name: e.name }; } }",
            json!({}),
        ),
        v("infinite_loop_runs_out_of_fuel", "function decide(i) { for (;;) {} }", json!({})),
        v(
            "host_call_loop_runs_out_of_fuel",
            "function decide(i) { for (;;) stave.call('echo', i); }",
            json!({"x": "y"}),
        ),
        v("deep_recursion_plain", &recursion("function f(n) { return f(n + 1) + 1; } return { r: f(0) };"), json!({})),
        v(
            "deep_recursion_method_with_many_arguments",
            &recursion(
                "const o = { m(a, b, c, d, e, f, g, h) { return this.m(a + 1, b, c, d, e, f, g, h); } }; \
                 return { r: o.m(0, 1, 2, 3, 4, 5, 6, 7) };",
            ),
            json!({}),
        ),
        v(
            "deep_recursion_through_getters",
            &recursion("const o = { get x() { return this.x; } }; return { r: o.x };"),
            json!({}),
        ),
        v(
            "deep_recursion_through_callbacks",
            &recursion("function f(n) { return [n].map(f); } return { r: f(0) };"),
            json!({}),
        ),
        v(
            "deep_recursion_through_constructors",
            &recursion("class A { constructor(n) { this.next = new A(n + 1); } } return { r: new A(0) };"),
            json!({}),
        ),
        v(
            "huge_array_fill_runs_out_of_fuel",
            "function decide(i) { return { n: new Array(50000000).fill(1).length }; }",
            json!({}),
        ),
        v(
            "huge_buffer_runs_out_of_memory",
            "function decide(i) { return { n: new ArrayBuffer(40 * 1024 * 1024).byteLength }; }",
            json!({}),
        ),
        v(
            "growing_heap_runs_out_of_memory",
            "function decide(i) { const a = []; for (;;) a.push(new ArrayBuffer(1 << 20)); }",
            json!({}),
        ),
        v("huge_string_runs_out_of_memory", "function decide(i) { return { n: 'x'.repeat(2 ** 29).length }; }", json!({})),
        v(
            "catastrophic_regex_runs_out_of_fuel",
            "function decide(i) { return { m: /^(a+)+$/.test('a'.repeat(40) + '!') }; }",
            json!({}),
        ),
        v(
            "json_parse_of_deep_nesting_is_bounded",
            "function decide(i) { return { v: JSON.parse('['.repeat(100000)) }; }",
            json!({}),
        ),
        v(
            "json_parse_of_a_huge_string_is_bounded",
            "function decide(i) { const s = '\"' + 'a'.repeat(3e7) + '\"'; return { n: JSON.parse(s).length }; }",
            json!({}),
        ),
        v("number_result_is_refused", "function decide(i) { return 42; }", json!({})),
        v("array_result_is_refused", "function decide(i) { return [1]; }", json!({})),
        v("float_result_is_refused", "function decide(i) { return { x: 0.5 }; }", json!({})),
        v("cyclic_result_is_refused", "function decide(i) { const o = {}; o.o = o; return o; }", json!({})),
        v("bigint_result_is_refused", "function decide(i) { return { n: 1n }; }", json!({})),
        v("lone_surrogate_result_is_refused", "function decide(i) { return { s: '\\ud800' }; }", json!({})),
        v("thrown_number", "function decide(i) { throw 42; }", json!({})),
        v("thrown_object", "function decide(i) { throw { code: 7 }; }", json!({})),
        v("thrown_error", "function decide(i) { throw new TypeError('no ' + i.what); }", json!({"what": "way"})),
        v("removed_date_is_a_reference_error", "function decide(i) { return { t: Date.now() }; }", json!({})),
        v(
            "removed_globals_are_absent",
            "function decide(i) { return { random: typeof Math.random, weakref: typeof WeakRef, \
             fr: typeof FinalizationRegistry, atomics: typeof Atomics, sab: typeof SharedArrayBuffer, \
             perf: typeof performance, date: typeof Date }; }",
            json!({}),
        ),
        v("top_level_throw", "throw new Error('at load'); function decide(i) { return {}; }", json!({})),
        v("missing_function", "function other(i) { return {}; }", json!({})),
        v("syntax_error", "function decide(i) { return {; }", json!({})),
        Vector {
            name: "non_utf8_source",
            want: "NOT_UTF8",
            source: b"function decide(i) { return { s: '\xff' }; }".to_vec(),
            function: "decide",
            input: json!({}),
            compile_only: false,
        },
        v(
            "deep_recursion_through_sort_comparators",
            &recursion("function f() { return [2, 1].sort(() => f()); } return { r: f() };"),
            json!({}),
        ),
        v(
            "deep_recursion_through_to_json",
            &recursion("const o = { toJSON() { return JSON.stringify(o); } }; return { r: JSON.stringify(o) };"),
            json!({}),
        ),
        v(
            "deep_recursion_through_proxy_traps",
            &recursion("const p = new Proxy({}, { get(t, k, r) { return r[k]; } }); return { r: p.x };"),
            json!({}),
        ),
        v(
            "deep_recursion_through_coercion",
            &recursion("const o = { valueOf() { return +o; } }; return { r: +o };"),
            json!({}),
        ),
        v(
            "deep_nesting_of_parentheses_in_eval",
            "function decide(i) { return { r: eval('('.repeat(30000) + '1' + ')'.repeat(30000)) }; }",
            json!({}),
        ),
        v(
            "deep_nesting_of_array_literals_in_eval",
            "function decide(i) { return { r: eval('['.repeat(30000) + ']'.repeat(30000)) }; }",
            json!({}),
        ),
        v(
            "deep_nesting_of_regexp_groups",
            "function decide(i) { return { r: new RegExp('(?:'.repeat(30000) + ')'.repeat(30000)).test('') }; }",
            json!({}),
        ),
        v("to_json_number_result_is_refused", "function decide(i) { return { toJSON() { return 42; } }; }", json!({})),
        v("boxed_boolean_result_is_refused", "function decide(i) { return new Boolean(true); }", json!({})),
        v("proxied_array_result_is_refused", "function decide(i) { return new Proxy([], {}); }", json!({})),
        v(
            "a_thrown_look_alike_out_of_memory_is_a_throw",
            "function decide(i) { throw new InternalError('out of memory'); }",
            json!({}),
        ),
        v(
            "a_thrown_look_alike_stack_overflow_is_a_throw",
            "function decide(i) { throw new RangeError('Maximum call stack size exceeded'); }",
            json!({}),
        ),
        v("a_huge_thrown_string_is_cut", "function decide(i) { throw 'x'.repeat(200000); }", json!({})),
        v("source_over_the_limit", &format!("// {}\nfunction decide(i) {{ return {{}}; }}", "x".repeat(70_000)), json!({})),
    ];
    for (name, source) in [
        ("deploy_check_accepts_a_compiling_script", POLICY),
        (
            "deploy_check_refuses_a_syntax_error",
            "function decide(i) { return 1 +; }",
        ),
    ] {
        all.push(Vector {
            name,
            want: want_of(name),
            source: source.as_bytes().to_vec(),
            function: "decide",
            input: json!(null),
            compile_only: true,
        });
    }
    all
}

/// Each vector's expected kind, independent of the golden file.
fn want_of(name: &str) -> &'static str {
    const OK: &[&str] = &[
        "policy_allows_gb_before_the_deadline",
        "policy_denies_another_territory",
        "policy_denies_after_the_deadline",
        "policy_denies_at_the_cap",
        "result_members_are_sorted_by_utf16",
        "big_integers_travel_as_strings",
        "globals_are_the_documented_set",
        "math_and_nan_bits_are_the_same_everywhere",
        "regex_sort_and_strings_work",
        "host_errors_are_catchable",
        "host_answers_over_the_cap_throw",
        "caught_recursion_depth_is_exact",
        "removed_globals_are_absent",
        "deploy_check_accepts_a_compiling_script",
    ];
    if OK.contains(&name) {
        return "OK";
    }
    if name == "deep_nesting_of_parentheses_in_eval"
        || name == "deep_nesting_of_array_literals_in_eval"
    {
        // Parsing 30,000 levels costs more than the default fuel.
        return "OUT_OF_FUEL";
    }
    if name == "deep_nesting_of_regexp_groups" {
        // The regexp compiler's own stack check: "SyntaxError: stack overflow".
        return "THREW";
    }
    if name.starts_with("a_thrown_look_alike") || name == "a_huge_thrown_string_is_cut" {
        return "THREW";
    }
    for (part, kind) in [
        ("out_of_fuel", "OUT_OF_FUEL"),
        ("deep_recursion", "STACK_OVERFLOW"),
        ("deep_nesting", "STACK_OVERFLOW"),
        ("out_of_memory", "OUT_OF_MEMORY"),
        ("huge_string_is_bounded", "OUT_OF_FUEL"),
        ("result_is_refused", "BAD_RESULT"),
        ("thrown", "THREW"),
        ("throw", "THREW"),
        ("reference_error", "THREW"),
        ("missing_function", "NO_FUNCTION"),
        ("syntax_error", "SYNTAX"),
        ("over_the_limit", "SOURCE_TOO_LARGE"),
    ] {
        if name.contains(part) {
            return kind;
        }
    }
    panic!("vector {name} has no expected kind")
}

/// The vectors' host: grant counts by consumer, an echo, and an answer
/// larger than the per-call cap.
struct TestHost;

impl Host for TestHost {
    fn call(&mut self, name: &str, arg: &str) -> Result<String, String> {
        let arg: Value = serde_json::from_str(arg).map_err(|e| e.to_string())?;
        match name {
            "grants.count" => {
                let n = match arg["consumer"].as_str() {
                    Some("carol") => 3,
                    Some(_) => 1,
                    None => return Err("grants.count wants {consumer}".into()),
                };
                Ok(n.to_string())
            }
            "echo" => Ok(arg.to_string()),
            "big" => Ok(format!("\"{}\"", "b".repeat(100_000))),
            other => Err(format!("no host function {other:?}")),
        }
    }
}

fn record(o: &Outcome) -> Value {
    match &o.result {
        Ok(r) => json!({"result": r, "fuel": o.fuel}),
        Err(f) => {
            json!({"failure": f.kind(), "code": f.code(), "message": f.to_string(), "fuel": o.fuel})
        }
    }
}

fn run(vector: &Vector, how: Instantiation) -> Outcome {
    let call = Call {
        source: &vector.source,
        function: vector.function,
        input: &vector.input,
        compile_only: vector.compile_only,
    };
    engine()
        .expect("the engine compiles")
        .run_with(&call, &Limits::default(), &mut TestHost, how)
}

#[test]
fn scripts_give_their_pinned_results_and_fuel_on_every_instantiation_path() {
    let vectors = vectors();
    assert!(
        vectors.len() >= 20,
        "the issue asks for at least 20 vectors"
    );
    let mut got = BTreeMap::new();
    for vector in &vectors {
        let pre = run(vector, Instantiation::PreLinked);
        let fresh = run(vector, Instantiation::Fresh);
        assert_eq!(
            pre, fresh,
            "{}: the instantiation path changed the outcome",
            vector.name
        );
        let again = run(vector, Instantiation::PreLinked);
        assert_eq!(pre, again, "{}: a second run differs", vector.name);
        let kind = pre.result.as_ref().map_or_else(|f| f.kind(), |_| "OK");
        assert_eq!(kind, vector.want, "{}: {:?}", vector.name, pre.result);
        got.insert(vector.name.to_string(), record(&pre));
    }
    let got = Value::Object(got.into_iter().collect());
    let text = serde_json::to_string_pretty(&got).expect("json") + "\n";
    if std::env::var_os("STAVE_WRITE_GOLDEN").is_some() {
        std::fs::write(GOLDEN, &text).expect("write golden");
        return;
    }
    let want = std::fs::read_to_string(GOLDEN).expect("tests/fixtures/script_golden.json");
    let want: Value = serde_json::from_str(&want).expect("golden json");
    for (name, w) in want.as_object().expect("object") {
        assert_eq!(
            Some(w),
            got.get(name),
            "vector {name}: result or fuel moved"
        );
    }
    assert_eq!(want, got, "the set of vectors differs from the golden file");
}

/// Every vector on four threads at once burns exactly the fuel of a lone
/// call and gives the same outcome.
#[test]
fn concurrent_calls_burn_the_same_fuel() {
    let vectors = vectors();
    let lone: Vec<Outcome> = vectors
        .iter()
        .map(|v| run(v, Instantiation::PreLinked))
        .collect();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    vectors
                        .iter()
                        .map(|v| run(v, Instantiation::PreLinked))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for h in handles {
            assert_eq!(h.join().expect("thread"), lone);
        }
    });
}

/// The committed guest is the one guest/stave-guest.wasm.sha256 names (CI
/// rebuilds it from source and compares: guest/build.sh --check), the
/// pinned wasmtime is the one Cargo.lock resolved, and the engine id, which
/// genesis will pin, moves only with one of them or the settings.
#[test]
fn engine_identity_is_pinned() {
    let recorded = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/guest/stave-guest.wasm.sha256"
    ))
    .expect("sha256 file");
    assert_eq!(
        recorded.split_whitespace().next(),
        Some(hex::encode(stave::script::guest_sha256()).as_str())
    );
    let lock = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.lock"))
        .expect("Cargo.lock");
    let want = format!(
        "name = \"wasmtime\"\nversion = \"{}\"",
        stave::script::WASMTIME_VERSION
    );
    assert!(
        lock.contains(&want),
        "Cargo.lock does not resolve wasmtime {}",
        stave::script::WASMTIME_VERSION
    );
    assert_eq!(
        hex::encode(stave::script::engine_id()),
        ENGINE_ID,
        "the engine id moved: update ENGINE_ID and say why"
    );
}

const ENGINE_ID: &str = "bf6869c1b7bc1b82afe354655a58b3234ddf085d8e83ff43f821749dec90c396";

/// A host that panics fails the call's caller (the panic propagates) and
/// never leaves it waiting on the instance.
#[test]
fn a_panicking_host_does_not_hang_the_caller() {
    struct Panics;
    impl Host for Panics {
        fn call(&mut self, _name: &str, _arg: &str) -> Result<String, String> {
            panic!("the host failed")
        }
    }
    let source = b"function decide(i) { return { n: stave.call('x', 1) }; }";
    let call = Call {
        source,
        function: "decide",
        input: &json!({}),
        compile_only: false,
    };
    let e = engine().expect("engine");
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        e.run(&call, &Limits::default(), &mut Panics)
    }));
    assert!(r.is_err(), "the host's panic reaches the caller");
}

/// At the largest QuickJS stack the limits allow (half the guest's C
/// stack), every recursion shape still ends in QuickJS's RangeError, never
/// in a native stack overflow, whose depth would be the host's.
#[test]
fn recursion_ends_in_javascript_at_the_largest_allowed_stack() {
    // Fuel enough that the stack, not fuel, ends every shape.
    let limits = Limits {
        js_stack_bytes: stave::script::GUEST_C_STACK_BYTES / 2,
        fuel_per_call: 2_000_000_000,
        ..Limits::default()
    };
    let mut shapes = 0;
    for vector in vectors().iter().filter(|v| v.name.contains("deep_")) {
        let call = Call {
            source: &vector.source,
            function: vector.function,
            input: &vector.input,
            compile_only: false,
        };
        let outcome = engine().expect("engine").run(&call, &limits, &mut TestHost);
        let kind = outcome.result.as_ref().map_or_else(|f| f.kind(), |_| "OK");
        // QuickJS's limit ends it: its RangeError, or the regexp compiler's
        // own "SyntaxError: stack overflow"; never the native stack (ENGINE)
        // or a trap.
        assert!(
            matches!(kind, "STACK_OVERFLOW" | "THREW"),
            "{}: {:?}",
            vector.name,
            outcome.result
        );
        shapes += 1;
    }
    assert!(shapes >= 13, "{shapes} recursion and nesting shapes");
    let too_big = Limits {
        js_stack_bytes: stave::script::GUEST_C_STACK_BYTES / 2 + 1,
        ..Limits::default()
    };
    assert!(too_big.check().is_err());
}
