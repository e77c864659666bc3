//! CRDT databases (CAD037, `001_5d0a1075981af6be.txt`): typed key-value
//! entries whose replicas merge without coordination. This module is the
//! pure part: the entry state, its merge, what a reader sees, and the
//! local writes. Replication (signed per-owner records, anti-entropy)
//! sits above it, in `crate::replica`.
//!
//! # The lattice
//!
//! An [`Entry`] is a product of join-semilattices, one per part:
//! - `reg`: the last whole-value write (a value, a list, or a delete), a
//!   last-writer-wins register;
//! - `hash`, `set`, `zset`, `counter`: each structural type's elements,
//!   joined element by element (per-field LWW, add/remove stamps, a score
//!   tied to its add, a PN-counter per replica);
//! - `expiry`: a last-writer-wins register of the deadline.
//!
//! [`Entry::merge`] joins every part on its own, so it is commutative,
//! associative and idempotent by construction, and the empty entry is its
//! identity (`tests.rs` checks all four over arbitrary states).
//!
//! # What a reader sees
//!
//! [`Entry::read`] is a pure function of the merged state and the time.
//! The newest write decides the type. A structural type shows only the
//! elements written after the newest write of any other part (a *reset*:
//! a delete, a whole-value write, or a write of another type). A passed
//! deadline acts as a delete at the deadline: writes after it start a new
//! life of the key, without the deadline.
//!
//! When every write has seen the earlier ones, reads are what one
//! Redis-like node shows after the same writes (`tests.rs` checks this
//! against a model), and concurrent adds and removals of different
//! elements, with no deadline involved, read as the same writes in stamp
//! order (checked too). Other concurrent writes converge by these rules
//! instead:
//! - a type conflict goes to the later write, and the older type's
//!   elements are gone;
//! - an increment made without seeing an older reset is lost to it (each
//!   replica's accumulators restart at the reset it saw);
//! - a new deadline replaces an older one, even one that had already
//!   passed at another replica (a replica writes a passed deadline down as
//!   a delete before it sets a new one, so its own writes never revive);
//! - a removal that empties a replica's view of a structure clears the
//!   deadline, as Redis does when it deletes an empty key; a member another
//!   replica added concurrently survives, without the deadline;
//! - a removal or EXPIRE of something the writer has not seen does
//!   nothing, where stamp order would apply it.
//!
//! # Ties
//!
//! Stamps order by (milliseconds, replica key), and two writes with the
//! same stamp order by the SHA-256 of their canonical value (BRIEF §8).
//! Two parts whose newest writes share a stamp (one replica writing two
//! types in one millisecond, which [`Stamp::next`] rules out) order by
//! [`Kind`].
//! CAD037's reference merge keeps its first operand on equal timestamps,
//! which is not commutative, and resolves a type conflict by timestamp
//! alone, which is not associative: a set merged with an older set and a
//! value written between them keeps the older set's members in one order
//! and loses them in the other. Neither can happen here.

mod delta;
mod entry;
mod lww;
mod ops;
mod read;

#[cfg(test)]
mod tests;

pub use entry::{Entry, Member, Part, Pn, ZMember};
pub use lww::{Canon, Lww, Whole};
pub use ops::WrongType;
pub use read::{Kind, View, Visible};

/// When a write happened and which replica made it. Replicas are operator
/// keys; a replica's clock must give each of its writes a larger `ms`
/// than its last ([`Stamp::next`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Stamp {
    pub ms: u64,
    pub replica: [u8; 32],
}

impl Stamp {
    pub fn new(ms: u64, replica: [u8; 32]) -> Self {
        Stamp { ms, replica }
    }

    /// The stamp of `replica`'s next write at wall time `now_ms`: never
    /// earlier than one past its previous write.
    pub fn next(prev: Option<Stamp>, now_ms: u64, replica: [u8; 32]) -> Self {
        let floor = prev.map_or(0, |p| p.ms.saturating_add(1));
        Stamp::new(now_ms.max(floor), replica)
    }
}

/// A database: keys to entries. Merging two is the union of their keys,
/// entries under the same key merged.
pub type Db = std::collections::BTreeMap<Vec<u8>, Entry>;

/// The join of two databases.
pub fn merge_db(a: &Db, b: &Db) -> Db {
    let mut out = a.clone();
    for (k, e) in b {
        out.entry(k.clone())
            .and_modify(|mine| *mine = mine.merge(e))
            .or_insert_with(|| e.clone());
    }
    out
}
