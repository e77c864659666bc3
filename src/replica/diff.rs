//! The pure half of a round: checking a peer's CRC_DIFF answers and SYNC
//! pages, and choosing, for each prefix whose summaries differ, whether
//! to SYNC it or split it.

use std::collections::BTreeMap;

use super::accept::Refusal;
use super::store::Summary;
use super::sync::SYNC_AT;
use crate::grpc::replica::MAX_HAVE;
use crate::proto::replica as pb;

/// Whether a SYNC page's `next_after` moves past where the page started,
/// within the asked prefix (so paging always ends).
pub(super) fn moves_on(q: &pb::SyncPrefix, next_after: &[u8]) -> bool {
    next_after.len() == 32
        && next_after.starts_with(&q.prefix)
        && (q.start_after.is_empty() || next_after > q.start_after.as_slice())
}

/// The children (index → summary) of a CRC answer, checked: indices
/// strictly ascending, CRCs XOR to the answer's, counts add up.
pub(super) fn children_of(a: &pb::CrcAnswer) -> Result<BTreeMap<u8, Summary>, Refusal> {
    let n = a.child_index.len();
    if n == 0 && a.child_crc.is_empty() && a.child_count.is_empty() {
        return Ok(BTreeMap::new());
    }
    if a.child_crc.len() != n || a.child_count.len() != n || a.prefix.len() >= 32 && n > 0 {
        return Err(Refusal::Crc);
    }
    let mut out = BTreeMap::new();
    let (mut crc, mut count) = (0u32, 0u64);
    for ((i, c), k) in a.child_index.iter().zip(&a.child_crc).zip(&a.child_count) {
        let i = u8::try_from(*i).map_err(|_| Refusal::Crc)?;
        if out.keys().next_back().is_some_and(|last| *last >= i) || *k == 0 {
            return Err(Refusal::Crc);
        }
        crc ^= c;
        count = count.checked_add(*k).ok_or(Refusal::Crc)?;
        out.insert(i, Summary { crc: *c, count: *k });
    }
    if crc != a.crc || count != a.count {
        return Err(Refusal::Crc);
    }
    Ok(out)
}

/// What to do with one child prefix whose summaries differ.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Step {
    /// Ask the peer for everything under it.
    SyncAll,
    /// List what this node holds and ask for the rest.
    SyncHave,
    Split,
    /// Nothing there to pull.
    Skip,
}

/// A prefix with at most [`SYNC_AT`] records on either side is SYNCed:
/// whole when this node holds none there, else listing what it holds (at
/// most [`MAX_HAVE`]); larger ones split.
pub(super) fn step(mine: Summary, theirs: Summary) -> Step {
    if theirs.count == 0 || mine == theirs {
        Step::Skip
    } else if mine.count == 0 {
        Step::SyncAll
    } else if (theirs.count <= SYNC_AT || mine.count <= SYNC_AT) && mine.count <= MAX_HAVE as u64 {
        Step::SyncHave
    } else {
        Step::Split
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_whose_children_do_not_add_up_are_refused() {
        let good = pb::CrcAnswer {
            prefix: vec![1],
            crc: 0b0110,
            count: 5,
            child_index: vec![0, 7],
            child_crc: vec![0b0100, 0b0010],
            child_count: vec![2, 3],
        };
        assert_eq!(children_of(&good).map(|k| k.len()), Ok(2));
        let mut a = good.clone();
        a.crc ^= 1;
        assert_eq!(children_of(&a), Err(Refusal::Crc));
        let mut a = good.clone();
        a.count = 6;
        assert_eq!(children_of(&a), Err(Refusal::Crc));
        let mut a = good.clone();
        a.child_index = vec![7, 0];
        assert_eq!(children_of(&a), Err(Refusal::Crc));
        let mut a = good.clone();
        a.child_index = vec![0, 256];
        assert_eq!(children_of(&a), Err(Refusal::Crc));
        let mut a = good.clone();
        a.child_count = vec![2];
        assert_eq!(children_of(&a), Err(Refusal::Crc));
        let mut a = good;
        a.child_count = vec![0, 5];
        assert_eq!(
            children_of(&a),
            Err(Refusal::Crc),
            "an empty child is not listed"
        );
    }

    #[test]
    fn small_prefixes_sync_and_large_ones_split() {
        let s = |count| Summary {
            crc: count as u32,
            count,
        };
        assert_eq!(step(s(0), s(0)), Step::Skip);
        assert_eq!(step(s(40), s(0)), Step::Skip, "nothing to pull");
        assert_eq!(
            step(s(0), s(5_000)),
            Step::SyncAll,
            "nothing held: take all"
        );
        assert_eq!(step(s(3), s(16)), Step::SyncHave);
        assert_eq!(step(s(3), s(17)), Step::SyncHave);
        assert_eq!(step(s(40), s(16)), Step::SyncHave, "one side small");
        assert_eq!(step(s(65), s(16)), Step::Split, "too many to list");
        assert_eq!(step(s(17), s(18)), Step::Split);
        assert_eq!(step(s(5), s(5)), Step::Skip);
    }

    #[test]
    fn sync_pages_must_move_forward_inside_their_prefix() {
        let q = |prefix: Vec<u8>, start_after: Vec<u8>| pb::SyncPrefix {
            prefix,
            have: Vec::new(),
            start_after,
        };
        let at = |b: u8| [[7u8].as_slice(), &[b; 31]].concat();
        assert!(moves_on(&q(vec![7], vec![]), &at(1)));
        assert!(moves_on(&q(vec![7], at(1)), &at(2)));
        assert!(
            !moves_on(&q(vec![7], at(2)), &at(2)),
            "the same place again"
        );
        assert!(!moves_on(&q(vec![7], at(2)), &at(1)), "backwards");
        assert!(!moves_on(&q(vec![8], vec![]), &at(1)), "another prefix");
        assert!(!moves_on(&q(vec![7], vec![]), &[7; 31]), "not a datakey");
    }
}
