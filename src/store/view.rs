//! A consistent read view: every read through one [`View`] sees the same
//! committed height, however many commits land meanwhile.

use rocksdb::{Direction, IteratorMode, SnapshotWithThreadMode, DB};

use super::{cf, db::handle, state::Space, CommitInfo, Rows, StateRead, StoreError};

/// Committed state as of one RocksDB snapshot.
pub struct View<'a> {
    db: &'a DB,
    snap: SnapshotWithThreadMode<'a, DB>,
}

impl<'a> View<'a> {
    pub(super) fn new(db: &'a DB) -> Self {
        View {
            db,
            snap: db.snapshot(),
        }
    }

    /// The RocksDB snapshot this view reads through.
    pub fn snapshot(&self) -> &SnapshotWithThreadMode<'a, DB> {
        &self.snap
    }

    fn get(&self, cf_name: &str, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.snap.get_cf(handle(self.db, cf_name), key)?)
    }

    /// A meta number (8 bytes, big-endian).
    pub fn meta_u64(&self, key: &[u8]) -> Result<Option<u64>, StoreError> {
        match self.get(cf::META, key)? {
            None => Ok(None),
            Some(raw) => {
                let arr: [u8; 8] = raw
                    .as_slice()
                    .try_into()
                    .map_err(|_| StoreError::corrupt(key, "not 8 bytes"))?;
                Ok(Some(u64::from_be_bytes(arr)))
            }
        }
    }

    /// Height, app hash and chain id of the commit this view sees.
    pub fn commit_info(&self) -> Result<CommitInfo, StoreError> {
        Ok(CommitInfo {
            height: self.meta_u64(cf::meta::HEIGHT)?,
            app_hash: self.get(cf::META, cf::meta::APP_HASH)?.unwrap_or_default(),
            chain_id: self
                .get(cf::META, cf::meta::CHAIN_ID)?
                .map(|raw| String::from_utf8_lossy(&raw).into_owned())
                .unwrap_or_default(),
            earliest_version: self.meta_u64(cf::meta::EARLIEST)?.unwrap_or(0),
            last_block_time_ns: self.meta_u64(cf::meta::LAST_BLOCK_TIME)?.map(|t| t as i64),
        })
    }

    /// The raw meta value under `key`.
    pub fn meta_raw(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.get(cf::META, key)
    }

    /// Flat values under `prefix`, strictly after `start_after`, at most `limit`.
    pub fn prefix_list(
        &self,
        prefix: &[u8],
        start_after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Rows, StoreError> {
        self.list(cf::STATE, prefix, start_after, limit)
    }

    /// Index-space values under `prefix`, strictly after `start_after`, at most `limit`.
    pub fn index_prefix_list(
        &self,
        prefix: &[u8],
        start_after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Rows, StoreError> {
        self.list(cf::INDEX, prefix, start_after, limit)
    }

    fn list(
        &self,
        cf_name: &str,
        prefix: &[u8],
        start_after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Rows, StoreError> {
        let start: Vec<u8> = match start_after {
            Some(after) if after.starts_with(prefix) => {
                let mut s = after.to_vec();
                s.push(0);
                s
            }
            _ => prefix.to_vec(),
        };
        let iter = self.snap.iterator_cf(
            handle(self.db, cf_name),
            IteratorMode::From(&start, Direction::Forward),
        );
        let mut out = Vec::new();
        for item in iter {
            let (k, v) = item?;
            if !k.starts_with(prefix) || out.len() >= limit {
                break;
            }
            out.push((k.to_vec(), v.to_vec()));
        }
        Ok(out)
    }
}

impl StateRead for View<'_> {
    fn get_raw(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.get(cf::STATE, key)
    }
    fn get_index_raw(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.get(cf::INDEX, key)
    }
    fn prefix_raw(
        &self,
        space: Space,
        prefix: &[u8],
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Rows, StoreError> {
        self.list(space_cf(space), prefix, after, limit)
    }
}

impl super::QueryRead for View<'_> {
    fn block_time_ns(&self) -> Result<i64, StoreError> {
        self.commit_info()?.block_time_ns()
    }
    fn prefix_raw_rev(
        &self,
        space: Space,
        prefix: &[u8],
        before: Option<&[u8]>,
        limit: usize,
    ) -> Result<Rows, StoreError> {
        self.prefix_list_rev(space, prefix, before, limit)
    }
}

impl View<'_> {
    /// Up to `limit` rows under `prefix` in descending key order, strictly
    /// before `before` when given.
    pub fn prefix_list_rev(
        &self,
        space: Space,
        prefix: &[u8],
        before: Option<&[u8]>,
        limit: usize,
    ) -> Result<Rows, StoreError> {
        let mut upper = prefix.to_vec();
        upper.extend_from_slice(&[0xff; 64]);
        let start = match before {
            Some(b) if b.starts_with(prefix) => b.to_vec(),
            _ => upper,
        };
        let iter = self.snap.iterator_cf(
            handle(self.db, space_cf(space)),
            IteratorMode::From(&start, Direction::Reverse),
        );
        let mut out = Vec::new();
        for item in iter {
            let (k, v) = item?;
            if before.is_some_and(|b| k.as_ref() >= b) {
                continue;
            }
            if !k.starts_with(prefix) || out.len() >= limit {
                break;
            }
            out.push((k.to_vec(), v.to_vec()));
        }
        Ok(out)
    }
}

/// The column family of a key space.
pub(super) fn space_cf(space: Space) -> &'static str {
    match space {
        Space::State => cf::STATE,
        Space::Index => cf::INDEX,
    }
}
