//! Taking snapshots every `snapshot_interval` heights. Commit only starts a
//! thread; the build reads the committed tree at its height, which is
//! pinned against pruning until the build ends, so consensus never waits.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{build, SnapshotFiles};
use crate::store::ChainStore;

/// `[snapshots]` in `stave.toml`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SnapshotConfig {
    /// Take a snapshot at every height divisible by this; 0 takes none.
    pub snapshot_interval: u64,
    /// Snapshots kept on disk (the newest).
    pub snapshot_keep_recent: u32,
    /// Fault drills only (0 in production): milliseconds a restore waits
    /// after verifying each chunk and before staging it, so a test can kill
    /// the node mid-restore.
    pub fault_restore_delay_ms: u64,
}

impl Default for SnapshotConfig {
    fn default() -> Self {
        SnapshotConfig {
            snapshot_interval: 0,
            snapshot_keep_recent: 2,
            fault_restore_delay_ms: 0,
        }
    }
}

/// Starts snapshot builds; one at a time (a height that comes due while a
/// build runs is skipped, and logged).
#[derive(Clone)]
pub struct Taker {
    store: ChainStore,
    files: SnapshotFiles,
    config: SnapshotConfig,
    busy: Arc<AtomicBool>,
}

impl Taker {
    pub fn new(store: ChainStore, files: SnapshotFiles, config: SnapshotConfig) -> Self {
        Taker {
            store,
            files,
            config,
            busy: Arc::default(),
        }
    }

    pub fn files(&self) -> &SnapshotFiles {
        &self.files
    }

    pub fn config(&self) -> &SnapshotConfig {
        &self.config
    }

    /// Called after the commit of `height`.
    pub fn committed(&self, height: u64) {
        let every = self.config.snapshot_interval;
        if every == 0 || height == 0 || !height.is_multiple_of(every) {
            return;
        }
        if self.busy.swap(true, Ordering::SeqCst) {
            tracing::warn!(
                height,
                "snapshot skipped: the previous one is still being built"
            );
            return;
        }
        self.store.pin(height);
        let me = self.clone();
        let spawned = std::thread::Builder::new()
            .name("stave-snapshot".into())
            .spawn(move || me.take(height));
        if let Err(e) = spawned {
            tracing::error!(height, error = %e, "no thread for the snapshot");
            self.done();
        }
    }

    fn done(&self) {
        self.store.unpin();
        self.busy.store(false, Ordering::SeqCst);
    }

    /// Builds the snapshot of `height` now, on this thread.
    pub fn take(&self, height: u64) {
        let t0 = std::time::Instant::now();
        let result = self.build(height);
        self.done();
        match result {
            Ok((chunks, entries)) => {
                let secs = t0.elapsed().as_secs_f64();
                crate::metrics::metrics().sync.snapshot_seconds.set(secs);
                tracing::info!(height, chunks, entries, secs, "snapshot taken");
            }
            Err(e) => {
                self.files.abandon(height);
                tracing::error!(height, error = %e, "snapshot failed");
            }
        }
    }

    fn build(&self, height: u64) -> Result<(usize, u64), String> {
        self.files.begin(height).map_err(|e| e.to_string())?;
        let meta = build::build(&self.store, height, |i, bytes| {
            self.files
                .put_chunk(height, i, &bytes)
                .map_err(|e| e.to_string())
        })
        .map_err(|e| e.to_string())?;
        self.files
            .finish(height, &meta)
            .map_err(|e| e.to_string())?;
        self.files
            .prune(self.config.snapshot_keep_recent.max(1) as usize)
            .map_err(|e| e.to_string())?;
        Ok((meta.chunk_hashes.len(), meta.entries))
    }
}
