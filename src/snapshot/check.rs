//! The checks of an offered snapshot and of each chunk, pure: they read
//! only the untrusted bytes, the metadata and where the restore stands.

use thiserror::Error;

use super::format::{chunk_hash, Chunk, FormatError, Metadata};
use super::smt::{self, Hash, SmtError};
use super::MAX_CHUNK_BYTES;

/// Why a snapshot or a chunk was refused, with the offending values.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum RestoreError {
    #[error("a snapshot of height 0 (genesis is InitChain's)")]
    GenesisHeight,
    #[error("metadata: {0}")]
    Metadata(FormatError),
    #[error("the snapshot says {said} chunks, its metadata lists {listed}")]
    ChunkCount { said: u32, listed: usize },
    #[error("snapshot hash {got} is not the metadata's {want}")]
    SnapshotHash { got: String, want: String },
    #[error("the snapshot's root {root} is not the trusted app hash {trusted}")]
    Root { root: String, trusted: String },
    #[error("chunk {index} out of order: expected {want}")]
    OutOfOrder { index: u32, want: u32 },
    #[error("chunk {index} of {len} bytes is over {MAX_CHUNK_BYTES}")]
    Oversize { index: u32, len: usize },
    #[error("chunk {index} hashes to {got}, the metadata says {want}")]
    ChunkHash {
        index: u32,
        got: String,
        want: String,
    },
    #[error("chunk {index}: {source}")]
    Decode { index: u32, source: FormatError },
    #[error("chunk {index} says height {height} index {says}, expected height {want}")]
    Position {
        index: u32,
        height: u64,
        says: u32,
        want: u64,
    },
    #[error("chunk {index} starts at {got}, expected {want}")]
    Start {
        index: u32,
        got: String,
        want: String,
    },
    #[error("chunk {index} of {chunks} ends at {hi}")]
    End {
        index: u32,
        chunks: usize,
        hi: String,
    },
    #[error("chunk {index}: {source}")]
    Proof { index: u32, source: SmtError },
    #[error("the metadata lists {listed} entries, the chunks held {staged}")]
    EntryCount { listed: u64, staged: u64 },
}

impl RestoreError {
    /// The sender's bytes are not what the metadata names: fetch them again
    /// from someone else. Any other chunk error means the snapshot itself
    /// is bad (its metadata pins those bytes, an oversize chunk included).
    pub fn is_bad_bytes(&self) -> bool {
        matches!(self, RestoreError::ChunkHash { .. })
    }
}

/// The metadata of a snapshot that `app_hash` (the light client's) and
/// `hash` (the snapshot's) name, with `chunks` chunks.
pub fn offer(
    height: u64,
    chunks: u32,
    hash: &[u8],
    metadata: &[u8],
    app_hash: &[u8],
) -> Result<Metadata, RestoreError> {
    if height == 0 {
        return Err(RestoreError::GenesisHeight);
    }
    let meta = Metadata::decode(metadata).map_err(RestoreError::Metadata)?;
    if meta.chunk_hashes.len() != chunks as usize || chunks == 0 {
        return Err(RestoreError::ChunkCount {
            said: chunks,
            listed: meta.chunk_hashes.len(),
        });
    }
    if meta.hash().as_slice() != hash {
        return Err(RestoreError::SnapshotHash {
            got: hex::encode(hash),
            want: hex::encode(meta.hash()),
        });
    }
    if meta.app_hash.as_slice() != app_hash {
        return Err(RestoreError::Root {
            root: hex::encode(meta.app_hash),
            trusted: hex::encode(app_hash),
        });
    }
    Ok(meta)
}

/// Where a restore stands: the snapshot and the next chunk it expects.
pub struct Expect<'a> {
    pub height: u64,
    pub meta: &'a Metadata,
    pub index: u32,
    pub lo: Hash,
}

/// Staged rows: (key hash, key, value).
pub type Rows = Vec<(Hash, Vec<u8>, Vec<u8>)>;

