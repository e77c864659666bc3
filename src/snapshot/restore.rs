//! Restoring from a snapshot: `OfferSnapshot` and `ApplySnapshotChunk`.
//!
//! Each chunk is checked alone ([`super::check`]) before it is staged: its
//! hash against the metadata, its place after the chunk before it, its
//! entries and range proof against the trusted root. Bytes that are not
//! what the metadata names are refused with `RETRY`, `refetch_chunks =
//! [index]` and `reject_senders = [sender]`, and the restore goes on from
//! where it was: nothing of them was kept. A chunk whose bytes the metadata
//! names but which does not verify proves the snapshot bad: it is rejected
//! with its sender and the store wiped. After the last chunk the chain
//! store builds the tree and writes everything in one batch
//! ([`ChainStore::finish_restore`]); a crash before that leaves the
//! restore marker, and the store is wiped when it opens.

use std::sync::Arc;
use std::time::Instant;

use super::check::{self, Expect, RestoreError};
use super::format::Metadata;
use super::smt::{self, Hash};
use super::FORMAT;
use crate::app::Mempool;
use crate::keyspaces::chain::{chain_id_key, ChainRead};
use crate::keyspaces::params::ParamsRead;
use crate::store::{ChainStore, Derived, MemState, StoreError};

/// The answer to `OfferSnapshot`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OfferResult {
    Accept,
    /// Not this snapshot (the reason is logged).
    Reject(String),
    /// A format this build does not restore.
    RejectFormat(u32),
    /// This node has state: state sync must not run over it.
    Abort(String),
}

/// The answer to `ApplySnapshotChunk`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApplyResult {
    /// Verified and staged; `done` after the last chunk's final write.
    Accept { done: bool },
    /// The sender's bytes are not the chunk the metadata names; nothing
    /// kept: fetch chunk `refetch` again from another sender.
    Retry { refetch: u32, reason: String },
    /// Offer the snapshot again (this node restarted, or a chunk came out
    /// of order): the restore starts over.
    RetrySnapshot(String),
    /// The snapshot is bad (or its final write failed); the store was
    /// wiped. `reject_sender` when the sender served it.
    RejectSnapshot { reason: String, reject_sender: bool },
}

/// The snapshot a restore works on and how far it got.
struct Active {
    height: u64,
    meta: Metadata,
    next: u32,
    lo: Hash,
    staged: u64,
    started: Instant,
}

/// The restore state machine of the snapshot connection.
pub struct Restorer {
    store: ChainStore,
    mempool: Option<Arc<Mempool>>,
    active: Option<Active>,
    /// `fault_restore_delay_ms` (fault drills only).
    delay: std::time::Duration,
}

/// The index space and chain facts of restored state.
fn derive(state: &MemState) -> Result<Derived, StoreError> {
    let facts = state
        .chain_facts()?
        .ok_or_else(|| StoreError::corrupt(&chain_id_key(), "the snapshot has no chain id"))?;
    Ok(Derived {
        index: crate::keyspaces::index_rows::rebuild(state)?,
        chain_id: facts.chain_id,
        evidence_age: facts.evidence_max_age_blocks,
    })
}

impl Restorer {
    pub fn new(store: ChainStore, mempool: Option<Arc<Mempool>>) -> Self {
        Restorer {
            store,
            mempool,
            active: None,
            delay: std::time::Duration::ZERO,
        }
    }

    /// Waits `ms` after verifying each chunk (fault drills: a window to
    /// kill the node mid-restore).
    pub fn with_chunk_delay(mut self, ms: u64) -> Self {
        self.delay = std::time::Duration::from_millis(ms);
        self
    }

    /// `OfferSnapshot`: accepts only format [`FORMAT`], on a node with no
    /// state (or one whose restore no Commit has followed yet), a snapshot
    /// whose metadata lists `chunks` chunks, hashes to `hash` and names
    /// `app_hash` (CometBFT's light-client-verified header's) as its root.
    /// Accepting wipes any earlier partial restore.
    pub fn offer(
        &mut self,
        height: u64,
        format: u32,
        chunks: u32,
        hash: &[u8],
        metadata: &[u8],
        app_hash: &[u8],
    ) -> Result<OfferResult, StoreError> {
        if format != FORMAT {
            return Ok(OfferResult::RejectFormat(format));
        }
        if let Some(h) = self.store.commit_info()?.height {
            // CometBFT died before recording a finished restore and
            // starts state sync again: that restore may be replaced.
            if self.store.restored_unconfirmed()? != Some(h) {
                return Ok(OfferResult::Abort(format!(
                    "this node has state at height {h}; reset it before state sync"
                )));
            }
        }
        let meta = match check::offer(height, chunks, hash, metadata, app_hash) {
            Ok(m) => m,
            Err(why) => return Ok(OfferResult::Reject(why.to_string())),
        };
        self.store.begin_restore(height)?;
        self.active = Some(Active {
            height,
            meta,
            next: 0,
            lo: [0; 32],
            staged: 0,
            started: Instant::now(),
        });
        tracing::info!(height, chunks, "restoring from snapshot");
        Ok(OfferResult::Accept)
    }

