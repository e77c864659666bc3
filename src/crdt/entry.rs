//! The entry state and its join. Every part is a join-semilattice and the
//! entry joins them one by one.

use std::collections::BTreeMap;

use super::lww::{Lww, Whole};
use super::Stamp;

/// A set member: present when its newest add is newer than its newest
/// remove (CAD037's add/remove timestamps, max of each on merge).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Member {
    pub add: Option<Stamp>,
    pub remove: Option<Stamp>,
}

/// A sorted-set member: the score travels with its add, so the score of
/// the newest add wins.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ZMember {
    pub add: Option<Lww<i64>>,
    pub remove: Option<Stamp>,
}

/// One replica's PN-counter accumulators since the reset it last saw
/// (`epoch`): a later epoch replaces them, an equal one takes the max of
/// each column, so an increment concurrent with a reset is lost to the
/// reset rather than carried into the key's next life.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pn {
    pub epoch: Option<Stamp>,
    pub pos: u64,
    pub neg: u64,
}

/// A structural type's elements, and the stamp of the newest write that
/// added to it (removals leave `last` alone: removing from a key that is
/// no longer of this type does not bring the type back).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part<K: Ord, E> {
    pub last: Option<Stamp>,
    pub elems: BTreeMap<K, E>,
}

impl<K: Ord, E> Default for Part<K, E> {
    fn default() -> Self {
        Part {
            last: None,
            elems: BTreeMap::new(),
        }
    }
}

/// An element that joins with another copy of itself.
pub trait Join: Clone {
    fn join(&self, other: &Self) -> Self;
    /// The newest stamp it holds: an element whose newest stamp is at or
    /// below its part's reset can never show again.
    fn newest(&self) -> Option<Stamp>;
}

impl Join for Lww<Option<Vec<u8>>> {
    fn join(&self, other: &Self) -> Self {
        if other.beats(self) {
            other.clone()
        } else {
            self.clone()
        }
    }
    fn newest(&self) -> Option<Stamp> {
        Some(self.stamp)
    }
}

impl Join for Member {
    fn join(&self, other: &Self) -> Self {
        Member {
            add: self.add.max(other.add),
            remove: self.remove.max(other.remove),
        }
    }
    fn newest(&self) -> Option<Stamp> {
        self.add.max(self.remove)
    }
}

impl Join for ZMember {
    fn join(&self, other: &Self) -> Self {
        ZMember {
            add: Lww::join(&self.add, &other.add),
            remove: self.remove.max(other.remove),
        }
    }
    fn newest(&self) -> Option<Stamp> {
        self.add.as_ref().map(|a| a.stamp).max(self.remove)
    }
}

impl Join for Pn {
    fn join(&self, other: &Self) -> Self {
        match self.epoch.cmp(&other.epoch) {
            std::cmp::Ordering::Less => other.clone(),
            std::cmp::Ordering::Greater => self.clone(),
            std::cmp::Ordering::Equal => Pn {
                epoch: self.epoch,
                pos: self.pos.max(other.pos),
                neg: self.neg.max(other.neg),
            },
        }
    }
    fn newest(&self) -> Option<Stamp> {
        self.epoch
    }
}

impl<K: Ord + Clone, E: Join> Part<K, E> {
    pub fn join(&self, other: &Self) -> Self {
        let mut elems = self.elems.clone();
        for (k, e) in &other.elems {
            elems
                .entry(k.clone())
                .and_modify(|mine| *mine = mine.join(e))
                .or_insert_with(|| e.clone());
        }
        Part {
            last: self.last.max(other.last),
            elems,
        }
    }

    /// Joins one element in.
    pub fn put(&mut self, k: K, e: E) {
        match self.elems.get_mut(&k) {
            Some(mine) => *mine = mine.join(&e),
            None => {
                self.elems.insert(k, e);
            }
        }
    }

    /// Notes an adding write at `s`.
    pub fn touch(&mut self, s: Stamp) {
        self.last = self.last.max(Some(s));
    }

    /// Drops the elements no reader can see again: those with nothing newer
    /// than `reset`, which only grows. Reads of this part joined with any
    /// other state are unchanged.
    pub fn prune(&mut self, reset: Option<Stamp>) {
        if reset.is_some() {
            self.elems.retain(|_, e| e.newest() > reset);
        }
    }
}

/// One key's state in a replica (see the module docs).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Entry {
    pub reg: Option<Lww<Whole>>,
    pub hash: Part<Vec<u8>, Lww<Option<Vec<u8>>>>,
    pub set: Part<Vec<u8>, Member>,
    pub zset: Part<Vec<u8>, ZMember>,
    /// Keyed by replica (operator key).
    pub counter: Part<[u8; 32], Pn>,
    /// The deadline (ms since the epoch), or `None` for none.
    pub expiry: Option<Lww<Option<u64>>>,
}

impl Entry {
    /// The join: commutative, associative, idempotent, with the empty
    /// entry as identity.
    pub fn merge(&self, other: &Entry) -> Entry {
        Entry {
            reg: Lww::join(&self.reg, &other.reg),
            hash: self.hash.join(&other.hash),
            set: self.set.join(&other.set),
            zset: self.zset.join(&other.zset),
            counter: self.counter.join(&other.counter),
            expiry: Lww::join(&self.expiry, &other.expiry),
        }
    }

    /// The newest stamp anywhere in the entry.
    pub fn newest(&self) -> Option<Stamp> {
        let parts = [
            self.reg.as_ref().map(|r| r.stamp),
            self.expiry.as_ref().map(|r| r.stamp),
            self.hash.last,
            self.set.last,
            self.zset.last,
            self.counter.last,
        ];
        let elems = self
            .hash
            .elems
            .values()
            .map(Join::newest)
            .chain(self.set.elems.values().map(Join::newest))
            .chain(self.zset.elems.values().map(Join::newest))
            .chain(self.counter.elems.values().map(Join::newest));
        parts.into_iter().chain(elems).max().flatten()
    }
}