/// Checks chunk `index` alone; returns its rows and its `hi`.
pub fn chunk(e: &Expect<'_>, index: u32, bytes: &[u8]) -> Result<(Rows, Hash), RestoreError> {
    if index != e.index {
        return Err(RestoreError::OutOfOrder {
            index,
            want: e.index,
        });
    }
    let want = e
        .meta
        .chunk_hashes
        .get(index as usize)
        .copied()
        .unwrap_or_default();
    if chunk_hash(bytes) != want {
        return Err(RestoreError::ChunkHash {
            index,
            got: hex::encode(chunk_hash(bytes)),
            want: hex::encode(want),
        });
    }
    if bytes.len() > MAX_CHUNK_BYTES {
        return Err(RestoreError::Oversize {
            index,
            len: bytes.len(),
        });
    }
    let c = Chunk::decode(bytes).map_err(|source| RestoreError::Decode { index, source })?;
    check_place(e, index, &c)?;
    let leaves: Vec<smt::Leaf> = c.entries.iter().map(|(k, v)| smt::leaf(k, v)).collect();
    smt::verify(&e.meta.app_hash, &c.lo, &c.hi, &leaves, &c.proof)
        .map_err(|source| RestoreError::Proof { index, source })?;
    let rows = leaves
        .iter()
        .zip(c.entries)
        .map(|(l, (k, v))| (l.key_hash, k, v))
        .collect();
    Ok((rows, c.hi))
}

/// The chunk's height, index and interval fit the restore.
fn check_place(e: &Expect<'_>, index: u32, c: &Chunk) -> Result<(), RestoreError> {
    if c.height != e.height || c.index != index {
        return Err(RestoreError::Position {
            index,
            height: c.height,
            says: c.index,
            want: e.height,
        });
    }
    if c.lo != e.lo {
        return Err(RestoreError::Start {
            index,
            got: hex::encode(c.lo),
            want: hex::encode(e.lo),
        });
    }
    let chunks = e.meta.chunk_hashes.len();
    if (index as usize + 1 == chunks) != (c.hi == [0xff; 32]) {
        return Err(RestoreError::End {
            index,
            chunks,
            hi: hex::encode(c.hi),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A one-chunk snapshot of 40 rows and its metadata.
    fn honest() -> (Metadata, Vec<u8>) {
        let mut rows: Vec<(Vec<u8>, Vec<u8>)> = (0u32..40)
            .map(|i| (format!("k{i}").into_bytes(), i.to_be_bytes().to_vec()))
            .collect();
        rows.sort_by_key(|(k, v)| smt::leaf(k, v).key_hash);
        let leaves: Vec<_> = rows.iter().map(|(k, v)| smt::leaf(k, v)).collect();
        let mut prover = smt::Prover::new(&leaves);
        let root = prover.root().hash();
        let (lo, hi) = ([0; 32], [0xff; 32]);
        let c = Chunk {
            height: 9,
            index: 0,
            lo,
            hi,
            entries: rows,
            proof: prover.prove(&lo, &hi),
        };
        let bytes = c.encode();
        let meta = Metadata {
            app_hash: root,
            chunk_hashes: vec![chunk_hash(&bytes)],
            entries: 40,
            bytes: 0,
        };
        (meta, bytes)
    }

    fn check(meta: &Metadata, bytes: &[u8]) -> Result<(Rows, Hash), RestoreError> {
        let e = Expect {
            height: 9,
            meta,
            index: 0,
            lo: [0; 32],
        };
        chunk(&e, 0, bytes)
    }

    #[test]
    fn the_honest_chunk_verifies() {
        let (meta, bytes) = honest();
        let (rows, hi) = check(&meta, &bytes).unwrap();
        assert_eq!((rows.len(), hi), (40, [0xff; 32]));
    }

    proptest! {
        /// Any bytes the metadata names are decoded and verified without a
        /// panic, and refused.
        #[test]
        fn arbitrary_bytes_are_refused_without_panic(bytes in proptest::collection::vec(any::<u8>(), 0..3000)) {
            let (mut meta, _) = honest();
            meta.chunk_hashes[0] = chunk_hash(&bytes);
            prop_assert!(check(&meta, &bytes).is_err());
        }

        /// Any byte of the honest chunk changed (and the metadata made to
        /// name the result) is refused: the snapshot is proven bad.
        #[test]
        fn every_changed_byte_is_refused(pos in any::<prop::sample::Index>(), xor in 1u8..=255) {
            let (mut meta, mut bytes) = honest();
            let i = pos.index(bytes.len());
            bytes[i] ^= xor;
            meta.chunk_hashes[0] = chunk_hash(&bytes);
            let r = check(&meta, &bytes);
            prop_assert!(r.is_err(), "byte {} ^ {}", i, xor);
            prop_assert!(!r.unwrap_err().is_bad_bytes());
        }
    }
}
