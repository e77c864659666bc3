//! Decode once (review M2): the result of decoding a tx, kept by
//! `(sha256 of its bytes, params version)` across CheckTx, recheck,
//! PrepareProposal, ProcessProposal and FinalizeBlock, and bounded by
//! entries and by bytes, least recently used first out.
//!
//! Decoding is a pure function of the bytes and the params, so a hit gives
//! exactly what decoding again would, intrinsic gas included: the gas a
//! decode measures is stored with it, and a hit charges it as if the work
//! had been done. Only successful decodes are kept; a tx that fails to
//! decode never reaches the mempool and fails ProcessProposal at once.
//! Signatures are not part of the entry: the signature cache answers those.

use std::collections::{BTreeMap, HashMap};

use parking_lot::Mutex;
use prost::Message;
use sha2::{Digest, Sha256};

use crate::keyspaces::params::Params;
use crate::proto::genesis as pb;
use crate::tx::{DecodedTx, EmbeddedSigs, UnverifiedTx};

/// Default byte budget of the entries (see [`entry_bytes`]).
pub const DEFAULT_BYTES: usize = 256 << 20;
/// Default entry count bound.
pub const DEFAULT_ENTRIES: usize = 65_536;

/// `sha256(tx bytes) ‖ params version`.
type Key = [u8; 64];

/// What one entry is accounted at: 20 times its bytes plus a fixed
/// allowance. That bounds the worst shape: protobuf's smallest element (a
/// one-byte `bytes` field) takes 3 bytes on the wire and decodes to a
/// 24-byte `Vec` and an allocation of at least 8 bytes, and the body is kept
/// beside the actions. Typical txs use 2 to 3 times their bytes, so the
/// budget holds about 8 times as many of them as it says.
pub fn entry_bytes(raw_len: usize) -> usize {
    raw_len.saturating_mul(ENTRY_FACTOR).saturating_add(512)
}

const ENTRY_FACTOR: usize = 20;

/// A decode to keep once its tx is admitted ([`DecodeCache::keep`]): its
/// key and embedded signatures; the decoded tx itself comes back with it,
/// so a miss the caller keeps is never copied.
pub struct Keep {
    key: Key,
    /// The id of the decoded tx, to refuse any other tx handed back.
    id: [u8; 32],
    sigs: EmbeddedSigs,
    bytes: usize,
}

struct Slot {
    tx: UnverifiedTx,
    tick: u64,
    bytes: usize,
}

#[derive(Default)]
struct Lru {
    map: HashMap<Key, Slot>,
    /// tick → key, oldest first.
    order: BTreeMap<u64, Key>,
    tick: u64,
    bytes: usize,
}

/// Counters since start-up, for metrics and tests.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct DecodeStats {
    pub hits: u64,
    pub misses: u64,
    pub entries: usize,
    pub bytes: usize,
}

/// The node's decode cache; shared by the consensus app and the mempool.
pub struct DecodeCache {
    lru: Mutex<Lru>,
    version: Mutex<Option<(Params, [u8; 32])>>,
    stats: Mutex<(u64, u64)>,
    /// `stave_decode_cache_total{result="hit"}` and `{result="miss"}`,
    /// looked up once rather than per tx.
    counters: [prometheus::IntCounter; 2],
    max_bytes: usize,
    max_entries: usize,
}

impl Default for DecodeCache {
    fn default() -> Self {
        Self::new(DEFAULT_BYTES, DEFAULT_ENTRIES)
    }
}

impl DecodeCache {
    pub fn new(max_bytes: usize, max_entries: usize) -> Self {
        DecodeCache {
            lru: Mutex::new(Lru::default()),
            version: Mutex::new(None),
            stats: Mutex::new((0, 0)),
            counters: ["hit", "miss"].map(|l| {
                crate::metrics::metrics()
                    .decode_cache
                    .with_label_values(&[l])
            }),
            max_bytes,
            max_entries: max_entries.max(1),
        }
    }

    /// [`UnverifiedTx::decode`], from the cache when these bytes decoded
    /// under these params before; a successful decode is kept.
    pub fn decode(&self, raw: &[u8], params: &Params) -> UnverifiedTx {
        let (tx, keep) = self.decode_unkept(raw, params);
        if let (Some(k), Ok(decoded)) = (keep, tx.decoded()) {
            self.keep(k, decoded.clone());
        }
        tx
    }

