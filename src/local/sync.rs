//! `local/sync/content/{cid}` and `local/sync/deks/{cid}`: what this
//! validator has fetched and what it still needs.

use std::collections::BTreeMap;

use super::{decode, decode_rows, keys, LocalError, LocalRaw};
use crate::proto::local::{ContentSync, DekSync, SyncStatus};

/// The operator-facing name of a status.
pub fn status_name(s: SyncStatus) -> &'static str {
    match s {
        SyncStatus::Unspecified => "UNSPECIFIED",
        SyncStatus::Pending => "PENDING",
        SyncStatus::Downloading => "DOWNLOADING",
        SyncStatus::Seeding => "SEEDING",
        SyncStatus::Received => "RECEIVED",
        SyncStatus::Failed => "FAILED",
    }
}

/// Every status a sync entry can report, for gauges and status output.
pub const STATUSES: [SyncStatus; 5] = [
    SyncStatus::Pending,
    SyncStatus::Downloading,
    SyncStatus::Seeding,
    SyncStatus::Received,
    SyncStatus::Failed,
];

/// What the two sync records share, so the reconciler and the worker
/// treat both kinds with one piece of code.
pub trait SyncRecord: prost::Message + Default + Clone {
    /// The status of an entry whose data is held (SEEDING or RECEIVED).
    const HELD: SyncStatus;
    fn key(cid: &[u8]) -> Vec<u8>;
    fn prefix() -> Vec<u8>;
    fn cid(&self) -> &[u8];
    fn cid_mut(&mut self) -> &mut Vec<u8>;
    fn sync_status(&self) -> SyncStatus;
    fn set_sync_status(&mut self, s: SyncStatus);
    fn attempts_mut(&mut self) -> &mut u32;
    fn error_mut(&mut self) -> &mut String;
    fn retry_at_mut(&mut self) -> &mut u64;
    fn source_mut(&mut self) -> &mut Vec<u8>;
    /// Records the size (content only) and, once held, the path.
    fn note_size(&mut self, _size: u64, _held: bool) {}
}

macro_rules! sync_record {
    ($t:ident, $held:expr, $key:path, $prefix:path) => {
        impl SyncRecord for $t {
            const HELD: SyncStatus = $held;
            fn key(cid: &[u8]) -> Vec<u8> {
                $key(cid)
            }
            fn prefix() -> Vec<u8> {
                $prefix()
            }
            fn cid(&self) -> &[u8] {
                &self.cid
            }
            fn cid_mut(&mut self) -> &mut Vec<u8> {
                &mut self.cid
            }
            fn sync_status(&self) -> SyncStatus {
                self.status()
            }
            fn set_sync_status(&mut self, s: SyncStatus) {
                self.set_status(s)
            }
            fn attempts_mut(&mut self) -> &mut u32 {
                &mut self.attempts
            }
            fn error_mut(&mut self) -> &mut String {
                &mut self.error
            }
            fn retry_at_mut(&mut self) -> &mut u64 {
                &mut self.retry_at_ms
            }
            fn source_mut(&mut self) -> &mut Vec<u8> {
                &mut self.source_validator
            }
            sync_record!(@size $t);
        }
    };
    (@size ContentSync) => {
        fn note_size(&mut self, size: u64, held: bool) {
            self.size_bytes = size;
            if held {
                self.content_path = hex::encode(&self.cid);
            }
        }
    };
    (@size DekSync) => {};
}
sync_record!(
    ContentSync,
    SyncStatus::Seeding,
    keys::sync_content,
    keys::sync_content_prefix
);
sync_record!(
    DekSync,
    SyncStatus::Received,
    keys::sync_dek,
    keys::sync_deks_prefix
);

/// Typed access to `local/sync/`.
pub trait SyncExt: LocalRaw {
    fn sync_entry<R: SyncRecord>(&self, cid: &[u8]) -> Result<Option<R>, LocalError> {
        let key = R::key(cid);
        self.get_raw(&key)?
            .map(|raw| decode(&key, &raw))
            .transpose()
    }
    fn put_sync<R: SyncRecord>(&self, e: &R) -> Result<(), LocalError> {
        self.put_raw(&R::key(e.cid()), &e.encode_to_vec())
    }
    /// Writes every content and DEK entry in one synced batch (a reconcile
    /// round's new entries: one fsync, not one per entry).
    fn put_sync_all(&self, content: &[ContentSync], deks: &[DekSync]) -> Result<(), LocalError> {
        let rows = content
            .iter()
            .map(|e| (ContentSync::key(e.cid()), prost::Message::encode_to_vec(e)))
            .chain(
                deks.iter()
                    .map(|e| (DekSync::key(e.cid()), prost::Message::encode_to_vec(e))),
            )
            .collect::<Vec<_>>();
        if rows.is_empty() {
            return Ok(());
        }
        self.put_raw_all(&rows)
    }
    /// Deletes the content entries of `content` and the DEK entries of
    /// `deks` that exist, in one synced batch; returns how many.
    fn delete_sync_entries(
        &self,
        content: &[Vec<u8>],
        deks: &[Vec<u8>],
    ) -> Result<usize, LocalError> {
        let all = content
            .iter()
            .map(|c| ContentSync::key(c))
            .chain(deks.iter().map(|c| DekSync::key(c)));
        let mut present = Vec::new();
        for k in all {
            if self.get_raw(&k)?.is_some() {
                present.push(k);
            }
        }
        if !present.is_empty() {
            self.delete_raw_all(&present)?;
        }
        Ok(present.len())
    }
    fn all_sync<R: SyncRecord>(&self) -> Result<BTreeMap<Vec<u8>, R>, LocalError> {
        let prefix = R::prefix();
        Ok(decode_rows(&prefix, self.scan_raw(&prefix)?)
            .into_iter()
            .collect())
    }
    fn content_sync(&self, cid: &[u8]) -> Result<Option<ContentSync>, LocalError> {
        self.sync_entry(cid)
    }
    fn all_content_sync(&self) -> Result<BTreeMap<Vec<u8>, ContentSync>, LocalError> {
        self.all_sync()
    }
    fn dek_sync(&self, cid: &[u8]) -> Result<Option<DekSync>, LocalError> {
        self.sync_entry(cid)
    }
    fn all_dek_sync(&self) -> Result<BTreeMap<Vec<u8>, DekSync>, LocalError> {
        self.all_sync()
    }
}
impl<T: LocalRaw + ?Sized> SyncExt for T {}
