//! Copy-on-write overlays: one per block over committed state, one per
//! transaction over the block. A tx overlay's changes are merged into the
//! block on success and dropped on error.

use std::collections::BTreeMap;

use super::{StateRead, StateWrite, StoreError};

/// Pending writes: `None` is a delete. Ordered maps, so iteration order (and
/// so the JMT update and the WriteBatch) is deterministic.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Changes {
    pub state: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
    pub index: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
}

impl Changes {
    /// Applies `newer` on top of these changes.
    pub fn merge(&mut self, newer: Changes) {
        self.state.extend(newer.state);
        self.index.extend(newer.index);
    }
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
    fn get_index_raw(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        match self.changes.index.get(key) {
            Some(v) => Ok(v.clone()),
            None => self.base.get_index_raw(key),
        }
    }
}

impl<S: StateRead> StateWrite for Overlay<S> {
    fn put_raw(&mut self, key: Vec<u8>, value: Vec<u8>) {
        self.changes.state.insert(key, Some(value));
    }
    fn delete_raw(&mut self, key: Vec<u8>) {
        self.changes.state.insert(key, None);
    }
    fn put_index_raw(&mut self, key: Vec<u8>, value: Vec<u8>) {
        self.changes.index.insert(key, Some(value));
    }
    fn delete_index_raw(&mut self, key: Vec<u8>) {
        self.changes.index.insert(key, None);
    }
}

/// An in-memory base state, for tests and examples.
#[derive(Debug, Default, Clone)]
pub struct MemState {
    pub state: BTreeMap<Vec<u8>, Vec<u8>>,
    pub index: BTreeMap<Vec<u8>, Vec<u8>>,
}

impl StateRead for MemState {
    fn get_raw(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.state.get(key).cloned())
    }
    fn get_index_raw(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.index.get(key).cloned())
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
}
