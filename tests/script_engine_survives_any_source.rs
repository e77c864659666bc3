//! Any source, any bytes: the engine answers with a result or a
//! deterministic failure, never a trap, a node failure or a panic, and the
//! same answer twice (issue 25, "bad input never takes a node down").

use proptest::prelude::*;
use serde_json::json;
use stave::script::{engine, Call, Limits, NoHost, Outcome};

/// Pieces of JavaScript, so that random sources reach past the parser.
const TOKENS: &[&str] = &[
    "function decide(i) {",
    "}",
    "{",
    "(",
    ")",
    "[",
    "]",
    ";",
    ",",
    "return",
    "for (;;)",
    "while (1)",
    "i",
    "x",
    "=",
    "+",
    "*",
    "/",
    "'s'",
    "1",
    "0",
    "-1",
    "2**31",
    "1e308",
    "null",
    "undefined",
    "new Array(1e6)",
    "JSON.parse(",
    "JSON.stringify(",
    "stave.call('a', 1)",
    "throw",
    "try {",
    "} catch (e) {",
    "let ",
    "const ",
    "=>",
    "async ",
    "await ",
    "yield ",
    "class A {",
    "this",
    "Math.random()",
    "Date.now()",
    "eval(",
    "Function(",
    "Proxy",
    "Symbol()",
    "`t${1}`",
    "/a+/g",
    ".repeat(1e7)",
    "decide(i)",
    "{allow: true}",
    "\u{0}",
    "\u{2028}",
    "\\",
    "\"",
];

fn run(source: &[u8]) -> Outcome {
    let limits = Limits {
        fuel_per_call: 5_000_000,
        ..Limits::default()
    };
    let call = Call {
        source,
        function: "decide",
        input: &json!({"n": 1}),
        compile_only: false,
    };
    engine().expect("engine").run(&call, &limits, &mut NoHost)
}

fn check(source: &[u8]) -> Result<(), TestCaseError> {
    let first = run(source);
    if let Err(f) = &first.result {
        prop_assert!(!matches!(f.kind(), "ENGINE" | "TRAP"), "{f}");
    }
    prop_assert_eq!(first, run(source));
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes(source in proptest::collection::vec(any::<u8>(), 0..512)) {
        check(&source)?;
    }

    #[test]
    fn random_text(source in "\\PC{0,300}") {
        check(source.as_bytes())?;
    }

    #[test]
    fn token_soup(tokens in proptest::collection::vec(proptest::sample::select(TOKENS), 0..60)) {
        let mut source = String::from("function decide(i) { return {n: i.n}; }\n");
        source.push_str(&tokens.join(" "));
        check(source.as_bytes())?;
    }
}
