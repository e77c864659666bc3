//! The local store: this validator's own RocksDB at `<home>/data/local`,
//! never part of the app hash, plus the content store under
//! `<home>/content/`.
//!
//! Keyspaces (one module each, keys only from [`keys`]):
//! - [`deks`]: `local/deks/{cid}`, this validator's wrapped DEKs;
//! - [`processing`]: `local/processing/{job_id}`, the upload pipeline's
//!   scratch and its job state machine;
//! - [`sync`]: `local/sync/content/{cid}` and `local/sync/deks/{cid}`, what
//!   this validator holds and what it still needs;
//! - [`grants`]: `local/access/`, the DEKs delivered to consumers and not
//!   yet recorded on chain, and the answered request nonces;
//! - [`kv`]: `local/kv/{context}/{key}`, the node's private KV (BRC-35
//!   local profile), encrypted by default;
//! - [`purge`]: `local/purged/{cid}`, uploads under a CONFIRMED takedown
//!   whose files and DEK this node deleted once its retention passed.
//!
//! [`keyring`] holds the X25519 keys DEKs are wrapped to, and re-wraps
//! every held DEK when the chain names a new one.
//!
//! [`reconcile`] decides, as a pure function, what is missing; [`worker`]
//! fetches it from peers ([`peer_client`]) after every committed block;
//! [`confirm`] tells the chain when a handover's joining member (this
//! validator) holds what it joined for.

pub mod assignments;
pub mod confirm;
pub mod content;
pub mod deks;
pub mod grants;
pub mod has_content;
pub mod keyring;
pub mod keys;
pub mod kv;
pub mod node;
pub mod peer_auth;
pub mod peer_client;
pub mod processing;
pub mod purge;
pub mod reconcile;
pub mod status;
pub mod sync;
pub mod worker;

use std::path::Path;
use std::sync::Arc;

use rocksdb::{Direction, IteratorMode, Options, WriteOptions, DB};
use thiserror::Error;

/// Why a local-store operation failed.
#[derive(Debug, Error)]
pub enum LocalError {
    #[error("local store: {0}")]
    Db(#[from] rocksdb::Error),
    #[error("local store record {key} is corrupt: {reason}")]
    Corrupt { key: String, reason: String },
    #[error("job {job}: {from} cannot go to {to}")]
    Transition {
        job: String,
        from: &'static str,
        to: &'static str,
    },
    #[error("job {0} not found")]
    JobNotFound(String),
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Crypto(#[from] crate::crypto::CryptoError),
}

impl LocalError {
    pub fn corrupt(key: &[u8], reason: impl std::fmt::Display) -> Self {
        LocalError::Corrupt {
            key: String::from_utf8_lossy(key).into_owned(),
            reason: reason.to_string(),
        }
    }
}

/// Key-value rows, in key order.
pub type Rows = Vec<(Vec<u8>, Vec<u8>)>;

/// Raw byte access to the local store. Typed access lives in the keyspace
/// modules' extension traits; nothing else calls these.
pub trait LocalRaw {
    fn get_raw(&self, key: &[u8]) -> Result<Option<Vec<u8>>, LocalError>;
    fn put_raw(&self, key: &[u8], value: &[u8]) -> Result<(), LocalError>;
    fn delete_raw(&self, key: &[u8]) -> Result<(), LocalError>;
    /// Writes every `(key, value)` row in one synced batch: all or none.
    fn put_raw_all(&self, rows: &[(Vec<u8>, Vec<u8>)]) -> Result<(), LocalError>;
    /// Every row under `prefix`, in key order.
    fn scan_raw(&self, prefix: &[u8]) -> Result<Rows, LocalError>;
    /// Deletes every key in one synced batch: all or none.
    fn delete_raw_all(&self, keys: &[Vec<u8>]) -> Result<(), LocalError>;
    /// Writes `puts` and deletes `deletes` in one synced batch.
    fn apply_raw(&self, puts: &[(Vec<u8>, Vec<u8>)], deletes: &[Vec<u8>])
        -> Result<(), LocalError>;
    /// Rows under `prefix` from `from` (inclusive) in key order: at most
    /// `limit`, and no more once their values pass `max_bytes` (one row is
    /// returned whatever its size). True when more rows follow.
    fn scan_raw_page(
        &self,
        prefix: &[u8],
        from: &[u8],
        limit: usize,
        max_bytes: usize,
    ) -> Result<(Rows, bool), LocalError>;
}

/// Creates `path` (and missing parents) readable by this user only (0700),
/// and narrows an existing one to 0700.
pub fn private_dir(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))
}

/// Handle to the local store. Cheap to clone.
#[derive(Clone)]
pub struct LocalStore {
    db: Arc<DB>,
    /// Serialises read-then-write and delete of DEK records between their
    /// writers (the upload pipeline, an X25519 re-wrap).
    deks: Arc<parking_lot::Mutex<()>>,
}

