//! Content ids: CIDv1 with the raw codec (0x55) over a sha2-256 multihash.
//!
//! Consensus sees a cid only as its 36-byte binary form,
//! `01 55 12 20 ‖ sha256(bytes)`, checked by [`is_raw_cid`] without any
//! parser. The `cid` crate is used only at the edges, for the string form
//! (`bafkrei…`, base32 lower) that people and the CLI use.

use std::io::Read;
use std::path::Path;

use cid::multihash::Multihash;
use sha2::{Digest, Sha256};

use super::MediaError;

/// The binary form of a raw sha2-256 CIDv1.
pub type RawCid = [u8; RAW_CID_LEN];

/// Bytes in a [`RawCid`].
pub const RAW_CID_LEN: usize = 36;

/// Version 1, raw codec, sha2-256, 32-byte digest (each one varint byte).
pub const RAW_CID_PREFIX: [u8; 4] = [0x01, 0x55, 0x12, 0x20];

const RAW_CODEC: u64 = 0x55;
const SHA2_256: u64 = 0x12;

/// A cid string that is not the canonical form of a raw sha2-256 CIDv1.
#[derive(Debug, thiserror::Error)]
pub enum CidError {
    #[error("not a cid: {input:?}: {reason}")]
    Parse { input: String, reason: String },
    #[error("{input:?} is a cid, but not a canonical raw sha2-256 CIDv1 (`bafkrei…`)")]
    NotRawSha256 { input: String },
}

/// The cid of a sha2-256 digest.
pub fn raw_cid_of_digest(digest: &[u8; 32]) -> RawCid {
    let mut out = [0u8; RAW_CID_LEN];
    out[..4].copy_from_slice(&RAW_CID_PREFIX);
    out[4..].copy_from_slice(digest);
    out
}

/// The cid of `bytes`.
pub fn raw_cid(bytes: &[u8]) -> RawCid {
    raw_cid_of_digest(&Sha256::digest(bytes).into())
}

/// Fixtures: `label` when it already is a raw cid (or is empty, so a test
/// can still send an empty cid), else the cid of the label's bytes. Tests
/// name content by label ("track-1") and get the same 36-byte cid wherever
/// they use it.
#[doc(hidden)]
pub fn label_cid(label: &[u8]) -> Vec<u8> {
    if label.is_empty() || is_raw_cid(label) {
        label.to_vec()
    } else {
        raw_cid(label).to_vec()
    }
}

/// Fixtures, in a `const`: a raw cid whose digest is `label` (at most 32
/// bytes) padded with 0xAA, so its hex never runs 40 characters without an
/// `a` (tests/e2e_expensive_tx_flood_keeps_every_node_committing.rs relies
/// on it). [`label_cid`] passes it through unchanged.
#[doc(hidden)]
pub const fn fixture_cid(label: &[u8]) -> RawCid {
    assert!(label.len() <= 32, "a fixture label is at most 32 bytes");
    let mut out = [0xAAu8; RAW_CID_LEN];
    let mut i = 0;
    while i < 4 {
        out[i] = RAW_CID_PREFIX[i];
        i += 1;
    }
    let mut j = 0;
    while j < label.len() {
        out[4 + j] = label[j];
        j += 1;
    }
    out
}

/// The cid and length of a file, read in 1 MiB pieces.
pub fn raw_cid_of_file(path: &Path) -> Result<(RawCid, u64), MediaError> {
    let mut f = std::fs::File::open(path).map_err(|e| MediaError::io(path, e))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut len = 0u64;
    loop {
        let n = f.read(&mut buf).map_err(|e| MediaError::io(path, e))?;
        if n == 0 {
            return Ok((raw_cid_of_digest(&h.finalize().into()), len));
        }
        h.update(buf.get(..n).unwrap_or_default());
        len += n as u64;
    }
}

/// Whether `b` is exactly the binary form of a raw sha2-256 CIDv1.
pub fn is_raw_cid(b: &[u8]) -> bool {
    b.len() == RAW_CID_LEN && b.starts_with(&RAW_CID_PREFIX)
}

/// The string form (multibase base32 lower, `bafkrei…`).
pub fn cid_string(raw: &RawCid) -> String {
    match Multihash::<64>::wrap(SHA2_256, &raw[4..]) {
        Ok(mh) => cid::Cid::new_v1(RAW_CODEC, mh).to_string(),
        // A 32-byte digest always fits a 64-byte multihash.
        Err(_) => hex::encode(raw),
    }
}

/// Parses the canonical string form of a raw sha2-256 CIDv1, and nothing
/// else: no other base, codec, hash or version, no `/ipfs/` path.
pub fn parse_cid(s: &str) -> Result<RawCid, CidError> {
    let c = cid::Cid::try_from(s).map_err(|e| CidError::Parse {
        input: s.to_string(),
        reason: e.to_string(),
    })?;
    let h = c.hash();
    let digest: Result<[u8; 32], _> = h.digest().try_into();
    match digest {
        Ok(d)
            if c.version() == cid::Version::V1
                && c.codec() == RAW_CODEC
                && h.code() == SHA2_256
                && c.to_string() == s =>
        {
            Ok(raw_cid_of_digest(&d))
        }
        _ => Err(CidError::NotRawSha256 {
            input: s.to_string(),
        }),
    }
}