    /// As [`Self::decode`], but a miss is not kept yet: it comes back with
    /// the [`Keep`] that would keep it, for the caller to pass to
    /// [`Self::keep`], with the tx it resolves to, or drop.
    pub fn decode_unkept(&self, raw: &[u8], params: &Params) -> (UnverifiedTx, Option<Keep>) {
        let key = self.key(raw, params);
        if let Some(hit) = self.counted(self.get(&key)) {
            return (hit, None);
        }
        let tx = UnverifiedTx::decode(raw, params);
        let keep = match (tx.decoded(), tx.embedded_sigs()) {
            (Ok(d), Some(sigs)) => Some(Keep {
                key,
                id: d.id,
                sigs,
                bytes: entry_bytes(raw.len()),
            }),
            _ => None,
        };
        (tx, keep)
    }

    /// Keeps a decode from [`Self::decode_unkept`]'s miss: `tx` must be
    /// what resolving that decode gave, unchanged; a tx with another id is
    /// not kept.
    pub fn keep(&self, k: Keep, tx: DecodedTx) {
        debug_assert_eq!(k.id, tx.id, "a Keep handed back another tx");
        if k.id == tx.id {
            self.put(k.key, UnverifiedTx::rejoin(tx, k.sigs), k.bytes);
        }
    }

    /// As [`Self::decode`] for the last phase a tx goes through
    /// (FinalizeBlock): a hit leaves the cache, with no copy made, and a
    /// miss is not kept. Block sync and replay, where every tx misses, pay
    /// only the hash and the lookup.
    pub fn decode_last(&self, raw: &[u8], params: &Params) -> UnverifiedTx {
        let key = self.key(raw, params);
        self.counted(self.take(&key))
            .unwrap_or_else(|| UnverifiedTx::decode(raw, params))
    }

    /// Counts `found` as a hit or a miss, and passes it on.
    fn counted(&self, found: Option<UnverifiedTx>) -> Option<UnverifiedTx> {
        let mut s = self.stats.lock();
        let (n, counter) = match found {
            Some(_) => (&mut s.0, &self.counters[0]),
            None => (&mut s.1, &self.counters[1]),
        };
        *n += 1;
        counter.inc();
        found
    }

    pub fn stats(&self) -> DecodeStats {
        let (hits, misses) = *self.stats.lock();
        let lru = self.lru.lock();
        DecodeStats {
            hits,
            misses,
            entries: lru.map.len(),
            bytes: lru.bytes,
        }
    }

    fn key(&self, raw: &[u8], params: &Params) -> Key {
        let mut k = [0u8; 64];
        k[..32].copy_from_slice(&Sha256::digest(raw));
        k[32..].copy_from_slice(&self.version_of(params));
        k
    }

    /// The params version: sha256 of their encoding, recomputed only when
    /// the params change.
    fn version_of(&self, params: &Params) -> [u8; 32] {
        let mut v = self.version.lock();
        match v.as_ref() {
            Some((p, h)) if p == params => *h,
            _ => {
                let h: [u8; 32] = Sha256::digest(pb::Params::from(params).encode_to_vec()).into();
                *v = Some((params.clone(), h));
                h
            }
        }
    }

    fn get(&self, key: &Key) -> Option<UnverifiedTx> {
        let mut lru = self.lru.lock();
        let lru = &mut *lru;
        lru.tick += 1;
        let slot = lru.map.get_mut(key)?;
        lru.order.remove(&slot.tick);
        slot.tick = lru.tick;
        lru.order.insert(slot.tick, *key);
        slot.tx.copy_decoded()
    }

    fn take(&self, key: &Key) -> Option<UnverifiedTx> {
        let mut lru = self.lru.lock();
        let slot = lru.map.remove(key)?;
        lru.order.remove(&slot.tick);
        lru.bytes -= slot.bytes;
        Some(slot.tx)
    }

