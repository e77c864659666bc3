//! The checks a record passes before it is kept: first its metadata (from
//! UPDATE or SYNC), then its value once pulled by hash. Pure functions of
//! the record, the clock and the validator set; each refusal has its own
//! reason, counted by `stave_replica_refused_total{reason}`.

use std::collections::BTreeSet;

use sha2::{Digest, Sha256};

use super::codec::RecordValue;
use super::md::{Metadata, FLAG_PLAIN};
use super::pow;
use crate::proto::replica as pb;

/// UEP-20's cap on a value.
pub const MAX_VALUE_BYTES: u32 = 16 * 1024 * 1024;
/// A record stamped further ahead of the local clock than this is refused.
pub const MAX_FUTURE_MS: u64 = 5 * 60 * 1000;

/// Why a record (or a message) was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, thiserror::Error)]
pub enum Refusal {
    #[error("the record does not decode")]
    Decode,
    #[error("the owner's signature does not verify")]
    Signature,
    #[error("the proof of work is below the target")]
    Pow,
    #[error("the value's size or hash is not the metadata's")]
    Hash,
    #[error("the value names another owner, database or key than its datakey")]
    Mismatch,
    #[error("the owner is not a current validator")]
    NotValidator,
    #[error("the record is older than the horizon")]
    Horizon,
    #[error("the record's TTL has ended")]
    Expired,
    #[error("the value is over 16 MiB")]
    Oversize,
    #[error("the peer's child CRCs do not add up to its own")]
    Crc,
    #[error("the record is stamped more than 5 minutes ahead of this node's clock")]
    Future,
    #[error("too many UPDATEs from this peer")]
    Rate,
    #[error("the owner's records are at this node's quota")]
    Quota,
    #[error("the value holds a stamp later than its record's ts, or a counter column of another replica")]
    Content,
}

impl Refusal {
    /// Every refusal, so the metric starts each reason at zero (a test
    /// checks it against an exhaustive match).
    pub const ALL: [Refusal; 14] = [
        Refusal::Decode,
        Refusal::Signature,
        Refusal::Pow,
        Refusal::Hash,
        Refusal::Mismatch,
        Refusal::NotValidator,
        Refusal::Horizon,
        Refusal::Expired,
        Refusal::Oversize,
        Refusal::Crc,
        Refusal::Future,
        Refusal::Rate,
        Refusal::Quota,
        Refusal::Content,
    ];

    /// The metric label.
    pub fn label(self) -> &'static str {
        match self {
            Refusal::Decode => "decode",
            Refusal::Signature => "signature",
            Refusal::Pow => "pow",
            Refusal::Hash => "hash",
            Refusal::Mismatch => "mismatch",
            Refusal::NotValidator => "not_validator",
            Refusal::Horizon => "horizon",
            Refusal::Expired => "expired",
            Refusal::Oversize => "oversize",
            Refusal::Crc => "crc",
            Refusal::Future => "future",
            Refusal::Rate => "rate",
            Refusal::Quota => "quota",
            Refusal::Content => "content",
        }
    }

    /// Counts one refusal.
    pub fn count(self) {
        crate::metrics::metrics()
            .replica
            .refused
            .with_label_values(&[self.label()])
            .inc();
    }
}

/// What the checks compare against.
pub struct Ctx<'a> {
    pub chain_id: &'a str,
    pub now_ms: u64,
    pub horizon_ms: u64,
    pub pow_base: u64,
    /// Names (operator keys) of the ACTIVE and UNBONDING validators.
    pub current: &'a BTreeSet<[u8; 32]>,
    /// The key that signs for each of `current`, when not its name.
    pub signers: &'a std::collections::BTreeMap<[u8; 32], [u8; 32]>,
}

/// A record whose metadata passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checked {
    pub owner: [u8; 32],
    pub datakey: [u8; 32],
    pub md: Metadata,
}

impl Checked {
    pub fn to_pb(&self) -> pb::RecordMeta {
        pb::RecordMeta {
            owner: self.owner.to_vec(),
            datakey: self.datakey.to_vec(),
            metadata: self.md.to_bytes().to_vec(),
        }
    }
}

