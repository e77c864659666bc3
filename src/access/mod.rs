//! Access and delivery: the moment a licensed consumer gets the key and
//! the content.
//!
//! ```text
//! consumer ──RequestAccess(signed)──▶ DEK holder: verify ─▶ decide (committed state)
//!          ◀── wrapped DEK + receipt ── re-wrap ◀── unwrap, dek_commitment ◀┘
//!                                        │ synced write: nonce + pending grant
//!                                        ▼
//!                     recorder: RecordGrants tx, one per block ─▶ grants/ on chain
//! consumer ──Download(signed, range)──▶ any replica: decide ─▶ sealed chunks
//! ```
//!
//! - [`request`]: the consumer's signed request and its checks;
//! - [`deliver`]: the holder's answer: the access decision, its own DEK
//!   checked against `dek_commitment`, the re-wrap, the receipt
//!   ([`receipt`]) and the durable pending grant (`local/access/`);
//! - [`recorder`]: batches pending grants into one `RecordGrants` tx per
//!   block through the operator-key submitter;
//! - [`download`]: ranged, chunk-aligned downloads of the encrypted blob
//!   under stream caps, per-IP bandwidth and idle / minimum-rate timeouts.
//!
//! Refusals are [`AccessError`]s, each with a stable code (docs/access.md).

pub mod deliver;
pub mod download;
pub mod error;
pub mod receipt;
pub mod recorder;
pub mod request;

pub use deliver::Access;
pub use error::{code_of, AccessError};
pub use request::{sign_request, Request};

use serde::{Deserialize, Serialize};

/// `[access]` in `stave.toml`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AccessConfig {
    /// How far a request's timestamp may be from this node's clock; its
    /// nonce is remembered this long.
    pub window_secs: u64,
    /// Deliveries awaiting recording, in blocks' worth of
    /// `rights.max_grants_per_validator_per_block`: past it, requests get
    /// `ACCESS_BUSY` until the recorder catches up.
    pub pending_blocks: u64,
    /// Downloads served at once, and per client IP.
    pub max_downloads: usize,
    pub max_downloads_per_ip: usize,
    /// Bytes per second one client IP may download, over all its streams.
    pub per_ip_bytes_per_sec: u32,
    /// A download whose reader takes nothing for this long is ended.
    pub idle_timeout_secs: u64,
    /// The slowest average rate a download may be read at, after a
    /// minute's grace.
    pub min_bytes_per_sec: u64,
}

impl Default for AccessConfig {
    fn default() -> Self {
        AccessConfig {
            window_secs: 60,
            pending_blocks: 4,
            max_downloads: 32,
            max_downloads_per_ip: 4,
            per_ip_bytes_per_sec: 64 << 20,
            idle_timeout_secs: 30,
            min_bytes_per_sec: 16 << 10,
        }
    }
}
