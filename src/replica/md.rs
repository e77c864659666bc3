//! UEP-20's `datavalue_md`: the 128-byte metadata of one record.
//!
//! ```text
//! <ts:6><flags:2><size:4><hash:32><sig:64><ttl_begin:8><ttl:4><pow_nonce:8>
//! ```
//!
//! All numbers big-endian. `sig` is the owner's ed25519 signature (checked
//! with ZIP-215, BRIEF §4) over [`Metadata::sign_bytes`]: UEP-20's
//! `<datakey><ts><flags><size><hash>`, prefixed with
//! `lp("stave/uep20/v1") ‖ lp(chain_id)` so that a record signed for one
//! chain, or as anything else, never verifies here. `ttl_begin`, `ttl` and
//! `pow_nonce` are outside the signature, so anyone may extend a TTL
//! (with fresh proof of work, [`super::pow`]).

use thiserror::Error;

/// The metadata's size on the wire and in the store.
pub const MD_BYTES: usize = 128;
/// The signature domain.
pub const UEP20_DOMAIN: &[u8] = b"stave/uep20/v1";
/// `flags` bit 0: the value is stored plain (UEP-23). Stave's records are
/// plain between validators, so every record sets it.
pub const FLAG_PLAIN: u16 = 1;
/// The largest `ts` (6 bytes).
pub const MAX_TS: u64 = (1 << 48) - 1;
/// Milliseconds in one TTL day.
pub const DAY_MS: u64 = 86_400_000;

/// Why 128 bytes are not a metadata record.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum MdError {
    #[error("metadata is {0} bytes, not {MD_BYTES}")]
    Length(usize),
}

/// One record's metadata (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Metadata {
    /// Milliseconds since the epoch (48 bits).
    pub ts: u64,
    pub flags: u16,
    pub size: u32,
    /// SHA-256 of the value.
    pub hash: [u8; 32],
    pub sig: [u8; 64],
    /// Milliseconds since the epoch.
    pub ttl_begin: u64,
    /// Days.
    pub ttl: u32,
    pub pow_nonce: u64,
}

fn take<const N: usize>(b: &[u8], at: usize) -> [u8; N] {
    let mut out = [0u8; N];
    if let Some(s) = b.get(at..at + N) {
        out.copy_from_slice(s);
    }
    out
}

fn be(b: &[u8]) -> u64 {
    b.iter().fold(0u64, |acc, x| (acc << 8) | u64::from(*x))
}

impl Metadata {
    /// The 128 bytes.
    pub fn to_bytes(&self) -> [u8; MD_BYTES] {
        let mut out = [0u8; MD_BYTES];
        out[0..6].copy_from_slice(&self.ts.to_be_bytes()[2..]);
        out[6..8].copy_from_slice(&self.flags.to_be_bytes());
        out[8..12].copy_from_slice(&self.size.to_be_bytes());
        out[12..44].copy_from_slice(&self.hash);
        out[44..108].copy_from_slice(&self.sig);
        out[108..116].copy_from_slice(&self.ttl_begin.to_be_bytes());
        out[116..120].copy_from_slice(&self.ttl.to_be_bytes());
        out[120..128].copy_from_slice(&self.pow_nonce.to_be_bytes());
        out
    }

    /// Parses exactly 128 bytes.
    pub fn from_bytes(b: &[u8]) -> Result<Self, MdError> {
        if b.len() != MD_BYTES {
            return Err(MdError::Length(b.len()));
        }
        Ok(Metadata {
            ts: be(&b[0..6]),
            flags: u16::from_be_bytes(take(b, 6)),
            size: u32::from_be_bytes(take(b, 8)),
            hash: take(b, 12),
            sig: take(b, 44),
            ttl_begin: u64::from_be_bytes(take(b, 108)),
            ttl: u32::from_be_bytes(take(b, 116)),
            pow_nonce: u64::from_be_bytes(take(b, 120)),
        })
    }

    /// The fields the owner signs, in UEP-20's order:
    /// `<ts:6><flags:2><size:4><hash:32>`.
    fn signed_fields(&self) -> [u8; 44] {
        let b = self.to_bytes();
        take(&b, 0)
    }

    /// `lp("stave/uep20/v1") ‖ lp(chain_id) ‖ datakey ‖ ts ‖ flags ‖ size ‖
    /// hash`, where `lp(x)` is `len(x):u32be ‖ x`.
    pub fn sign_bytes(&self, chain_id: &str, datakey: &[u8; 32]) -> Vec<u8> {
        let mut out = Vec::with_capacity(4 + UEP20_DOMAIN.len() + 4 + chain_id.len() + 76);
        for part in [UEP20_DOMAIN, chain_id.as_bytes()] {
            out.extend_from_slice(&(part.len() as u32).to_be_bytes());
            out.extend_from_slice(part);
        }
        out.extend_from_slice(datakey);
        out.extend_from_slice(&self.signed_fields());
        out
    }

    /// Signs the record with the owner's key.
    pub fn sign(&mut self, key: &ed25519_dalek::SigningKey, chain_id: &str, datakey: &[u8; 32]) {
        use ed25519_dalek::Signer;
        self.sig = key.sign(&self.sign_bytes(chain_id, datakey)).to_bytes();
    }

