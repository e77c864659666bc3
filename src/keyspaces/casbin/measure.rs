//! The syntactic measure of a regex pattern ("pattern weight"): computed by
//! Stave from the pattern's syntax tree, and what decides whether a pattern
//! is accepted (review m4). It is a pure function of the pattern and the
//! pinned `regex-syntax` version: it never depends on how `regex-automata`
//! counts compiled bytes, or on pointer width.
//!
//! The weight counts what the Thompson compiler will build:
//! - a literal: its bytes;
//! - a Unicode class: the byte ranges of its UTF-8 automaton (the sum of
//!   [`Utf8Sequences`] lengths over its ranges), so `\w` (about 3,400) and
//!   `[^a]` (29) count for what they expand to;
//! - a byte class: one per range;
//! - a repetition: one copy of its body per unit of its upper bound
//!   (`x{n,m}`: m copies; `x{n,}`: n + 1), each plus one;
//! - concatenations, alternations and groups: their parts, plus one each;
//! - plus [`BASE_WEIGHT`] per pattern (the fixed cost of a compiled regex).
//!
//! The `tests` sweep shows that every pattern accepted at the hard ceiling
//! of `max_pattern_weight` compiles far under [`SAFETY_NFA_BYTES`].

use regex_syntax::hir::{Class, Hir, HirKind};
use regex_syntax::utf8::Utf8Sequences;

/// Deepest nesting of a pattern (the same limit the compiler is given).
pub const NEST_LIMIT: u32 = 64;
/// Weight every pattern starts from: a compiled regex costs a few KiB
/// whatever its size (the NFA's fixed states, the lazy DFA cache's floor).
pub const BASE_WEIGHT: u64 = 64;
/// The compiler's NFA size limit: a safety cap only. Measured, an NFA takes
/// at most about 40 bytes per unit of weight plus about 1 KiB; at the hard
/// ceiling of `max_pattern_weight` (65,536) that is under 3 MiB, so no
/// accepted pattern comes near this cap, and it never decides a result.
pub const SAFETY_NFA_BYTES: usize = 32 << 20;

/// The weight of `pattern`.
///
/// # Errors
/// The parser's message when `pattern` is not a valid regex (or nests
/// deeper than [`NEST_LIMIT`]).
pub fn pattern_weight(pattern: &str) -> Result<u64, String> {
    let hir = regex_syntax::ParserBuilder::new()
        .nest_limit(NEST_LIMIT)
        .build()
        .parse(pattern)
        .map_err(|e| format!("regex {pattern:?} does not parse: {e}"))?;
    Ok(BASE_WEIGHT.saturating_add(weight(&hir)))
}

fn sum<'a>(parts: impl Iterator<Item = &'a Hir>, each: u64) -> u64 {
    parts
        .map(|h| weight(h).saturating_add(each))
        .fold(1, u64::saturating_add)
}

fn weight(h: &Hir) -> u64 {
    match h.kind() {
        HirKind::Empty | HirKind::Look(_) => 1,
        HirKind::Literal(l) => l.0.len() as u64,
        HirKind::Class(Class::Unicode(c)) => c
            .ranges()
            .iter()
            .flat_map(|r| Utf8Sequences::new(r.start(), r.end()))
            .map(|s| s.as_slice().len() as u64)
            .fold(1, u64::saturating_add),
        HirKind::Class(Class::Bytes(c)) => 1 + c.ranges().len() as u64,
        HirKind::Repetition(r) => {
            let copies = match r.max {
                Some(max) => u64::from(max.max(1)),
                None => u64::from(r.min).saturating_add(1),
            };
            copies
                .saturating_mul(weight(&r.sub).saturating_add(1))
                .saturating_add(1)
        }
        HirKind::Capture(c) => weight(&c.sub).saturating_add(2),
        HirKind::Concat(parts) => sum(parts.iter(), 0),
        HirKind::Alternation(parts) => sum(parts.iter(), 1),
    }
}

#[cfg(test)]
mod tests;
