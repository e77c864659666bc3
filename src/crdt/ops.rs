//! Local writes and collection. Each write checks the type a reader sees at
//! the write's time (refusing a write of another type, as Redis answers
//! WRONGTYPE), then joins a small state into the entry: applying a write
//! here and merging it in elsewhere give the same state.

use super::entry::{Entry, Member, Pn, ZMember};
use super::lww::{Lww, Whole};
use super::read::{Kind, Visible};
use super::Stamp;

/// A write of one type to a key that holds another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the key holds a {found:?} value; this write needs a {wanted:?}")]
pub struct WrongType {
    pub found: Kind,
    pub wanted: Kind,
}

impl Entry {
    /// Checks the type a reader sees at the write's time.
    fn check(&self, s: Stamp, wanted: Kind) -> Result<Option<Visible>, WrongType> {
        let seen = self.read(s.ms).map(|v| v.value);
        match seen.as_ref().map(Visible::kind) {
            Some(found) if found != wanted => Err(WrongType { found, wanted }),
            _ => Ok(seen),
        }
    }

    /// Writes a passed deadline down as a tombstone, so a new deadline
    /// (which replaces this one in its register) cannot bring back what
    /// it ended. Reads are the same before and after; only a write to the
    /// deadline register needs it.
    fn settle(&mut self, now_ms: u64) {
        if let Some(end) = self.passed_deadline(now_ms) {
            Lww::join_into(&mut self.reg, Lww::new(end, Whole::Tombstone));
        }
    }

    /// When a removal left the structure empty (it reads as absent, as
    /// Redis deletes it), clears its deadline too, so the next add starts
    /// without one. Not a tombstone: an add made concurrently elsewhere
    /// must survive.
    fn drop_if_empty(&mut self, s: Stamp) {
        if self.read(s.ms).is_none() {
            self.settle(s.ms);
            Lww::join_into(&mut self.expiry, Lww::new(s, None));
        }
    }

    /// SET: a whole value, with an optional deadline (ms since the epoch).
    /// A SET without one clears the key's deadline; one already passed
    /// deletes the key.
    pub fn set(&mut self, s: Stamp, value: Vec<u8>, expire_at: Option<u64>) {
        if expire_at.is_some_and(|at| at <= s.ms) {
            return self.del(s);
        }
        Lww::join_into(&mut self.reg, Lww::new(s, Whole::Value(value)));
        if let Some(at) = expire_at {
            Lww::join_into(&mut self.expiry, Lww::new(s, Some(at)));
        }
    }

    /// A whole list (CAD037 lists merge as one value).
    pub fn set_list(&mut self, s: Stamp, items: Vec<Vec<u8>>) {
        Lww::join_into(&mut self.reg, Lww::new(s, Whole::List(items)));
    }

    /// DEL: a tombstone.
    pub fn del(&mut self, s: Stamp) {
        Lww::join_into(&mut self.reg, Lww::new(s, Whole::Tombstone));
    }

    pub fn hset(&mut self, s: Stamp, field: Vec<u8>, value: Vec<u8>) -> Result<(), WrongType> {
        self.check(s, Kind::Hash)?;
        self.hash.touch(s);
        self.hash.put(field, Lww::new(s, Some(value)));
        Ok(())
    }

    /// HDEL; whether the field was there.
    pub fn hdel(&mut self, s: Stamp, field: &[u8]) -> Result<bool, WrongType> {
        let had =
            matches!(self.check(s, Kind::Hash)?, Some(Visible::Hash(h)) if h.contains_key(field));
        if had {
            self.hash.put(field.to_vec(), Lww::new(s, None));
            self.drop_if_empty(s);
        }
        Ok(had)
    }

    /// SADD; how many members were new.
    pub fn sadd(&mut self, s: Stamp, members: &[Vec<u8>]) -> Result<usize, WrongType> {
        let before = match self.check(s, Kind::Set)? {
            Some(Visible::Set(m)) => m,
            _ => Default::default(),
        };
        self.set.touch(s);
        for m in members {
            let add = Member {
                add: Some(s),
                remove: None,
            };
            self.set.put(m.clone(), add);
        }
        let new: std::collections::BTreeSet<_> = members.iter().collect();
        Ok(new.into_iter().filter(|m| !before.contains(*m)).count())
    }

    /// SREM of the members a reader sees; how many were removed.
    pub fn srem(&mut self, s: Stamp, members: &[Vec<u8>]) -> Result<usize, WrongType> {
        let Some(Visible::Set(live)) = self.check(s, Kind::Set)? else {
            return Ok(0);
        };
        let gone: std::collections::BTreeSet<_> =
            members.iter().filter(|m| live.contains(*m)).collect();
        for m in &gone {
            let rm = Member {
                add: None,
                remove: Some(s),
            };
            self.set.put((*m).clone(), rm);
        }
        self.drop_if_empty(s);
        Ok(gone.len())
    }