    fn put(&self, key: Key, tx: UnverifiedTx, bytes: usize) {
        if bytes > self.max_bytes {
            return;
        }
        let mut lru = self.lru.lock();
        let lru = &mut *lru;
        lru.tick += 1;
        if let Some(old) = lru.map.remove(&key) {
            lru.order.remove(&old.tick);
            lru.bytes -= old.bytes;
        }
        lru.order.insert(lru.tick, key);
        lru.map.insert(
            key,
            Slot {
                tx,
                tick: lru.tick,
                bytes,
            },
        );
        lru.bytes += bytes;
        while lru.bytes > self.max_bytes || lru.map.len() > self.max_entries {
            let Some((_, oldest)) = lru.order.pop_first() else {
                break;
            };
            if let Some(s) = lru.map.remove(&oldest) {
                lru.bytes -= s.bytes;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keyspaces::kv::KvSet;
    use crate::tx::build::sign_tx;
    use crate::tx::Action;

    fn tx(n: u8, value_len: usize) -> Vec<u8> {
        let key = ed25519_dalek::SigningKey::from_bytes(&[n.max(1); 32]);
        let set = Action::KvSet(KvSet {
            key: vec![n],
            value: vec![7; value_len],
        });
        sign_tx(&key, "c", u64::from(n), vec![set], "")
    }

    #[test]
    fn a_hit_gives_what_decoding_gives() {
        let c = DecodeCache::default();
        let p = Params::default();
        let raw = tx(1, 10);
        let cold = c.decode(&raw, &p);
        let warm = c.decode(&raw, &p);
        let (cold, warm) = (cold.decoded().unwrap(), warm.decoded().unwrap());
        assert_eq!(
            (cold.id, cold.intrinsic_gas, &cold.body_bytes, &cold.actions),
            (warm.id, warm.intrinsic_gas, &warm.body_bytes, &warm.actions)
        );
        assert_eq!((c.stats().hits, c.stats().misses), (1, 1));
        let last = c.decode_last(&raw, &p);
        assert_eq!(last.decoded().unwrap().id, cold.id);
        assert_eq!(c.stats().entries, 0, "the last phase takes the entry out");
        assert_eq!(c.stats().bytes, 0);
        assert!(c.decode_last(&raw, &p).decoded().is_ok(), "a miss decodes");
        assert_eq!(
            (c.stats().hits, c.stats().misses, c.stats().entries),
            (2, 2, 0)
        );
    }

    #[test]
    fn new_params_are_a_new_version_and_failures_are_not_kept() {
        let c = DecodeCache::default();
        let p = Params::default();
        let raw = tx(1, 10);
        c.decode(&raw, &p);
        let tight = Params {
            max_tx_bytes: 16,
            ..p.clone()
        };
        assert!(
            c.decode(&raw, &tight).decoded().is_err(),
            "decoded under the new params"
        );
        assert!(c.decode(&raw, &tight).decoded().is_err());
        assert!(c.decode(&raw, &p).decoded().is_ok());
        assert_eq!((c.stats().hits, c.stats().misses), (1, 3));
        assert_eq!(c.stats().entries, 1);
    }

    #[test]
    fn the_least_recently_used_entry_goes_first_and_bytes_stay_bounded() {
        let raws: Vec<Vec<u8>> = (1..=4).map(|n| tx(n, 100)).collect();
        let each = entry_bytes(raws[0].len());
        let c = DecodeCache::new(3 * each, 100);
        let p = Params::default();
        for r in &raws[..3] {
            c.decode(r, &p);
        }
        c.decode(&raws[0], &p); // 0 is now the most recent
        c.decode(&raws[3], &p); // evicts 1, the least recent
        assert_eq!(c.stats().entries, 3);
        assert!(c.stats().bytes <= 3 * each);
        let misses = c.stats().misses;
        c.decode(&raws[0], &p);
        c.decode(&raws[2], &p);
        c.decode(&raws[3], &p);
        assert_eq!(c.stats().misses, misses, "0, 2 and 3 were kept");
        c.decode(&raws[1], &p);
        assert_eq!(c.stats().misses, misses + 1, "1 was evicted");

        let by_count = DecodeCache::new(usize::MAX, 2);
        for r in &raws {
            by_count.decode(r, &p);
        }
        assert_eq!(by_count.stats().entries, 2);
    }
}
