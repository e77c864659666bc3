//! The measure bounds what the compiler builds: every pattern the measure
//! accepts at the hard ceiling of `max_pattern_weight` compiles with an NFA
//! size limit of an eighth of the safety cap, for the worst cases we know
//! (Unicode classes under large repetition counts, nested repetitions,
//! captures, alternations) and for random patterns.

use proptest::prelude::*;
use regex_automata::{meta, util::syntax};

use super::*;
use crate::keyspaces::casbin::HARD_PATTERN_WEIGHT;

const HARD: u64 = HARD_PATTERN_WEIGHT as u64;

/// Compiles under `limit` NFA bytes, with the node's engine configuration.
fn compiles_within(pattern: &str, limit: usize) -> bool {
    meta::Builder::new()
        .configure(crate::keyspaces::casbin::term::regex_config(limit))
        .syntax(syntax::Config::new().nest_limit(NEST_LIMIT))
        .build(pattern)
        .is_ok()
}

/// The largest `n` for which `make(n)` weighs at most `HARD`.
fn largest_accepted(make: &dyn Fn(u32) -> String) -> u32 {
    let (mut lo, mut hi) = (0u32, 1_000_000u32);
    while lo + 1 < hi {
        let mid = lo + (hi - lo) / 2;
        match pattern_weight(&make(mid)) {
            Ok(w) if w <= HARD => lo = mid,
            _ => hi = mid,
        }
    }
    lo
}

#[test]
fn worst_cases_at_the_hard_ceiling_compile_far_under_the_safety_cap() {
    let templates: [&dyn Fn(u32) -> String; 14] = [
        &|n| format!("[^a]{{{n}}}"),
        &|n| format!("\\w{{{n}}}"),
        &|n| format!("(?u:\\W){{{n}}}"),
        &|n| format!("\\pL{{{n}}}"),
        &|n| format!(".{{{n}}}"),
        &|n| format!("(?i)k{{{n}}}"),
        &|n| format!("(a|b|c|d){{{n}}}"),
        &|n| format!("((a)|(b)){{{n}}}"),
        &|n| format!("(?:a?){{{n}}}"),
        &|n| format!("(?:(?:[^a]{{{n}}}){{{n}}}){{2}}"),
        &|n| format!("(?:(?:\\w?){{{n}}}){{{n}}}"),
        &|n| format!("((((a)))){{{n}}}"),
        &|n| format!("[01]*1[01]{{{n}}}"),
        &|n| format!("(?:ab|cd|ef|gh){{{n}}}"),
    ];
    let mut big = 0;
    for make in templates {
        let n = largest_accepted(make);
        let p = make(n);
        let w = pattern_weight(&p).unwrap();
        assert!(
            w <= HARD && pattern_weight(&make(n + 1)).unwrap() > HARD,
            "{p}"
        );
        assert!(
            compiles_within(&p, SAFETY_NFA_BYTES / 8),
            "{p} (weight {w}) needs more than an eighth of the safety cap"
        );
        big += usize::from(!compiles_within(&p, 1 << 20));
    }
    assert!(big >= 3, "the sweep reaches NFAs over 1 MiB ({big})");
}

#[test]
fn the_measure_counts_what_patterns_expand_to() {
    let w = |p: &str| pattern_weight(p).unwrap() - BASE_WEIGHT;
    assert_eq!(w("abc"), 3);
    assert_eq!(w("[^a]"), 29, "a Unicode class counts its UTF-8 automaton");
    assert!(w("\\w") > 3000, "\\w is about 770 ranges");
    assert!(w("[^a]{100}") > 100 * w("[^a]"));
    assert!(w("(?-u:\\w){100}") < w("\\w{2}"), "ASCII classes are cheap");
    assert!(pattern_weight("\\w{1000}{1000}").unwrap() > HARD);
    assert!(pattern_weight("(").is_err());
    let deep = format!("{}a{}", "(".repeat(70), ")".repeat(70));
    assert!(
        pattern_weight(&deep).is_err(),
        "nests deeper than the limit"
    );
}

fn atom() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "a", "[^a]", "\\w", ".", "\\d", "(?i)k", "[0-9a-f]", "\\b", "\\pL", "(?s:.)", "é",
    ])
    .prop_map(str::to_string)
}

fn pattern() -> impl Strategy<Value = String> {
    atom().prop_recursive(4, 24, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 1..4).prop_map(|v| v.concat()),
            prop::collection::vec(inner.clone(), 2..4).prop_map(|v| format!("(?:{})", v.join("|"))),
            inner.clone().prop_map(|p| format!("({p})")),
            (inner, 0u32..400, 0u32..400).prop_map(|(p, a, b)| {
                let (lo, hi) = (a.min(b), a.max(b));
                format!("(?:{p}){{{lo},{hi}}}")
            }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]
    #[test]
    fn every_pattern_the_measure_accepts_compiles_under_the_cap(p in pattern()) {
        if let Ok(w) = pattern_weight(&p) {
            if w <= HARD {
                prop_assert!(compiles_within(&p, SAFETY_NFA_BYTES / 8), "{} (weight {})", p, w);
            }
        }
    }
}

/// What a compiled pattern holds (`memory_usage`, the figure the compiled
/// cache accounts) grows with its weight, for shapes that would get a
/// one-pass table (explicit groups, Unicode `\b`, many distinct bytes)
/// as well as the rest (review of B1: the weight bounded only the NFA).
/// Bytes of compiled regex per unit of weight, at most (both NFAs, the
/// prefilter and the rest `memory_usage` counts).
const BYTES_PER_WEIGHT: u64 = 64;

#[test]
fn compiled_memory_grows_with_the_weight() {
    let distinct: String = (0x21u8..0x7f)
        .map(char::from)
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    let templates: [&dyn Fn(u32) -> String; 6] = [
        &|n| format!("({})", distinct.repeat(n as usize / 64 + 1)),
        &|n| format!("\\b(a|b){{{n}}}\\b"),
        &|n| format!("([a-z0-9]{{{n}}})"),
        &|n| format!("[^a]{{{n}}}"),
        &|n| format!("((a)|(b)){{{n}}}"),
        &|n| format!("(?:ab|cd|ef|gh){{{n}}}"),
    ];
    for limit in [8_192u64, HARD] {
        for make in templates {
            let mut n = 1u32;
            while pattern_weight(&make(n * 2)).is_ok_and(|w| w <= limit) {
                n *= 2;
            }
            let p = make(n);
            let w = pattern_weight(&p).unwrap();
            let bytes = crate::keyspaces::casbin::term::compile_regex(&p)
                .unwrap()
                .memory_usage() as u64;
            assert!(
                bytes <= BYTES_PER_WEIGHT * w + 4096,
                "{} (weight {w}) holds {bytes} bytes",
                &p[..p.len().min(40)]
            );
        }
    }
}
