//! `stave script run`, the local dry run (issue 25), in a separate process:
//! it prints the result and the fuel the engine gives in this one, exits
//! non-zero with the failure's kind, and `stave script engine` names the
//! same engine id.

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};
use stave::script::{engine, Call, Host, Limits};

const POLICY: &str = include_str!("../docs/examples/promotion.js");

struct TwoGrants;
impl Host for TwoGrants {
    fn call(&mut self, name: &str, _arg: &str) -> Result<String, String> {
        assert_eq!(name, "grants.count");
        Ok("2".into())
    }
}

fn stave(args: &[&str]) -> (bool, Value) {
    let out = Command::new(Path::new(env!("CARGO_BIN_EXE_stave")))
        .args(["--output", "json"])
        .args(args)
        .output()
        .expect("run stave");
    let json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    (out.status.success(), json)
}

/// The walkthrough's input at block time `time`.
fn promotion_input(time: u64) -> Value {
    json!({"request": {"consumer": "ab12", "territory": "GB"}, "time": time,
           "params": {"until": 1_800_000_000u64, "cap": 3}})
}

#[test]
fn a_dry_run_prints_the_engines_result_and_fuel() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("promotion.js");
    std::fs::write(&file, POLICY).unwrap();
    let input = promotion_input(1_700_000_000);
    let (ok, got) = stave(&[
        "script",
        "run",
        file.to_str().unwrap(),
        "--input",
        &input.to_string(),
        "--host",
        r#"{"grants.count": 2}"#,
    ]);
    assert!(ok, "{got}");
    let call = Call {
        source: POLICY.as_bytes(),
        function: "decide",
        input: &input,
        compile_only: false,
    };
    let here = engine()
        .unwrap()
        .run(&call, &Limits::default(), &mut TwoGrants);
    let result: Value = serde_json::from_str(here.result.as_ref().unwrap()).unwrap();
    assert_eq!(
        result,
        json!({"allow": true, "reason": "promotion: 2 of 3 grants used"})
    );
    assert_eq!(
        got,
        json!({"ok": true, "result": result, "fuel": here.fuel})
    );
    // The walkthroughs print this run's fuel: they stay true.
    for doc in ["README.md", "docs/scripts.md"] {
        let text =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(doc)).unwrap();
        assert!(
            text.contains(&format!("# fuel: {}\n", here.fuel)),
            "{doc} does not show fuel {}",
            here.fuel
        );
    }

    // Past the deadline: a deny is a result, not a failure.
    let late = promotion_input(1_900_000_000).to_string();
    let (ok, got) = stave(&["script", "run", file.to_str().unwrap(), "--input", &late]);
    assert!(ok, "{got}");
    assert_eq!(got["result"]["allow"], json!(false));
}

#[test]
fn a_failing_script_exits_non_zero_with_its_kind() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("loop.js");
    std::fs::write(&file, "function decide(i) { for (;;) {} }").unwrap();
    let (ok, got) = stave(&["script", "run", file.to_str().unwrap(), "--fuel", "1000000"]);
    assert!(!ok);
    assert_eq!(
        (got["failure"].as_str(), got["fuel"].as_u64()),
        (Some("OUT_OF_FUEL"), Some(1_000_000))
    );
    std::fs::write(&file, "function decide(i) { return {; }").unwrap();
    let (ok, got) = stave(&["script", "run", file.to_str().unwrap(), "--compile-only"]);
    assert!(!ok);
    assert_eq!(got["failure"], json!("SYNTAX"));
}

#[test]
fn the_engine_command_names_this_engine() {
    let (ok, got) = stave(&["script", "engine"]);
    assert!(ok);
    assert_eq!(
        got["engine_id"],
        json!(hex::encode(stave::script::engine_id()))
    );
    assert_eq!(
        got["guest_sha256"],
        json!(hex::encode(stave::script::guest_sha256()))
    );
    assert_eq!(got["wasmtime"], json!("48.0.8"));
}
