//! The wire form of chunks and metadata (`stave.snapshot.v1`), and their
//! conversion to checked domain types. Everything here reads untrusted
//! bytes from peers: it never panics, and says what was wrong.

use prost::Message;
use sha2::{Digest, Sha256};
use thiserror::Error;

use super::smt::{Hash, Leaf, Node, RangeProof, Sibling, MAX_DEPTH};
use crate::proto::snapshot as pb;

/// Why a chunk or a snapshot's metadata was refused.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum FormatError {
    #[error("undecodable {what}: {reason}")]
    Decode { what: &'static str, reason: String },
    #[error("{field} must be 32 bytes, got {len}")]
    Length { field: &'static str, len: usize },
    #[error("sibling kind {0} is neither 1 (leaf) nor 2 (internal)")]
    Kind(u32),
    #[error("sibling depth {0} is outside 1..=256")]
    Depth(u32),
}

/// SHA-256 of a chunk's bytes, as listed in the metadata.
pub fn chunk_hash(bytes: &[u8]) -> Hash {
    Sha256::digest(bytes).into()
}

fn hash32(field: &'static str, b: &[u8]) -> Result<Hash, FormatError> {
    b.try_into().map_err(|_| FormatError::Length {
        field,
        len: b.len(),
    })
}

/// A snapshot's metadata (ABCI `Snapshot.metadata`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metadata {
    pub app_hash: Hash,
    pub chunk_hashes: Vec<Hash>,
    pub entries: u64,
    pub bytes: u64,
}

impl Metadata {
    pub fn encode(&self) -> Vec<u8> {
        pb::SnapshotMetadata {
            app_hash: self.app_hash.to_vec(),
            chunk_hashes: self.chunk_hashes.iter().map(|h| h.to_vec()).collect(),
            entries: self.entries,
            bytes: self.bytes,
        }
        .encode_to_vec()
    }

    pub fn decode(bytes: &[u8]) -> Result<Self, FormatError> {
        let m = pb::SnapshotMetadata::decode(bytes).map_err(|e| FormatError::Decode {
            what: "snapshot metadata",
            reason: e.to_string(),
        })?;
        Ok(Metadata {
            app_hash: hash32("app_hash", &m.app_hash)?,
            chunk_hashes: m
                .chunk_hashes
                .iter()
                .map(|h| hash32("chunk hash", h))
                .collect::<Result<_, _>>()?,
            entries: m.entries,
            bytes: m.bytes,
        })
    }

    /// ABCI `Snapshot.hash`: SHA-256 of the encoded metadata.
    pub fn hash(&self) -> Hash {
        Sha256::digest(self.encode()).into()
    }
}

/// One chunk: the entries whose key hashes lie in `[lo, hi]`, ascending,
/// and the proof of the subtrees outside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    pub height: u64,
    pub index: u32,
    pub lo: Hash,
    pub hi: Hash,
    pub entries: Vec<(Vec<u8>, Vec<u8>)>,
    pub proof: RangeProof,
}

fn sibling_to_pb(s: &Sibling) -> pb::Sibling {
    let (kind, hash, value_hash) = match s.node {
        Node::Leaf(l) => (1, l.key_hash.to_vec(), l.value_hash.to_vec()),
        Node::Internal(h) => (2, h.to_vec(), vec![]),
        // Never listed (unlisted subtrees are empty); encoded as kind 0,
        // which decoding refuses.
        Node::Empty => (0, vec![], vec![]),
    };
    pb::Sibling {
        depth: u32::from(s.depth),
        kind,
        hash,
        value_hash,
    }
}

fn sibling_from_pb(s: &pb::Sibling) -> Result<Sibling, FormatError> {
    let node = match s.kind {
        1 => Node::Leaf(Leaf {
            key_hash: hash32("sibling key hash", &s.hash)?,
            value_hash: hash32("sibling value hash", &s.value_hash)?,
        }),
        2 => Node::Internal(hash32("sibling hash", &s.hash)?),
        k => return Err(FormatError::Kind(k)),
    };
    let depth = u16::try_from(s.depth)
        .ok()
        .filter(|d| (1..=MAX_DEPTH).contains(d))
        .ok_or(FormatError::Depth(s.depth))?;
    Ok(Sibling { depth, node })
}

impl Chunk {
    pub fn encode(&self) -> Vec<u8> {
        pb::Chunk {
            height: self.height,
            index: self.index,
            lo: self.lo.to_vec(),
            hi: self.hi.to_vec(),
            entries: self
                .entries
                .iter()
                .map(|(key, value)| pb::Entry {
                    key: key.clone(),
                    value: value.clone(),
                })
                .collect(),
            left: self.proof.left.iter().map(sibling_to_pb).collect(),
            right: self.proof.right.iter().map(sibling_to_pb).collect(),
        }
        .encode_to_vec()
    }

    pub fn decode(bytes: &[u8]) -> Result<Self, FormatError> {
        let c = pb::Chunk::decode(bytes).map_err(|e| FormatError::Decode {
            what: "chunk",
            reason: e.to_string(),
        })?;
        let siblings = |list: &[pb::Sibling]| -> Result<Vec<Sibling>, FormatError> {
            list.iter().map(sibling_from_pb).collect()
        };
        Ok(Chunk {
            height: c.height,
            index: c.index,
            lo: hash32("lo", &c.lo)?,
            hi: hash32("hi", &c.hi)?,
            proof: RangeProof {
                left: siblings(&c.left)?,
                right: siblings(&c.right)?,
            },
            entries: c.entries.into_iter().map(|e| (e.key, e.value)).collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_and_metadata_round_trip_and_bad_fields_are_named() {
        let c = Chunk {
            height: 7,
            index: 1,
            lo: [1; 32],
            hi: [2; 32],
            entries: vec![(b"k".to_vec(), b"v".to_vec())],
            proof: RangeProof {
                left: vec![Sibling {
                    depth: 3,
                    node: Node::Leaf(Leaf {
                        key_hash: [9; 32],
                        value_hash: [7; 32],
                    }),
                }],
                right: vec![Sibling {
                    depth: 256,
                    node: Node::Internal([8; 32]),
                }],
            },
        };
        assert_eq!(Chunk::decode(&c.encode()).unwrap(), c);
        let m = Metadata {
            app_hash: [3; 32],
            chunk_hashes: vec![[4; 32], [5; 32]],
            entries: 10,
            bytes: 100,
        };
        assert_eq!(Metadata::decode(&m.encode()).unwrap(), m);
        let mut bad = pb::Chunk::decode(c.encode().as_slice()).unwrap();
        bad.left[0].depth = 257;
        assert_eq!(
            Chunk::decode(&bad.encode_to_vec()),
            Err(FormatError::Depth(257))
        );
        bad.left[0].depth = 1;
        bad.left[0].kind = 0;
        assert_eq!(
            Chunk::decode(&bad.encode_to_vec()),
            Err(FormatError::Kind(0))
        );
        bad.left[0].kind = 1;
        bad.lo = vec![0; 31];
        assert_eq!(
            Chunk::decode(&bad.encode_to_vec()),
            Err(FormatError::Length {
                field: "lo",
                len: 31
            })
        );
        assert!(matches!(
            Chunk::decode(&[0xff, 0xff, 0xff]),
            Err(FormatError::Decode { what: "chunk", .. })
        ));
    }
}
