//! Raw byte access to chain state, kept apart from typed encoding (the
//! keyspace modules add typed extension traits on top of these).

use super::{Rows, StoreError};

/// Which key space a listing reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Space {
    /// The verifiable state (part of the app hash).
    State,
    /// The non-verifiable secondary indexes.
    Index,
}

/// Read access to the verifiable state and the non-verifiable index space.
pub trait StateRead {
    /// The latest value under `key` in the verifiable state.
    fn get_raw(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError>;
    /// The latest value under `key` in the index space (not part of the app hash).
    fn get_index_raw(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError>;
    /// Up to `limit` latest (key, value) pairs under `prefix`, strictly after
    /// `after` when given, in key order. Used for bounded walks (collection
    /// members, expiry queues); never for unbounded scans in the consensus path.
    fn prefix_raw(
        &self,
        space: Space,
        prefix: &[u8],
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Rows, StoreError>;
    /// Charges the running tx's gas meter for `work` (see `gas::Metered`);
    /// states without a meter charge nothing.
    ///
    /// # Errors
    /// [`StoreError::OutOfGas`] when the tx's limit would be passed.
    fn charge_gas(&self, work: crate::gas::Work) -> Result<(), StoreError> {
        let _ = work;
        Ok(())
    }
    /// The app version whose rules run (`upgrades/app_version`), read
    /// without charging gas (`gas::Metered` passes it through): which rules
    /// apply is not work a tx asked for, so a rule behind a version check
    /// charges under the old version exactly what the binary without the
    /// check charged, and old blocks replay to the same results.
    fn rules_version(&self) -> Result<u64, StoreError> {
        let key = crate::keyspaces::upgrades::app_version_key();
        crate::keyspaces::upgrades::decode_app_version(&key, self.get_raw(&key)?)
    }
}

/// Reads beyond [`StateRead`] that client queries use: the last block's
/// time and reverse listings. A committed [`super::View`] answers them; so
/// do the recorder behind proven reads and the client's replay of a proof
/// (`crate::proof`), which is why queries take this trait, not a view.
pub trait QueryRead: StateRead {
    /// The last committed block's time, in Unix nanoseconds.
    ///
    /// # Errors
    /// [`StoreError::NoBlockTime`] on a restored node before its first block.
    fn block_time_ns(&self) -> Result<i64, StoreError>;
    /// Up to `limit` rows under `prefix` in descending key order, strictly
    /// before `before` when given.
    fn prefix_raw_rev(
        &self,
        space: Space,
        prefix: &[u8],
        before: Option<&[u8]>,
        limit: usize,
    ) -> Result<Rows, StoreError>;
}

/// Write access. Writes land in an overlay and reach disk only at Commit.
pub trait StateWrite: StateRead {
    fn put_raw(&mut self, key: Vec<u8>, value: Vec<u8>);
    fn delete_raw(&mut self, key: Vec<u8>);
    fn put_index_raw(&mut self, key: Vec<u8>, value: Vec<u8>);
    fn delete_index_raw(&mut self, key: Vec<u8>);
    /// Adds `delta` to the index-space counter under `key` (a big-endian
    /// u64; a counter of 0 is no row) without reading it: the sum is read
    /// back only when the key is read or the block is prepared, so a block
    /// reads each counter once. Listings do not see pending deltas.
    fn add_index_counter(&mut self, key: Vec<u8>, delta: i64);
}

impl<T: StateRead + ?Sized> StateRead for &T {
    fn get_raw(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        (**self).get_raw(key)
    }
    fn get_index_raw(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        (**self).get_index_raw(key)
    }
    fn prefix_raw(
        &self,
        space: Space,
        prefix: &[u8],
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Rows, StoreError> {
        (**self).prefix_raw(space, prefix, after, limit)
    }
    fn charge_gas(&self, work: crate::gas::Work) -> Result<(), StoreError> {
        (**self).charge_gas(work)
    }
    fn rules_version(&self) -> Result<u64, StoreError> {
        (**self).rules_version()
    }
}
