//! Step 8: no two deals overlap.
//!
//! Two deals overlap when all of these hold: they share a
//! DealReleaseReference (deals on different releases, such as the album
//! and a TrackRelease, are different products and never conflict); their
//! territory sets intersect; their use-type masks intersect (so `Stream`
//! meets `OnDemandStream`); their CommercialModelTypes intersect (an
//! ad-supported and a subscription deal may coexist); and some
//! ValidityPeriod of one overlaps some ValidityPeriod of the other
//! (half-open `[start, end)`, a 0 start open to the past, a 0 end open to
//! the future, no period at all = always).
//!
//! Work units per compared pair: the two reference counts, 4 territory
//! words, 1 use mask, the two model counts, and the product of the period
//! counts (each at least 1).

use super::cover::when;
use super::terms::Term;
use crate::ddex::{use_type, DdexError};

/// Checks step 8 over every pair of deals, in document order; returns the
/// work units.
pub(super) fn check_overlap(terms: &[Term]) -> Result<u64, DdexError> {
    let mut work = 0u64;
    for (i, a) in terms.iter().enumerate() {
        for b in terms.iter().skip(i.saturating_add(1)) {
            work = work.saturating_add(pair_work(a, b));
            if let Some(why) = overlap(a, b) {
                return Err(DdexError::OverlappingDeals(why));
            }
        }
    }
    Ok(work)
}

fn pair_work(a: &Term, b: &Term) -> u64 {
    let n = |x: usize| x as u64;
    let periods = n(a.periods.len().max(1)).saturating_mul(n(b.periods.len().max(1)));
    n(a.refs.len())
        .saturating_add(n(b.refs.len()))
        .saturating_add(5)
        .saturating_add(n(a.models.len()))
        .saturating_add(n(b.models.len()))
        .saturating_add(periods)
}

/// Why `a` and `b` overlap, or `None`.
fn overlap(a: &Term, b: &Term) -> Option<String> {
    let release = a.refs.intersection(&b.refs).next()?;
    let territory = a.territories.first_common(&b.territories)?;
    let uses = use_type::first_name(a.uses & b.uses)?;
    let model = a.models.intersection(&b.models).next()?;
    let (start, end) = common_period(&a.periods, &b.periods)?;
    Some(format!(
        "ReleaseDeal {} Deal {} and ReleaseDeal {} Deal {} both grant {uses} in {territory} \
         under {model:?} on release {release:?} from {} until {}",
        a.rd,
        a.d,
        b.rd,
        b.d,
        when(start),
        when(end)
    ))
}

/// The first overlap of a period of `a` with a period of `b`
/// (no periods = always), as `[start, end)` with 0 = open.
pub(super) fn common_period(a: &[(u64, u64)], b: &[(u64, u64)]) -> Option<(u64, u64)> {
    const ALWAYS: [(u64, u64); 1] = [(0, 0)];
    let a = if a.is_empty() { &ALWAYS[..] } else { a };
    let b = if b.is_empty() { &ALWAYS[..] } else { b };
    a.iter()
        .flat_map(|p| b.iter().map(move |q| (*p, *q)))
        .find_map(|(p, q)| intersect(p, q))
}

fn intersect((s1, e1): (u64, u64), (s2, e2): (u64, u64)) -> Option<(u64, u64)> {
    let start = s1.max(s2);
    let end = match (e1, e2) {
        (0, e) | (e, 0) => e,
        (x, y) => x.min(y),
    };
    (end == 0 || start < end).then_some((start, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods_are_half_open_with_open_ends() {
        assert_eq!(common_period(&[], &[]), Some((0, 0)));
        assert_eq!(common_period(&[(10, 20)], &[(20, 30)]), None);
        assert_eq!(common_period(&[(10, 21)], &[(20, 30)]), Some((20, 21)));
        assert_eq!(common_period(&[(0, 20)], &[(5, 0)]), Some((5, 20)));
        assert_eq!(common_period(&[(0, 5)], &[(5, 0)]), None);
        assert_eq!(common_period(&[(30, 0)], &[]), Some((30, 0)));
        assert_eq!(common_period(&[(1, 2), (8, 9)], &[(5, 0)]), Some((8, 9)));
    }
}