    pub fn zadd(&mut self, s: Stamp, member: Vec<u8>, score: i64) -> Result<(), WrongType> {
        self.check(s, Kind::ZSet)?;
        self.zset.touch(s);
        let add = ZMember {
            add: Some(Lww::new(s, score)),
            remove: None,
        };
        self.zset.put(member, add);
        Ok(())
    }

    /// ZREM of the members a reader sees; how many were removed.
    pub fn zrem(&mut self, s: Stamp, members: &[Vec<u8>]) -> Result<usize, WrongType> {
        let Some(Visible::ZSet(live)) = self.check(s, Kind::ZSet)? else {
            return Ok(0);
        };
        let gone: std::collections::BTreeSet<_> =
            members.iter().filter(|m| live.contains_key(*m)).collect();
        for m in &gone {
            let rm = ZMember {
                add: None,
                remove: Some(s),
            };
            self.zset.put((*m).clone(), rm);
        }
        self.drop_if_empty(s);
        Ok(gone.len())
    }

    /// INCRBY (DECRBY with a negative amount) on this replica's
    /// accumulators, which start again from zero after a reset; the value
    /// a reader now sees. An increment stamped before the current life's
    /// reset (a clock behind a delete) belongs to an earlier life and
    /// changes nothing. Accumulators saturate at `u64::MAX`.
    pub fn incr_by(&mut self, s: Stamp, amount: i64) -> Result<i128, WrongType> {
        self.check(s, Kind::Counter)?;
        let prev = self.counter.last;
        self.counter.touch(s);
        let epoch = match self.life(s.ms) {
            Some((life, _)) if life.kind == Kind::Counter => life.reset,
            _ => self.part_resets()[3],
        };
        if epoch > Some(s) {
            self.counter.last = prev;
            return Ok(self.counter_value(s.ms));
        }
        let mut pn = self
            .counter
            .elems
            .get(&s.replica)
            .cloned()
            .unwrap_or_default();
        if pn.epoch < epoch {
            pn = Pn {
                epoch,
                pos: 0,
                neg: 0,
            };
        }
        if amount >= 0 {
            pn.pos = pn.pos.saturating_add(amount.unsigned_abs());
        } else {
            pn.neg = pn.neg.saturating_add(amount.unsigned_abs());
        }
        self.counter.elems.insert(s.replica, pn);
        Ok(self.counter_value(s.ms))
    }

    fn counter_value(&self, now_ms: u64) -> i128 {
        match self.read(now_ms).map(|v| v.value) {
            Some(Visible::Counter(n)) => n,
            _ => 0,
        }
    }

    /// EXPIRE to `at` (ms since the epoch), or PERSIST with `None`; false
    /// when the key is absent at the write's time. A time already past
    /// deletes the key, so a deadline register always lies after its own
    /// write (and a passed deadline never ties with a write's stamp).
    pub fn expire(&mut self, s: Stamp, at: Option<u64>) -> bool {
        if self.read(s.ms).is_none() {
            return false;
        }
        self.settle(s.ms);
        match at {
            Some(at) if at <= s.ms => self.del(s),
            _ => Lww::join_into(&mut self.expiry, Lww::new(s, at)),
        }
        true
    }

    /// Drops what no reader can see again: elements superseded by a reset
    /// (always safe: a merge with any state reads the same) and, older
    /// than `horizon_ms`, removed elements. True when the whole entry can
    /// go: it reads absent at `now_ms` and holds nothing newer than the
    /// horizon.
    ///
    /// # Invariants
    ///
    /// Pruning is always safe. Collecting below the horizon is safe only if
    /// no state holding an element older than the horizon is merged in
    /// afterwards, unless it also holds what removed it: replication must
    /// refuse such state, and a replica cut off for longer than the
    /// horizon must copy its peers afresh. `crate::replica` makes that
    /// refusal: a record whose timestamp is older than the horizon is
    /// refused before it is merged.
    pub fn collect(&mut self, now_ms: u64, horizon_ms: u64) -> bool {
        let [h, s, z, c] = self.part_resets();
        self.hash.prune(h);
        self.set.prune(s);
        self.zset.prune(z);
        self.counter.elems.retain(|_, p| p.epoch >= c);
        let old = |st: Option<Stamp>| st.is_none_or(|x| x.ms < horizon_ms);
        self.hash
            .elems
            .retain(|_, f| f.value.is_some() || !old(Some(f.stamp)));
        self.set
            .elems
            .retain(|_, m| m.add > m.remove || !old(m.add.max(m.remove)));
        self.zset.elems.retain(|_, m| {
            let add = m.add.as_ref().map(|a| a.stamp);
            add > m.remove || !old(add.max(m.remove))
        });
        self.read(now_ms).is_none() && old(self.newest())
    }
}