impl LocalStore {
    /// Opens or creates the local store at `path` (`<home>/data/local`).
    pub fn open(path: &Path) -> Result<Self, LocalError> {
        private_dir(path)?;
        let mut opts = Options::default();
        opts.create_if_missing(true);
        opts.set_keep_log_file_num(3);
        opts.set_max_background_jobs(1);
        Ok(LocalStore {
            db: Arc::new(DB::open(&opts, path)?),
            deks: Default::default(),
        })
    }

    /// Opens the local store; if RocksDB reports it corrupt, moves it aside
    /// to `<path>.corrupt-<unix ms>` and starts an empty one, which the
    /// reconciler refills from peers. Any other failure (a lock held by a
    /// running node, permissions) is returned: only corruption is healed.
    /// Returns the store and where the corrupt one went, if it moved.
    pub fn open_or_rebuild(path: &Path) -> Result<(Self, Option<std::path::PathBuf>), LocalError> {
        match Self::open(path) {
            Ok(s) => Ok((s, None)),
            Err(LocalError::Db(e)) if e.kind() == rocksdb::ErrorKind::Corruption => {
                let mut aside = path.as_os_str().to_owned();
                aside.push(format!(".corrupt-{}", peer_auth::now_ms()));
                let aside = std::path::PathBuf::from(aside);
                tracing::error!(error = %e, moved_to = %aside.display(), "local store is corrupt; starting an empty one");
                std::fs::rename(path, &aside)?;
                Ok((Self::open(path)?, Some(aside)))
            }
            Err(e) => Err(e),
        }
    }

    /// A consistent copy of the store at `to` (a RocksDB checkpoint: hard
    /// links where the file system allows, copies otherwise).
    pub fn checkpoint(&self, to: &Path) -> Result<(), LocalError> {
        rocksdb::checkpoint::Checkpoint::new(&self.db)?.create_checkpoint(to)?;
        Ok(())
    }

    /// Opens the local store read-only, beside a running node (tests and
    /// diagnostics; it sees what was written before it opened).
    pub fn open_read_only(path: &Path) -> Result<Self, LocalError> {
        Ok(LocalStore {
            db: Arc::new(DB::open_for_read_only(&Options::default(), path, false)?),
            deks: Default::default(),
        })
    }

    /// Held while a DEK record is read, then written or deleted, so that
    /// two writers cannot interleave. Taken after the X25519 keyring, never
    /// before it.
    pub fn dek_lock(&self) -> parking_lot::MutexGuard<'_, ()> {
        self.deks.lock()
    }

    /// Flushes the memtable and compacts each of `keys` down to the last
    /// level, so a deleted value leaves the store's files rather than
    /// staying behind its tombstone (a purged wrapped DEK). Blocks that
    /// the file system freed may still hold old bytes.
    pub fn scrub(&self, keys: &[Vec<u8>]) -> Result<(), LocalError> {
        self.db.flush()?;
        let mut opts = rocksdb::CompactOptions::default();
        opts.set_bottommost_level_compaction(rocksdb::BottommostLevelCompaction::Force);
        for k in keys {
            let end = [k.as_slice(), &[0]].concat();
            self.db.compact_range_opt(Some(k), Some(&end), &opts);
        }
        Ok(())
    }

    fn synced() -> WriteOptions {
        let mut o = WriteOptions::default();
        o.set_sync(true);
        o
    }
}

impl LocalRaw for LocalStore {
    fn get_raw(&self, key: &[u8]) -> Result<Option<Vec<u8>>, LocalError> {
        Ok(self.db.get(key)?)
    }
    fn put_raw(&self, key: &[u8], value: &[u8]) -> Result<(), LocalError> {
        Ok(self.db.put_opt(key, value, &Self::synced())?)
    }
    fn delete_raw(&self, key: &[u8]) -> Result<(), LocalError> {
        Ok(self.db.delete_opt(key, &Self::synced())?)
    }
    fn put_raw_all(&self, rows: &[(Vec<u8>, Vec<u8>)]) -> Result<(), LocalError> {
        let mut batch = rocksdb::WriteBatch::default();
        for (k, v) in rows {
            batch.put(k, v);
        }
        Ok(self.db.write_opt(batch, &Self::synced())?)
    }
    fn delete_raw_all(&self, keys: &[Vec<u8>]) -> Result<(), LocalError> {
        self.apply_raw(&[], keys)
    }
    fn apply_raw(
        &self,
        puts: &[(Vec<u8>, Vec<u8>)],
        deletes: &[Vec<u8>],
    ) -> Result<(), LocalError> {
        let mut batch = rocksdb::WriteBatch::default();
        for (k, v) in puts {
            batch.put(k, v);
        }
        for k in deletes {
            batch.delete(k);
        }
        Ok(self.db.write_opt(batch, &Self::synced())?)
    }
    fn scan_raw(&self, prefix: &[u8]) -> Result<Rows, LocalError> {
        let mut out = Vec::new();
        for item in self
            .db
            .iterator(IteratorMode::From(prefix, Direction::Forward))
        {
            let (k, v) = item?;
            if !k.starts_with(prefix) {
                break;
            }
            out.push((k.to_vec(), v.to_vec()));
        }
        Ok(out)
    }
    fn scan_raw_page(
        &self,
        prefix: &[u8],
        from: &[u8],
        limit: usize,
        max_bytes: usize,
    ) -> Result<(Rows, bool), LocalError> {
        let start = from.max(prefix);
        let (mut out, mut bytes) = (Vec::new(), 0usize);
        for item in self
            .db
            .iterator(IteratorMode::From(start, Direction::Forward))
        {
            let (k, v) = item?;
            if !k.starts_with(prefix) {
                break;
            }
            let full = out.len() >= limit || (!out.is_empty() && bytes + v.len() > max_bytes);
            if full {
                return Ok((out, true));
            }
            bytes += v.len();
            out.push((k.to_vec(), v.to_vec()));
        }
        Ok((out, false))
    }
}

