//! State-sync snapshots: taking them, serving them, and restoring from them
//! with every chunk verified the moment it arrives.
//!
//! # Format 1
//! A snapshot of height `H` is every (state key, value) of the verifiable
//! state at `H`, in key-hash order (JMT leaves hold only hashes, so the keys
//! travel). Chunks are cut greedily at [`CHUNK_BYTES`] of encoded entries,
//! so their boundaries are a pure function of the state and the format:
//! every node's snapshot of `H` is byte-identical and CometBFT can fetch
//! chunks from several peers. Chunk `i` holds every leaf whose key hash lies
//! in `[lo_i, hi_i]` (`lo_0 = 0…0`, `hi_i` = the last key hash in it,
//! `lo_{i+1} = hi_i + 1`, the last `hi = f…f`) with an [`smt::RangeProof`]
//! of the subtrees outside that interval: [`smt::verify`] checks the chunk
//! alone against the trusted app hash, so a bad chunk is refused before it
//! touches the restore.
//!
//! # Parts
//! - [`smt`]: the JMT's root as a binary sparse Merkle tree, range proofs.
//! - [`format`]: chunk and metadata encoding.
//! - [`check`]: the checks of an offered snapshot and of each chunk.
//! - [`build`]: reading the state at `H` from the tree and cutting chunks.
//! - [`files`]: snapshots on disk (`<home>/data/snapshots/<H>/`).
//! - [`restore`]: `OfferSnapshot` / `ApplySnapshotChunk`, and the final
//!   write of the tree, flat values, indexes and meta in one batch.
//! - [`taker`]: taking snapshots every `snapshot_interval` heights off the
//!   consensus thread, the height pinned against pruning meanwhile.

pub mod build;
pub mod check;
pub mod files;
pub mod format;
pub mod restore;
pub mod smt;
pub mod taker;

pub use files::SnapshotFiles;
pub use restore::{ApplyResult, Restorer};
pub use taker::{SnapshotConfig, Taker};

/// The snapshot format this build writes and restores.
pub const FORMAT: u32 = 1;

/// Encoded entries per chunk before a new one starts. With its proof (at
/// most 512 subtrees of under 80 bytes) a chunk stays under
/// [`MAX_CHUNK_BYTES`], and so under CometBFT v0.38's 16 MB chunk message.
pub const CHUNK_BYTES: usize = 8 << 20;

/// A chunk above this is refused unread (the 10 MB cap).
pub const MAX_CHUNK_BYTES: usize = 10_000_000;