    /// `ApplySnapshotChunk`: verifies chunk `index` alone and stages it;
    /// after the last, writes the restored height.
    pub fn apply(&mut self, index: u32, bytes: &[u8]) -> Result<ApplyResult, StoreError> {
        let m = &crate::metrics::metrics().sync.restore_chunks;
        let Some(a) = self.active.as_mut() else {
            return Ok(ApplyResult::RetrySnapshot(
                "no restore under way on this node (restarted?)".into(),
            ));
        };
        let expect = Expect {
            height: a.height,
            meta: &a.meta,
            index: a.next,
            lo: a.lo,
        };
        let (rows, hi) = match check::chunk(&expect, index, bytes) {
            Ok(ok) => ok,
            Err(e) => {
                m.with_label_values(&["refused"]).inc();
                return self.refused(index, e);
            }
        };
        if !self.delay.is_zero() {
            std::thread::sleep(self.delay);
        }
        self.store.stage_restore(&rows)?;
        m.with_label_values(&["applied"]).inc();
        a.staged += rows.len() as u64;
        a.next += 1;
        match smt::add_one(&hi) {
            Some(lo) if (a.next as usize) < a.meta.chunk_hashes.len() => a.lo = lo,
            _ => return self.finish(),
        }
        Ok(ApplyResult::Accept { done: false })
    }

    /// The answer to a refused chunk; a bad snapshot is dropped and wiped.
    fn refused(&mut self, index: u32, e: RestoreError) -> Result<ApplyResult, StoreError> {
        if e.is_bad_bytes() {
            return Ok(ApplyResult::Retry {
                refetch: index,
                reason: e.to_string(),
            });
        }
        self.active = None;
        self.store.wipe()?;
        Ok(match e {
            RestoreError::OutOfOrder { .. } => ApplyResult::RetrySnapshot(e.to_string()),
            e => ApplyResult::RejectSnapshot {
                reason: e.to_string(),
                reject_sender: true,
            },
        })
    }

    fn finish(&mut self) -> Result<ApplyResult, StoreError> {
        let Some(a) = self.active.take() else {
            return Ok(ApplyResult::RetrySnapshot("no restore under way".into()));
        };
        let listed = a.meta.entries;
        let written = match listed == a.staged {
            true => self.store.finish_restore(a.height, a.meta.app_hash, derive),
            false => Err(StoreError::Tree(
                RestoreError::EntryCount {
                    listed,
                    staged: a.staged,
                }
                .to_string(),
            )),
        };
        if let Err(e) = written {
            tracing::error!(height = a.height, error = %e, "restore failed; wiping");
            self.store.wipe()?;
            return Ok(ApplyResult::RejectSnapshot {
                reason: e.to_string(),
                reject_sender: false,
            });
        }
        let secs = a.started.elapsed().as_secs_f64();
        let sync = &crate::metrics::metrics().sync;
        sync.restore_seconds.set(secs);
        sync.restored_height.set(a.height as i64);
        crate::metrics::metrics().committed(a.height, &a.meta.app_hash);
        if let Err(e) = self.reload_mempool() {
            // The restore is on disk; the consensus actor reloads the app
            // before its first request.
            tracing::error!(error = %e, "mempool not pointed at the restored chain");
        }
        tracing::info!(height = a.height, secs, "restored from snapshot");
        Ok(ApplyResult::Accept { done: true })
    }

    /// Points CheckTx at the restored chain (its id and params).
    fn reload_mempool(&self) -> Result<(), StoreError> {
        let Some(mp) = &self.mempool else {
            return Ok(());
        };
        if let Some(p) = self.store.committed().params()? {
            mp.set_chain(self.store.commit_info()?.chain_id, p);
        }
        Ok(())
    }
}