    /// Whether `owner` signed this record for `datakey` on `chain_id`
    /// (ZIP-215; small-order owner keys are refused).
    pub fn verify(&self, owner: &[u8; 32], chain_id: &str, datakey: &[u8; 32]) -> bool {
        let Ok((_, vk)) = crate::tx::parse_identity_key(owner) else {
            return false;
        };
        let sig = ed25519_consensus::Signature::from(self.sig);
        vk.verify(&sig, &self.sign_bytes(chain_id, datakey)).is_ok()
    }

    /// CRC-32 (IEEE) of the 128 bytes: what CRC_DIFF XORs.
    pub fn crc(&self) -> u32 {
        crc32(&self.to_bytes())
    }

    /// When the record's TTL ends (ms since the epoch).
    pub fn expires_at(&self) -> u64 {
        self.ttl_begin
            .saturating_add(u64::from(self.ttl).saturating_mul(DAY_MS))
    }

    /// Whether this version replaces `old` of the same datakey, by a
    /// total order, so every node keeps the same of any two: a later `ts`;
    /// at the same `ts`, the larger hash (one owner signing two values in
    /// one millisecond); then the later TTL end (a TTL extension: anyone
    /// may make one); then the larger 128 bytes (two extensions to the same
    /// end, or differing work). Equal metadata is not newer.
    pub fn newer_than(&self, old: &Metadata) -> bool {
        let rank = |m: &Metadata| (m.ts, m.hash, m.expires_at(), m.to_bytes());
        rank(self) > rank(old)
    }
}

/// CRC-32/IEEE (the zlib polynomial), bitwise: metadata is 128 bytes.
pub fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for b in data {
        crc ^= u32::from(*b);
        for _ in 0..8 {
            let mask = (crc & 1).wrapping_neg();
            crc = (crc >> 1) ^ (0xEDB8_8320 & mask);
        }
    }
    !crc
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Metadata {
        Metadata {
            ts: 0x0102_0304_0506,
            flags: FLAG_PLAIN,
            size: 0x0a0b_0c0d,
            hash: [0x11; 32],
            sig: [0x22; 64],
            ttl_begin: 0x3132_3334_3536_3738,
            ttl: 7,
            pow_nonce: 0x4142_4344_4546_4748,
        }
    }

    #[test]
    fn the_layout_is_uep20s_128_bytes() {
        let b = sample().to_bytes();
        assert_eq!(&b[0..6], &[1, 2, 3, 4, 5, 6]);
        assert_eq!(&b[6..8], &[0, 1]);
        assert_eq!(&b[8..12], &[0x0a, 0x0b, 0x0c, 0x0d]);
        assert_eq!(&b[12..44], &[0x11; 32]);
        assert_eq!(&b[44..108], &[0x22; 64]);
        assert_eq!(&b[108..116], &0x3132_3334_3536_3738u64.to_be_bytes());
        assert_eq!(&b[116..120], &[0, 0, 0, 7]);
        assert_eq!(&b[120..128], &0x4142_4344_4546_4748u64.to_be_bytes());
        assert_eq!(Metadata::from_bytes(&b), Ok(sample()));
        assert_eq!(Metadata::from_bytes(&b[..127]), Err(MdError::Length(127)));
    }

    #[test]
    fn crc32_matches_the_standard_check_value() {
        // The CRC-32/IEEE check value of "123456789".
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
    }

    #[test]
    fn signatures_bind_chain_datakey_and_signed_fields_only() {
        let key = ed25519_dalek::SigningKey::from_bytes(&[5; 32]);
        let owner = key.verifying_key().to_bytes();
        let dk = [9u8; 32];
        let mut md = sample();
        md.sign(&key, "c", &dk);
        assert!(md.verify(&owner, "c", &dk));
        assert!(!md.verify(&owner, "d", &dk));
        assert!(!md.verify(&owner, "c", &[8; 32]));
        assert!(!md.verify(&[3; 32], "c", &dk));
        let b = md.to_bytes();
        for i in 0..MD_BYTES {
            let mut t = b;
            t[i] ^= 1;
            let m = Metadata::from_bytes(&t).unwrap();
            // ts, flags, size, hash and sig are bound; the TTL and PoW
            // fields are not (UEP-20: anyone may extend a TTL).
            assert_eq!(m.verify(&owner, "c", &dk), i >= 108, "byte {i}");
        }
    }

    #[test]
    fn newer_means_later_ts_then_larger_hash_then_later_ttl_end() {
        let a = sample();
        let mut b = a;
        b.ts += 1;
        assert!(b.newer_than(&a) && !a.newer_than(&b));
        let mut c = a;
        c.hash[0] = 0x12;
        assert!(c.newer_than(&a) && !a.newer_than(&c));
        let mut d = a;
        d.ttl += 1;
        assert!(d.newer_than(&a) && !a.newer_than(&d));
        // The same end reached two ways, or other work: still one winner.
        let mut e = a;
        e.ttl_begin += DAY_MS;
        e.ttl -= 1;
        assert_eq!(e.expires_at(), a.expires_at());
        assert!(e.newer_than(&a) != a.newer_than(&e));
        let mut f = a;
        f.pow_nonce ^= 1;
        assert!(f.newer_than(&a) != a.newer_than(&f));
        // A later TTL end never beats a later ts.
        let mut g = b;
        g.ttl = 0;
        assert!(g.newer_than(&d));
        assert!(!a.newer_than(&a));
    }
}
