//! The upload pipeline's node side: a label or artist streams audio to one
//! validator (`ContentService.Upload`), which checks the signed
//! [`intent`] against chain state ([`admit`]), receives the audio into the
//! job's scratch, and hands the job to the [`pipeline`]: the transcode
//! worker child, encryption and the manifest; then, once the uploader
//! signed the manifest (`Complete`), the operator-key [`submitter`]
//! registers it on chain with `UploadComplete`.
//!
//! ```text
//! client ──Upload(intent, audio…)──▶ admit ─▶ RECEIVING ─▶ TRANSCODING (worker child)
//!        ◀──────── job_id ─────────┘                       │
//!        ──Status(job)──▶ manifest ◀── ENCRYPTING (DEK, STREAM, wraps) ◀┘
//!        ──Complete(sig)──▶ Submitter ─▶ UploadComplete tx ─▶ SEEDING ─▶ COMPLETE
//! ```

pub mod admit;
pub mod client;
pub mod error;
pub mod intent;
pub mod pipeline;
pub mod replay;
pub mod sink;
pub mod slots;
pub mod submitter;

pub use admit::admit;
pub use error::IngestError;
pub use intent::{intent_sign_bytes, sign_intent, Intent, IntentCheck};
pub use pipeline::Pipeline;
pub use submitter::Submitter;

use serde::{Deserialize, Serialize};

/// Seconds an upload may send at any rate before the minimum rate counts.
pub const GRACE_SECS: u64 = 60;

/// `[upload]` in `stave.toml`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct UploadConfig {
    /// Whether uploads outside any publisher group are taken. Off by
    /// default: anyone can make a key, so only members of groups the
    /// validators admitted may make this node transcode and store.
    pub allow_ungrouped: bool,
    /// The most audio bytes one upload may declare.
    pub max_upload_bytes: u64,
    /// The most bytes one artwork file may declare.
    pub max_art_bytes: u64,
    /// The longest side, in pixels, of an image the worker decodes.
    pub max_image_side: u32,
    /// How far an intent's timestamp may be from this node's clock.
    pub intent_window_secs: u64,
    /// Uploads this node processes at once.
    pub max_jobs: usize,
    /// Uploads one uploader may have in progress on this node.
    pub max_jobs_per_uploader: usize,
    /// An upload stream silent this long is dropped.
    pub idle_timeout_secs: u64,
    /// The slowest average rate an upload may send at, after a minute's
    /// grace (checked at every message and while waiting for the next).
    pub min_upload_bytes_per_sec: u64,
    /// Threads the worker encodes FLAC on; 0 = one per core, at most 8;
    /// never more than 16 (`media::transcode::MAX_THREADS`).
    /// The worker runs niced (10), below the node.
    pub transcode_threads: usize,
    /// The transcode worker's address space, MiB (RLIMIT_AS).
    pub worker_memory_mb: u64,
    /// The transcode worker's CPU seconds (RLIMIT_CPU).
    pub worker_cpu_secs: u64,
    /// How long the node waits for the worker before killing it.
    pub worker_wall_secs: u64,
    /// How long a job waits for its manifest signature before it is
    /// failed and its blob, key and scratch removed.
    pub signature_ttl_secs: u64,
    /// Jobs waiting for their signature this node keeps at once, and of
    /// them one uploader's.
    pub max_awaiting_signature: usize,
    pub max_awaiting_per_uploader: usize,
    /// Days a finished job's record stays in the local store.
    pub keep_finished_days: u64,
    /// How long `SEEDING` waits for the replication set to confirm the
    /// blob (`PeerService.HasContent`) before the job completes
    /// under-replicated, with an alarm.
    pub max_seeding_secs: u64,
}

impl Default for UploadConfig {
    fn default() -> Self {
        UploadConfig {
            allow_ungrouped: false,
            max_upload_bytes: 2 << 30,
            max_art_bytes: 32 << 20,
            max_image_side: 6000,
            intent_window_secs: 300,
            max_jobs: 4,
            max_jobs_per_uploader: 2,
            idle_timeout_secs: 30,
            min_upload_bytes_per_sec: 64 * 1024,
            transcode_threads: 0,
            worker_memory_mb: 1024,
            worker_cpu_secs: 600,
            worker_wall_secs: 900,
            signature_ttl_secs: 3600,
            max_awaiting_signature: 16,
            max_awaiting_per_uploader: 4,
            keep_finished_days: 7,
            max_seeding_secs: 600,
        }
    }
}

impl UploadConfig {
    /// How long the next upload message may take: after a minute's grace,
    /// the bytes sent so far must keep up with `min_upload_bytes_per_sec`
    /// since the start, and all `declared` bytes must arrive within a
    /// minute plus their time at that rate.
    ///
    /// # Errors
    /// `TooSlow` when the sender is behind.
    pub fn time_left(
        &self,
        elapsed: std::time::Duration,
        sent: u64,
        declared: u64,
    ) -> Result<std::time::Duration, IngestError> {
        let rate = self.min_upload_bytes_per_sec.max(1);
        let total = GRACE_SECS.saturating_add(declared / rate);
        let behind = elapsed.as_secs() > GRACE_SECS
            && sent < (elapsed.as_secs() - GRACE_SECS).saturating_mul(rate);
        let left = total.saturating_sub(elapsed.as_secs());
        if behind || left == 0 {
            return Err(IngestError::TooSlow {
                secs: elapsed.as_secs(),
            });
        }
        Ok(std::time::Duration::from_secs(left))
    }

    /// The caps the worker applies to one input.
    pub fn media_limits(&self) -> crate::media::Limits {
        let threads = match self.transcode_threads {
            0 => crate::media::transcode::cores().min(8),
            n => n.min(crate::media::transcode::MAX_THREADS),
        };
        crate::media::Limits {
            max_input_bytes: self.max_upload_bytes,
            threads,
            ..Default::default()
        }
    }

    /// The caps the worker applies to one image; the PNG may be at most
    /// `max_png_bytes` (`rights.max_image_bytes`).
    pub fn image_limits(&self, max_png_bytes: u64) -> crate::media::image::ImageLimits {
        crate::media::image::ImageLimits {
            max_input_bytes: self.max_art_bytes,
            max_side: self.max_image_side,
            max_output_bytes: max_png_bytes,
        }
    }

    /// The worker child's resource limits.
    pub fn worker_limits(&self) -> crate::media::worker::WorkerLimits {
        crate::media::worker::WorkerLimits {
            address_space: self.worker_memory_mb << 20,
            cpu_secs: self.worker_cpu_secs,
            file_size: self.max_upload_bytes.saturating_mul(2),
            wall: std::time::Duration::from_secs(self.worker_wall_secs),
        }
    }
}

/// This node's wall clock in Unix milliseconds (intent windows and job
/// times only; never state): the peer protocol's clock.
pub use crate::local::peer_auth::now_ms;
