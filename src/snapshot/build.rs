//! Building a snapshot of height `H` from the chain store: the state at
//! `H` is read from the tree's versioned values (which are in key-hash
//! order already), so the build needs only that `H` stays unpruned (see
//! [`crate::store::ChainStore::pin`]), never a lock on consensus.

use rocksdb::IteratorMode;
use thiserror::Error;

use super::format::{chunk_hash, Chunk, Metadata};
use super::smt::{self, Hash, Leaf, Prover};
use super::{CHUNK_BYTES, MAX_CHUNK_BYTES};
use crate::store::{cf, db::handle, ChainStore, StoreError};

#[derive(Debug, Error)]
pub enum BuildError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("height {0} is not in the tree (pruned, or not committed yet)")]
    NoRoot(u64),
    #[error("state at height {height} hashes to {got}, but the tree's root is {want}")]
    RootMismatch {
        height: u64,
        got: String,
        want: String,
    },
    #[error("key preimage of {0} is missing")]
    NoPreimage(String),
    #[error("chunk {index} encodes to {len} bytes, over {MAX_CHUNK_BYTES}: an entry is too large")]
    ChunkTooLarge { index: u32, len: usize },
    #[error("writing chunk {index}: {reason}")]
    Sink { index: u32, reason: String },
}

/// Calls `visit(key_hash, key, value)` for every live row of the state at
/// `height`, in key-hash order: for each key hash, the newest versioned
/// value at or below `height`, unless that is a deletion.
pub fn state_at(
    store: &ChainStore,
    height: u64,
    mut visit: impl FnMut(Hash, Vec<u8>, Vec<u8>) -> Result<(), BuildError>,
) -> Result<(), BuildError> {
    let db = store.db();
    let values = handle(db, cf::JMT_VALUES);
    let keys = handle(db, cf::JMT_KEYS);
    let mut current: Option<(Hash, Option<Vec<u8>>)> = None;
    let mut flush = |row: Option<(Hash, Option<Vec<u8>>)>| -> Result<(), BuildError> {
        if let Some((kh, Some(tagged))) = row {
            if tagged.first() == Some(&1) {
                let key = db
                    .get_cf(keys, kh)
                    .map_err(StoreError::from)?
                    .ok_or_else(|| BuildError::NoPreimage(hex::encode(kh)))?;
                visit(kh, key, tagged.get(1..).unwrap_or_default().to_vec())?;
            }
        }
        Ok(())
    };
    for item in db.iterator_cf(values, IteratorMode::Start) {
        let (k, v) = item.map_err(StoreError::from)?;
        let (kh, ver) = cf::split_jmt_value_key(&k)
            .ok_or_else(|| StoreError::corrupt(&k, "not a versioned-value key"))?;
        if current.as_ref().map(|(h, _)| *h) != Some(kh) {
            flush(current.take())?;
            current = Some((kh, None));
        }
        if ver <= height {
            if let Some((_, best)) = current.as_mut() {
                *best = Some(v.to_vec());
            }
        }
    }
    flush(current.take())
}

/// Bytes of a protobuf varint.
fn varint_len(n: usize) -> usize {
    (usize::BITS - (n | 1).leading_zeros()).div_ceil(7) as usize
}

/// Bytes an entry takes in an encoded chunk: its `Entry` message (two
/// length-delimited fields) and the repeated field's tag and length. Exact
/// for a non-empty key and value; 2 bytes over per empty one (proto3 omits
/// empty fields), which only makes the cut a little early, deterministically.
pub fn entry_bytes(key: usize, value: usize) -> usize {
    let e = 2 + varint_len(key) + key + varint_len(value) + value;
    1 + varint_len(e) + e
}

/// Where each chunk starts, by entry index: greedy at `limit` encoded
/// entry bytes, a new chunk only when the current one is not empty.
pub fn cut(sizes: &[usize], limit: usize) -> Vec<usize> {
    let mut starts = vec![0];
    let mut bytes = 0usize;
    for (i, s) in sizes.iter().enumerate() {
        if bytes > 0 && bytes.saturating_add(*s) > limit {
            starts.push(i);
            bytes = 0;
        }
        bytes = bytes.saturating_add(*s);
    }
    starts
}

/// The key-hash interval of each chunk: `lo_0 = 0…0`, `hi_i` = its last
/// key hash, `lo_{i+1} = hi_i + 1`, and the last `hi = f…f`.
pub fn intervals(leaves: &[Leaf], starts: &[usize]) -> Vec<(Hash, Hash)> {
    let mut out = Vec::with_capacity(starts.len());
    let mut lo = [0u8; 32];
    for (i, start) in starts.iter().enumerate() {
        let end = starts.get(i + 1).copied().unwrap_or(leaves.len());
        let hi = match starts.get(i + 1) {
            None => [0xff; 32],
            Some(_) => leaves
                .get(end.saturating_sub(1).max(*start))
                .map_or([0xff; 32], |l| l.key_hash),
        };
        out.push((lo, hi));
        lo = smt::add_one(&hi).unwrap_or([0xff; 32]);
    }
    out
}

