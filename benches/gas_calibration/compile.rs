//! `compile`: what compiling a Casbin pattern costs per unit of the
//! pattern weight Stave charges `compile_weight` for, by pattern family, at
//! the weights Casbin accepts. A cold compiled-model cache pays this for
//! every pattern of a model at its first evaluation.

use std::time::Instant;

use stave::keyspaces::casbin::measure::pattern_weight;
use stave::keyspaces::casbin::term::compile_regex;

/// A pattern family: its name, and its pattern for a repetition bound.
type Family = (&'static str, fn(u32) -> String);

const FAMILIES: [Family; 8] = [
    ("[^a]{n}", |n| format!("[^a]{{{n}}}")),
    ("[^a]{n}[^0-9a-f]", |n| format!("[^a]{{{n}}}[^0-9a-f]")),
    ("\\w{n}", |n| format!("\\w{{{n}}}")),
    ("[0-9]{n}", |n| format!("[0-9]{{{n}}}")),
    (".{n}", |n| format!(".{{{n}}}")),
    ("(a|bc){n}", |n| format!("(a|bc){{{n}}}")),
    ("[a-z]{n}x", |n| format!("[a-z]{{{n}}}x")),
    ("a{n}", |n| format!("a{{{n}}}")),
];

/// Bounds tried per family; those over the hard weight ceiling are skipped.
const BOUNDS: [u32; 4] = [8, 64, 256, 1000];

pub fn run() {
    println!("| pattern | n | weight | compile µs | ns per weight |");
    println!("|---|---|---|---|---|");
    for (name, make) in FAMILIES {
        for n in BOUNDS {
            let p = make(n);
            let w = pattern_weight(&p).expect("parses");
            if w > u64::from(stave::keyspaces::casbin::HARD_PATTERN_WEIGHT) {
                continue;
            }
            let reps = (2_000_000 / w).clamp(3, 200);
            let t = Instant::now();
            for _ in 0..reps {
                std::hint::black_box(compile_regex(&p).expect("compiles"));
            }
            let us = t.elapsed().as_secs_f64() * 1e6 / reps as f64;
            println!(
                "| `{name}` | {n} | {w} | {us:.1} | {:.0} |",
                us * 1e3 / w as f64
            );
        }
    }
}
