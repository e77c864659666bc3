//! Copy-on-write overlays: one per block over committed state, one per
//! transaction over the block. A tx overlay's changes are merged into the
//! block on success and dropped on error.

use std::collections::BTreeMap;

use super::{state::Space, Rows, StateRead, StateWrite, StoreError};

/// Pending writes: `None` is a delete. Ordered maps, so iteration order (and
/// so the JMT update and the WriteBatch) is deterministic.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Changes {
    pub state: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
    pub index: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
    /// Pending counter deltas of index-space keys, applied after `index`'s
    /// value for the same key (a write to the key clears its delta).
    pub counters: BTreeMap<Vec<u8>, i64>,
}

impl Changes {
    /// Key plus value bytes of every row these changes write, in both
    /// spaces: an upper bound on what applying them adds to the store.
    pub fn written_bytes(&self) -> u64 {
        self.state
            .iter()
            .chain(&self.index)
            .filter_map(|(k, v)| v.as_ref().map(|v| (k.len() + v.len()) as u64))
            .sum()
    }

    /// Applies `newer` on top of these changes.
    pub fn merge(&mut self, newer: Changes) {
        self.state.extend(newer.state);
        for (k, v) in newer.index {
            self.counters.remove(&k);
            self.index.insert(k, v);
        }
        for (k, d) in newer.counters {
            *self.counters.entry(k).or_default() += d;
        }
    }

    /// Folds the counter deltas into index writes, reading each counter's
    /// value under these changes from `base` (`read`).
    pub fn resolve_counters<F>(&mut self, read: F) -> Result<(), StoreError>
    where
        F: Fn(&[u8]) -> Result<Option<Vec<u8>>, StoreError> + Sync,
    {
        let counters: Vec<(Vec<u8>, i64)> =
            std::mem::take(&mut self.counters).into_iter().collect();
        let index = &self.index;
        let resolved = crate::par::map(&counters, |(k, d)| -> Result<_, StoreError> {
            let base = match index.get(k) {
                Some(v) => v.clone(),
                None => read(k)?,
            };
            Ok((k.clone(), counter_plus(k, base, *d)?))
        });
        for r in resolved {
            let (k, v) = r?;
            self.index.insert(k, v);
        }
        Ok(())
    }
}

/// A stored counter (absent = 0) plus `delta`, as it is stored (0 = no row).
fn counter_plus(
    key: &[u8],
    raw: Option<Vec<u8>>,
    delta: i64,
) -> Result<Option<Vec<u8>>, StoreError> {
    let n = match raw {
        None => 0,
        Some(r) => u64::from_be_bytes(
            r.as_slice()
                .try_into()
                .map_err(|_| StoreError::corrupt(key, "counter is not 8 bytes"))?,
        ),
    };
    let n = n.saturating_add_signed(delta);
    Ok((n != 0).then(|| n.to_be_bytes().to_vec()))
}

/// A layer of pending writes over a readable base.
///
/// # Examples
/// ```
/// use stave::store::{Overlay, StateRead, StateWrite, MemState};
/// let base = MemState::default();
/// let mut tx = Overlay::new(&base);
/// tx.put_raw(b"k".to_vec(), b"v".to_vec());
/// assert_eq!(tx.get_raw(b"k").unwrap(), Some(b"v".to_vec()));
/// let changes = tx.into_changes(); // apply on success, or just drop
/// assert_eq!(changes.state.len(), 1);
/// ```
pub struct Overlay<S> {
    base: S,
    changes: Changes,
}

impl<S: StateRead> Overlay<S> {
    pub fn new(base: S) -> Self {
        Overlay {
            base,
            changes: Changes::default(),
        }
    }

    /// The writes made in this overlay, to be merged into its parent.
    /// The state this overlay's writes sit on.
    pub fn base(&self) -> &S {
        &self.base
    }

    pub fn into_changes(self) -> Changes {
        self.changes
    }

    pub fn changes(&self) -> &Changes {
        &self.changes
    }

    /// Merges a child overlay's changes into this one.
    pub fn apply(&mut self, child: Changes) {
        self.changes.merge(child);
    }
}

