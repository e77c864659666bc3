//! Deltas and per-owner states: what a replication layer needs to keep
//! one replica's own writes apart from everyone else's.
//!
//! A write is checked against the merged state of every replica (so it
//! sees what a reader sees), and [`Entry::delta`] takes out what it
//! changed; joining that into the writer's own state records the write.
//! The delta of an element the write changed is the element after the
//! write, which may carry stamps another replica wrote to the same element
//! (the add a removal overrides): they are below the write, and joining
//! them again changes nothing.
//!
//! [`Entry::drop_dominated`] neutralises the parts of an owner's state that
//! others' writes have superseded, so that once a remover's record is
//! collected or ages out, nothing it deleted comes back (the horizon rule
//! of `crate::replica`).

use super::entry::{Entry, Join, Member, Part};
use super::lww::{Lww, Whole};

impl<K: Ord + Clone, E: Join + PartialEq> Part<K, E> {
    fn delta(before: &Self, after: &Self) -> Self {
        Part {
            last: if after.last != before.last {
                after.last
            } else {
                None
            },
            elems: after
                .elems
                .iter()
                .filter(|(k, e)| before.elems.get(*k) != Some(*e))
                .map(|(k, e)| (k.clone(), e.clone()))
                .collect(),
        }
    }
}

/// `after` where it differs from `before`.
fn changed<T: Clone + PartialEq>(before: &Option<T>, after: &Option<T>) -> Option<T> {
    if before != after {
        after.clone()
    } else {
        None
    }
}

impl Entry {
    /// What `after` (a state reached from `before` by local writes, which
    /// only join) holds that `before` does not: `before.merge(delta)` is
    /// `after`.
    pub fn delta(before: &Entry, after: &Entry) -> Entry {
        Entry {
            reg: changed(&before.reg, &after.reg),
            hash: Part::delta(&before.hash, &after.hash),
            set: Part::delta(&before.set, &after.set),
            zset: Part::delta(&before.zset, &after.zset),
            counter: Part::delta(&before.counter, &after.counter),
            expiry: changed(&before.expiry, &after.expiry),
        }
    }

    /// Neutralises in this (one owner's) state what `merged` (the join of
    /// every owner's state, this one included) shows can never be seen
    /// again at `now_ms` or later:
    /// - elements (hash fields, set and sorted-set members, counter
    ///   columns) that another owner's newer write of the same element
    ///   superseded, or that lie at or below their part's reset (another
    ///   type's newer write, a delete, a passed deadline), are dropped, and
    ///   so is a sorted-set add (with its score) another's newer add beat;
    /// - a deadline another owner's newer one replaced is dropped;
    /// - a whole value or list that a newer register replaced, that a newer
    ///   write of another type hides, or that a passed deadline ended,
    ///   becomes a delete at the same stamp; one beaten by another value
    ///   at its very stamp (only a forger makes that tie) is dropped, as a
    ///   delete there would contend with the winner.
    ///
    /// No part's newest-write stamp (a *head*) of `merged` moves (a tied
    /// register's stamp is the winner's too), so no reset moves: while the other owners' states are kept, every read of
    /// `merged` from `now_ms` on is the same after. And once every owner
    /// has done this, dropping any owner's state whole (its record aged
    /// out) never shows anything that was not shown: a delete stays a
    /// delete (the horizon law in `tests/owners.rs`).
    pub fn drop_dominated(&mut self, merged: &Entry, now_ms: u64) {
        let end = merged.passed_deadline(now_ms);
        let [h, s, z, c] = merged.part_resets().map(|r| r.max(end));
        let hidden = merged.whole_reset().max(end);
        if let Some(mine) = &self.reg {
            let top = merged.reg.as_ref();
            let beaten = top.is_some_and(|top| top != mine);
            // beaten at its own stamp (another value under the same stamp,
            // which only a forger makes): a tombstone there would contend
            // with the winner's tie, so nothing is kept
            let tied = beaten && top.is_some_and(|top| top.stamp == mine.stamp);
            let live = !matches!(mine.value, Whole::Tombstone);
            if tied {
                self.reg = None;
            } else if live && (beaten || Some(mine.stamp) <= hidden) {
                self.reg = Some(Lww::new(mine.stamp, Whole::Tombstone));
            }
        }
        if let (Some(mine), Some(top)) = (&self.expiry, &merged.expiry) {
            if top != mine {
                self.expiry = None;
            }
        }
        self.hash
            .elems
            .retain(|f, mine| merged.hash.elems.get(f) == Some(mine) && Some(mine.stamp) > h);
        self.set.elems.retain(|m, mine| {
            let top = merged.set.elems.get(m).cloned().unwrap_or_default();
            !set_dominated(mine, &top) && mine.newest() > s
        });
        self.zset.elems.retain(|m, mine| {
            let top = merged.zset.elems.get(m).cloned().unwrap_or_default();
            // an add another's newer add beat: its score must not come back
            if mine.add != top.add {
                mine.add = None;
            }
            let add = mine.add.as_ref().map(|a| a.stamp);
            let gone = add <= top.remove && mine.remove < top.remove;
            !gone && mine.newest() > z
        });
        self.counter.elems.retain(|_, p| p.epoch >= c);
    }
}

/// A member whose add lies at or below a removal another owner made, and
/// whose own removal (if any) is not the newest.
fn set_dominated(mine: &Member, top: &Member) -> bool {
    mine.add <= top.remove && mine.remove < top.remove
}