/// Where `stave start` reads assignments from: the committed `uploads/`
/// keyspace.
pub fn chain_assignments() -> Arc<dyn assignments::AssignmentSource> {
    Arc::new(assignments::ChainAssignments)
}

/// The rows of `rows` that decode, keyed by the id after `prefix`. A row
/// that does not decode is skipped, logged and counted
/// (`stave_local_corrupt_rows_total`): the local store is rebuildable, so
/// one bad row must not stop every reconcile round. The reconciler then
/// sees the entry as missing and writes it again.
pub(crate) fn decode_rows<M: prost::Message + Default>(
    prefix: &[u8],
    rows: Rows,
) -> Vec<(Vec<u8>, M)> {
    let mut out = Vec::with_capacity(rows.len());
    for (k, v) in rows {
        let Some(id) = keys::id_of(prefix, &k) else {
            continue;
        };
        match decode::<M>(&k, &v) {
            Ok(m) => out.push((id.to_vec(), m)),
            Err(e) => {
                crate::metrics::metrics().local_corrupt_rows.inc();
                tracing::warn!(error = %e, "skipping a corrupt local-store row");
            }
        }
    }
    out
}

/// Decodes a protobuf record stored under `key`.
pub(crate) fn decode<M: prost::Message + Default>(key: &[u8], raw: &[u8]) -> Result<M, LocalError> {
    M::decode(raw).map_err(|e| LocalError::corrupt(key, e))
}

/// The key that signs this node's replicated records, and since when
/// (Unix ms) it re-signs those an earlier key signed, if it does.
pub type ReplicaSigner = ([u8; 32], Option<u64>);

/// Typed access to the local store's meta numbers.
pub trait MetaExt: LocalRaw {
    /// The committed height of the last finished reconcile.
    fn last_reconcile_height(&self) -> Result<Option<u64>, LocalError> {
        let key = keys::last_reconcile_height();
        match self.get_raw(&key)? {
            None => Ok(None),
            Some(raw) => {
                let arr: [u8; 8] = raw
                    .as_slice()
                    .try_into()
                    .map_err(|_| LocalError::corrupt(&key, "not 8 bytes"))?;
                Ok(Some(u64::from_be_bytes(arr)))
            }
        }
    }
    fn set_last_reconcile_height(&self, h: u64) -> Result<(), LocalError> {
        self.put_raw(&keys::last_reconcile_height(), &h.to_be_bytes())
    }
    /// The key that signs this node's replicated records, and while it
    /// re-signs those an earlier key signed, since when (Unix ms); `None`
    /// before the first record.
    fn replica_signer(&self) -> Result<Option<ReplicaSigner>, LocalError> {
        let key = keys::replica_signer();
        let Some(raw) = self.get_raw(&key)? else {
            return Ok(None);
        };
        let signer = raw
            .get(..32)
            .and_then(|k| <[u8; 32]>::try_from(k).ok())
            .ok_or_else(|| LocalError::corrupt(&key, "no 32-byte key"))?;
        let since = match raw.get(32..) {
            None | Some([]) => None,
            Some(b) => Some(u64::from_be_bytes(b.try_into().map_err(|_| {
                LocalError::corrupt(&key, "a stamp of other than 8 bytes")
            })?)),
        };
        Ok(Some((signer, since)))
    }
    fn set_replica_signer(&self, key: &[u8; 32], since: Option<u64>) -> Result<(), LocalError> {
        let mut v = key.to_vec();
        if let Some(t) = since {
            v.extend_from_slice(&t.to_be_bytes());
        }
        self.put_raw(&keys::replica_signer(), &v)
    }
}
impl<T: LocalRaw + ?Sized> MetaExt for T {}

#[cfg(test)]
mod tests;