impl<S: StateRead> StateRead for Overlay<S> {
    fn get_raw(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        match self.changes.state.get(key) {
            Some(v) => Ok(v.clone()),
            None => self.base.get_raw(key),
        }
    }
    /// Unmetered all the way down, whatever the base (see
    /// [`StateRead::rules_version`]).
    fn rules_version(&self) -> Result<u64, StoreError> {
        let key = crate::keyspaces::upgrades::app_version_key();
        match self.changes.state.get(&key) {
            Some(v) => crate::keyspaces::upgrades::decode_app_version(&key, v.clone()),
            None => self.base.rules_version(),
        }
    }
    fn get_index_raw(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        let v = match self.changes.index.get(key) {
            Some(v) => v.clone(),
            None => self.base.get_index_raw(key)?,
        };
        match self.changes.counters.get(key) {
            Some(d) => counter_plus(key, v, *d),
            None => Ok(v),
        }
    }
    fn prefix_raw(
        &self,
        space: Space,
        prefix: &[u8],
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Rows, StoreError> {
        let map = match space {
            Space::State => &self.changes.state,
            Space::Index => &self.changes.index,
        };
        let mine = map_range(map, prefix, after);
        merge_listing(&self.base, space, prefix, after, limit, &mine)
    }

    /// An overlay inside a metered one is metered too.
    fn charge_gas(&self, work: crate::gas::Work) -> Result<(), StoreError> {
        self.base.charge_gas(work)
    }
}

/// Pending writes under `prefix`, strictly after `after`, in key order.
fn map_range<'m, V>(
    map: &'m BTreeMap<Vec<u8>, V>,
    prefix: &[u8],
    after: Option<&[u8]>,
) -> Vec<(&'m Vec<u8>, &'m V)> {
    use std::ops::Bound;
    let lower = match after {
        Some(a) if a >= prefix => Bound::Excluded(a.to_vec()),
        _ => Bound::Included(prefix.to_vec()),
    };
    map.range((lower, Bound::Unbounded))
        .take_while(|(k, _)| k.starts_with(prefix))
        .collect()
}

/// Merges a base listing with pending writes (a `None` hides a base row),
/// reading the base in pages until `limit` rows are found or it runs out.
fn merge_listing<S: StateRead>(
    base: &S,
    space: Space,
    prefix: &[u8],
    after: Option<&[u8]>,
    limit: usize,
    mine: &[(&Vec<u8>, &Option<Vec<u8>>)],
) -> Result<Rows, StoreError> {
    let mut out: Rows = Vec::new();
    let mut oi = 0;
    let mut cursor: Option<Vec<u8>> = after.map(<[u8]>::to_vec);
    let page = limit.clamp(1, 1024);
    loop {
        let rows = base.prefix_raw(space, prefix, cursor.as_deref(), page)?;
        let done = rows.len() < page;
        for (k, v) in rows {
            while oi < mine.len() && mine[oi].0 < &k {
                if let Some(val) = mine[oi].1 {
                    out.push((mine[oi].0.clone(), val.clone()));
                }
                oi += 1;
            }
            if oi < mine.len() && mine[oi].0 == &k {
                if let Some(val) = mine[oi].1 {
                    out.push((k.clone(), val.clone()));
                }
                oi += 1;
            } else {
                out.push((k.clone(), v));
            }
            cursor = Some(k);
            if out.len() >= limit {
                out.truncate(limit);
                return Ok(out);
            }
        }
        if done {
            break;
        }
    }
    for (k, v) in &mine[oi..] {
        if out.len() >= limit {
            break;
        }
        if let Some(val) = v {
            out.push(((*k).clone(), val.clone()));
        }
    }
    Ok(out)
}

impl<S: StateRead> StateWrite for Overlay<S> {
    fn put_raw(&mut self, key: Vec<u8>, value: Vec<u8>) {
        self.changes.state.insert(key, Some(value));
    }
    fn delete_raw(&mut self, key: Vec<u8>) {
        self.changes.state.insert(key, None);
    }
    fn put_index_raw(&mut self, key: Vec<u8>, value: Vec<u8>) {
        self.changes.counters.remove(&key);
        self.changes.index.insert(key, Some(value));
    }
    fn delete_index_raw(&mut self, key: Vec<u8>) {
        self.changes.counters.remove(&key);
        self.changes.index.insert(key, None);
    }
    fn add_index_counter(&mut self, key: Vec<u8>, delta: i64) {
        *self.changes.counters.entry(key).or_default() += delta;
    }
}

/// An in-memory base state, for tests and examples.
#[derive(Debug, Default, Clone)]
pub struct MemState {
    pub state: BTreeMap<Vec<u8>, Vec<u8>>,
    pub index: BTreeMap<Vec<u8>, Vec<u8>>,
}

impl MemState {
    /// Writes an overlay's changes (a committed tx, in tests and tools).
    pub fn apply_changes(&mut self, c: Changes) {
        for (space, rows) in [(&mut self.state, c.state), (&mut self.index, c.index)] {
            for (k, v) in rows {
                match v {
                    Some(v) => space.insert(k, v),
                    None => space.remove(&k),
                };
            }
        }
    }
}