/// Builds the snapshot of `height` in format 1 ([`CHUNK_BYTES`] chunks).
pub fn build(
    store: &ChainStore,
    height: u64,
    sink: impl FnMut(u32, Vec<u8>) -> Result<(), String>,
) -> Result<Metadata, BuildError> {
    build_with(store, height, CHUNK_BYTES, sink)
}

/// Builds the snapshot of `height` with chunks cut at `chunk_bytes` of
/// encoded entries (tests cut small to get many chunks): hands each
/// encoded chunk to `sink` in index order and returns the metadata. Checks
/// that the state read hashes to the tree's root at `height` before
/// anything is handed out, and that no chunk is over [`MAX_CHUNK_BYTES`].
pub fn build_with(
    store: &ChainStore,
    height: u64,
    chunk_bytes: usize,
    mut sink: impl FnMut(u32, Vec<u8>) -> Result<(), String>,
) -> Result<Metadata, BuildError> {
    let want = store.root_at(height)?.ok_or(BuildError::NoRoot(height))?;
    let mut leaves = Vec::new();
    let mut sizes = Vec::new();
    state_at(store, height, |_, key, value| {
        leaves.push(smt::leaf(&key, &value));
        sizes.push(entry_bytes(key.len(), value.len()));
        Ok(())
    })?;
    let mut prover = Prover::new(&leaves);
    let got = prover.root().hash();
    if got != want {
        return Err(BuildError::RootMismatch {
            height,
            got: hex::encode(got),
            want: hex::encode(want),
        });
    }
    let starts = cut(&sizes, chunk_bytes);
    let bounds = intervals(&leaves, &starts);
    let proofs: Vec<_> = bounds.iter().map(|(lo, hi)| prover.prove(lo, hi)).collect();
    drop(prover);
    let mut meta = Metadata {
        app_hash: want,
        chunk_hashes: Vec::with_capacity(bounds.len()),
        entries: leaves.len() as u64,
        bytes: 0,
    };
    let mut chunk = |index: usize, entries: Vec<(Vec<u8>, Vec<u8>)>| -> Result<(), BuildError> {
        let (lo, hi) = bounds.get(index).copied().unwrap_or_default();
        let c = Chunk {
            height,
            index: index as u32,
            lo,
            hi,
            entries,
            proof: proofs.get(index).cloned().unwrap_or_default(),
        };
        meta.bytes += c
            .entries
            .iter()
            .map(|(k, v)| (k.len() + v.len()) as u64)
            .sum::<u64>();
        let bytes = c.encode();
        if bytes.len() > MAX_CHUNK_BYTES {
            return Err(BuildError::ChunkTooLarge {
                index: index as u32,
                len: bytes.len(),
            });
        }
        meta.chunk_hashes.push(chunk_hash(&bytes));
        sink(index as u32, bytes).map_err(|reason| BuildError::Sink {
            index: index as u32,
            reason,
        })
    };
    let mut index = 0usize;
    let mut entries = Vec::new();
    let mut seen = 0usize;
    state_at(store, height, |_, key, value| {
        if starts.get(index + 1) == Some(&seen) {
            chunk(index, std::mem::take(&mut entries))?;
            index += 1;
        }
        entries.push((key, value));
        seen += 1;
        Ok(())
    })?;
    chunk(index, entries)?;
    Ok(meta)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_are_cut_greedily_and_only_when_not_empty() {
        assert_eq!(cut(&[], 100), vec![0]);
        assert_eq!(cut(&[1, 2, 3], 100), vec![0]);
        assert_eq!(cut(&[50, 50, 1, 50], 100), vec![0, 2]);
        assert_eq!(
            cut(&[200, 1], 100),
            vec![0, 1],
            "an oversized entry is alone"
        );
    }

    #[test]
    fn entry_bytes_are_the_encoded_size() {
        use prost::Message;
        for (k, v) in [(1, 1), (32, 100), (127, 128), (300, 70_000)] {
            let c = crate::proto::snapshot::Chunk {
                entries: vec![crate::proto::snapshot::Entry {
                    key: vec![1; k],
                    value: vec![2; v],
                }],
                ..Default::default()
            };
            assert_eq!(entry_bytes(k, v), c.encoded_len(), "key {k} value {v}");
        }
    }

    #[test]
    fn intervals_cover_every_key_hash_without_gaps() {
        let leaves: Vec<Leaf> = (1u8..=5)
            .map(|i| Leaf {
                key_hash: [i * 40; 32],
                value_hash: [0; 32],
            })
            .collect();
        let b = intervals(&leaves, &[0, 2, 4]);
        assert_eq!(b[0], ([0; 32], [80; 32]));
        assert_eq!(b[1].0, smt::add_one(&[80; 32]).unwrap());
        assert_eq!(b[1].1, [160; 32]);
        assert_eq!(b[2], (smt::add_one(&[160; 32]).unwrap(), [0xff; 32]));
    }
}