/// Whether a record stamped `ts` is still inside the horizon at `now`.
pub fn within_horizon(ts: u64, now_ms: u64, horizon_ms: u64) -> bool {
    ts >= now_ms.saturating_sub(horizon_ms)
}

/// The metadata checks, cheapest first: shape, owner, size, clock,
/// horizon, TTL, proof of work, then the signature.
pub fn check_meta(m: &pb::RecordMeta, ctx: &Ctx<'_>) -> Result<Checked, Refusal> {
    let owner: [u8; 32] = m.owner.as_slice().try_into().map_err(|_| Refusal::Decode)?;
    let datakey: [u8; 32] = m
        .datakey
        .as_slice()
        .try_into()
        .map_err(|_| Refusal::Decode)?;
    let md = Metadata::from_bytes(&m.metadata).map_err(|_| Refusal::Decode)?;
    if md.flags != FLAG_PLAIN {
        return Err(Refusal::Decode);
    }
    if !ctx.current.contains(&owner) {
        return Err(Refusal::NotValidator);
    }
    if md.size > MAX_VALUE_BYTES {
        return Err(Refusal::Oversize);
    }
    let ahead = ctx.now_ms.saturating_add(MAX_FUTURE_MS);
    if md.ts > ahead || md.ttl_begin > ahead {
        return Err(Refusal::Future);
    }
    if !within_horizon(md.ts, ctx.now_ms, ctx.horizon_ms) {
        return Err(Refusal::Horizon);
    }
    if md.expires_at() <= ctx.now_ms {
        return Err(Refusal::Expired);
    }
    if !pow::meets(&md, ctx.pow_base) {
        return Err(Refusal::Pow);
    }
    let signer = ctx.signers.get(&owner).copied().unwrap_or(owner);
    if !md.verify(&signer, ctx.chain_id, &datakey) {
        return Err(Refusal::Signature);
    }
    Ok(Checked { owner, datakey, md })
}

/// The value checks: its size and SHA-256 are the metadata's, it decodes
/// canonically, it names the record's owner and datakey, it holds no stamp
/// later than the record's `ts` (so a record cannot outlive the horizon
/// through what it carries), and its only counter column is its owner's
/// (an owner speaks for itself alone).
pub fn check_value(c: &Checked, value: &[u8]) -> Result<RecordValue, Refusal> {
    if value.len() as u64 != u64::from(c.md.size) {
        return Err(Refusal::Hash);
    }
    let hash: [u8; 32] = Sha256::digest(value).into();
    if hash != c.md.hash {
        return Err(Refusal::Hash);
    }
    let v = RecordValue::decode(value).map_err(|_| Refusal::Decode)?;
    if v.owner != c.owner || v.datakey() != c.datakey {
        return Err(Refusal::Mismatch);
    }
    let late = v.entry.newest().is_some_and(|s| s.ms > c.md.ts);
    if late || v.entry.counter.elems.keys().any(|r| *r != c.owner) {
        return Err(Refusal::Content);
    }
    Ok(v)
}

#[cfg(test)]
mod refusal_tests {
    use super::Refusal;

    /// The position of `r` in [`Refusal::ALL`]: a new variant fails to
    /// compile here until it is placed, and the test checks the list.
    fn index(r: Refusal) -> usize {
        match r {
            Refusal::Decode => 0,
            Refusal::Signature => 1,
            Refusal::Pow => 2,
            Refusal::Hash => 3,
            Refusal::Mismatch => 4,
            Refusal::NotValidator => 5,
            Refusal::Horizon => 6,
            Refusal::Expired => 7,
            Refusal::Oversize => 8,
            Refusal::Crc => 9,
            Refusal::Future => 10,
            Refusal::Rate => 11,
            Refusal::Quota => 12,
            Refusal::Content => 13,
        }
    }

    #[test]
    fn all_lists_every_refusal_once_with_distinct_labels() {
        for (i, r) in Refusal::ALL.iter().enumerate() {
            assert_eq!(index(*r), i, "{}", r.label());
        }
        let labels: std::collections::BTreeSet<_> =
            Refusal::ALL.iter().map(|r| r.label()).collect();
        assert_eq!(labels.len(), Refusal::ALL.len());
    }
}