impl StateRead for MemState {
    fn get_raw(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.state.get(key).cloned())
    }
    fn get_index_raw(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.index.get(key).cloned())
    }
    fn prefix_raw(
        &self,
        space: Space,
        prefix: &[u8],
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Rows, StoreError> {
        let map = match space {
            Space::State => &self.state,
            Space::Index => &self.index,
        };
        Ok(map_range(map, prefix, after)
            .into_iter()
            .take(limit)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tx_overlay_applied_on_success_and_dropped_on_error() {
        let mut base = MemState::default();
        base.state.insert(b"a".to_vec(), b"1".to_vec());
        let mut block = Overlay::new(&base);

        // success: merged into the block
        let mut ok = Overlay::new(&block);
        ok.put_raw(b"b".to_vec(), b"2".to_vec());
        ok.delete_raw(b"a".to_vec());
        let changes = ok.into_changes();
        block.apply(changes);
        assert_eq!(block.get_raw(b"b").unwrap(), Some(b"2".to_vec()));
        assert_eq!(block.get_raw(b"a").unwrap(), None);

        // error: dropped, block unchanged
        let mut failed = Overlay::new(&block);
        failed.put_raw(b"c".to_vec(), b"3".to_vec());
        assert_eq!(failed.get_raw(b"c").unwrap(), Some(b"3".to_vec()));
        drop(failed);
        assert_eq!(block.get_raw(b"c").unwrap(), None);
        assert_eq!(block.changes().state.len(), 2);
        // the base itself never changes before commit
        assert_eq!(base.get_raw(b"a").unwrap(), Some(b"1".to_vec()));
    }

    #[test]
    fn overlay_listing_merges_pending_writes_and_hides_deletes() {
        let mut base = MemState::default();
        for i in 0u8..10 {
            base.state.insert(vec![b'p', i], vec![i]);
        }
        base.state.insert(b"q".to_vec(), b"x".to_vec());
        let mut o = Overlay::new(&base);
        o.delete_raw(vec![b'p', 3]);
        o.put_raw(vec![b'p', 3, 1], vec![99]);
        o.put_raw(vec![b'p', 20], vec![20]);
        let all = o.prefix_raw(Space::State, b"p", None, 100).unwrap();
        let keys: Vec<Vec<u8>> = all.iter().map(|(k, _)| k.clone()).collect();
        let mut want: Vec<Vec<u8>> = (0u8..10)
            .filter(|i| *i != 3)
            .map(|i| vec![b'p', i])
            .collect();
        want.push(vec![b'p', 3, 1]);
        want.push(vec![b'p', 20]);
        want.sort();
        assert_eq!(keys, want);
        let page = o
            .prefix_raw(Space::State, b"p", Some(&[b'p', 2]), 2)
            .unwrap();
        assert_eq!(page[0].0, vec![b'p', 3, 1]);
        assert_eq!(page[1].0, vec![b'p', 4]);
    }

    fn count(o: &impl StateRead, k: &[u8]) -> u64 {
        o.get_index_raw(k)
            .unwrap()
            .map(|v| u64::from_be_bytes(v.try_into().unwrap()))
            .unwrap_or(0)
    }

    #[test]
    fn counter_deltas_read_through_layers_and_resolve_once() {
        let mut base = MemState::default();
        base.index
            .insert(b"c1".to_vec(), 5u64.to_be_bytes().to_vec());
        base.index
            .insert(b"c2".to_vec(), 1u64.to_be_bytes().to_vec());
        let mut block = Overlay::new(&base);
        block.add_index_counter(b"c1".to_vec(), 2);
        let mut tx = Overlay::new(&block);
        tx.add_index_counter(b"c1".to_vec(), -1);
        tx.add_index_counter(b"c2".to_vec(), -1);
        tx.add_index_counter(b"c3".to_vec(), 1);
        assert_eq!((count(&tx, b"c1"), count(&tx, b"c2")), (6, 0));
        assert_eq!(tx.get_index_raw(b"c2").unwrap(), None, "0 is no row");
        // A dropped tx leaves the block's deltas alone.
        assert_eq!(count(&block, b"c1"), 7);
        block.apply(tx.into_changes());
        // A write replaces every earlier delta of its key; later ones add.
        let mut tx = Overlay::new(&block);
        tx.put_index_raw(b"c3".to_vec(), 10u64.to_be_bytes().to_vec());
        tx.add_index_counter(b"c3".to_vec(), 1);
        block.apply(tx.into_changes());
        assert_eq!(count(&block, b"c3"), 11);
        let mut changes = block.into_changes();
        changes.resolve_counters(|k| base.get_index_raw(k)).unwrap();
        assert!(changes.counters.is_empty());
        assert_eq!(
            changes.index.get(&b"c1"[..]),
            Some(&Some(6u64.to_be_bytes().to_vec()))
        );
        assert_eq!(changes.index.get(&b"c2"[..]), Some(&None));
        assert_eq!(
            changes.index.get(&b"c3"[..]),
            Some(&Some(11u64.to_be_bytes().to_vec()))
        );
    }
}
