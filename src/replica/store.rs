//! The records this node holds, its own and its peers', in the local
//! store, and the in-memory CRC index CRC_DIFF reads.
//!
//! - `local/replica/md/{datakey}`: `StoredRecord` (owner, the 128-byte
//!   metadata, db and key);
//! - `local/replica/val/{hash}` and `local/replica/ref/{hash}`: each value
//!   once, with the number of records naming it; a value goes with its
//!   last record;
//! - `local/replica/idx/{len(db)}{db}{key}`: the owners holding a record of
//!   (db, key), for reads and key listings.
//!
//! One writer at a time ([`Records::put`], [`Records::remove`]): each call
//! is one synced batch, and a record replaces the one it finds only if it
//! is newer ([`Metadata::newer_than`]), checked under the writer lock.

use std::collections::BTreeMap;

use parking_lot::{Mutex, RwLock};
use prost::Message;

use super::crc_index::CrcIndex;
pub use super::crc_index::Summary;
use super::md::Metadata;
use super::usage::{admit, release, Quota, Usage};
use crate::local::{keys, LocalError, LocalRaw, LocalStore};
use crate::proto::replica as pb;

/// A record as held: who signed it, its metadata, and its db and key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Held {
    pub owner: [u8; 32],
    pub md: Metadata,
    pub db: String,
    pub key: Vec<u8>,
}

/// A record to store, with its value.
#[derive(Clone, Debug)]
pub struct Put {
    pub datakey: [u8; 32],
    pub held: Held,
    pub value: Vec<u8>,
}

/// Rows [`Records::open`] reads at a time.
const OPEN_PAGE: usize = 10_000;

/// A page of held records with their datakeys, and whether more follow.
pub type Page = (Vec<([u8; 32], Held)>, bool);

/// The records store (see the module docs). Cheap to share behind an Arc.
pub struct Records {
    local: LocalStore,
    /// datakey → CRC-32 of its metadata, with prefix summaries.
    crcs: RwLock<CrcIndex>,
    /// What each owner's records take; changed under `write`.
    usage: Mutex<BTreeMap<[u8; 32], Usage>>,
    quota: Quota,
    write: Mutex<()>,
}

/// What [`Records::put`] stored, and how many records it left out because
/// their owner is at its quota.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Stored {
    pub keys: Vec<[u8; 32]>,
    pub over_quota: usize,
}

fn decode_held(key: &[u8], raw: &[u8]) -> Result<Held, LocalError> {
    let r = pb::StoredRecord::decode(raw).map_err(|e| LocalError::corrupt(key, e))?;
    let owner = r
        .owner
        .as_slice()
        .try_into()
        .map_err(|_| LocalError::corrupt(key, "owner is not 32 bytes"))?;
    let md = Metadata::from_bytes(&r.metadata).map_err(|e| LocalError::corrupt(key, e))?;
    Ok(Held {
        owner,
        md,
        db: r.db,
        key: r.key,
    })
}

fn encode_held(h: &Held) -> Vec<u8> {
    pb::StoredRecord {
        owner: h.owner.to_vec(),
        metadata: h.md.to_bytes().to_vec(),
        db: h.db.clone(),
        key: h.key.clone(),
    }
    .encode_to_vec()
}

fn datakey_of(row_key: &[u8]) -> Option<[u8; 32]> {
    keys::id_of(&keys::replica_md_prefix(), row_key)?
        .try_into()
        .ok()
}

/// The rows one batch writes and deletes, with the values' reference
/// counts and the key index as the batch leaves them.
#[derive(Default)]
struct Batch {
    puts: BTreeMap<Vec<u8>, Vec<u8>>,
    deletes: Vec<Vec<u8>>,
    refs: BTreeMap<[u8; 32], u32>,
    idx: BTreeMap<(String, Vec<u8>), Vec<[u8; 32]>>,
}

impl Batch {
    fn put(&mut self, k: Vec<u8>, v: Vec<u8>) {
        self.deletes.retain(|d| *d != k);
        self.puts.insert(k, v);
    }
    fn delete(&mut self, k: Vec<u8>) {
        self.puts.remove(&k);
        self.deletes.push(k);
    }
}

impl Records {
    /// The local store the records live in.
    pub fn local(&self) -> &LocalStore {
        &self.local
    }

    /// Opens the records of `local`, loading the CRC index a page at a
    /// time. A row that does not decode is removed (the store is rebuilt
    /// from peers).
    pub fn open(local: LocalStore, quota: Quota) -> Result<Self, LocalError> {
        let mut crcs = CrcIndex::default();
        let mut usage: BTreeMap<[u8; 32], Usage> = BTreeMap::new();
        let mut bad = Vec::new();
        let prefix = keys::replica_md_prefix();
        let mut from = prefix.clone();
        loop {
            let (rows, more) = local.scan_raw_page(&prefix, &from, OPEN_PAGE, usize::MAX)?;
            for (k, v) in &rows {
                match (datakey_of(k), decode_held(k, v)) {
                    (Some(dk), Ok(h)) => {
                        crcs.insert(dk, h.md.crc());
                        let u = usage.entry(h.owner).or_default();
                        *u = admit(*u, Quota::UNLIMITED, None, &h.md).unwrap_or(*u);
                    }
                    _ => bad.push(k.clone()),
                }
            }
            match rows.last() {
                Some((k, _)) if more => from = [k.as_slice(), &[0]].concat(),
                _ => break,
            }
        }
        if !bad.is_empty() {
            tracing::warn!(rows = bad.len(), "removing corrupt replica records");
            local.delete_raw_all(&bad)?;
        }
        Ok(Records {
            local,
            crcs: RwLock::new(crcs),
            usage: Mutex::new(usage),
            quota,
            write: Mutex::new(()),
        })
    }

    /// How many records are held.
    pub fn len(&self) -> usize {
        self.crcs.read().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The record held under `datakey`.
    pub fn get(&self, datakey: &[u8; 32]) -> Result<Option<Held>, LocalError> {
        let k = keys::replica_md(datakey);
        self.local
            .get_raw(&k)?
            .map(|v| decode_held(&k, &v))
            .transpose()
    }

    /// A value by hash.
    pub fn value(&self, hash: &[u8; 32]) -> Result<Option<Vec<u8>>, LocalError> {
        self.local.get_raw(&keys::replica_value(hash))
    }

    /// The owners holding a record of (db, key).
    pub fn owners_of(&self, db: &str, key: &[u8]) -> Result<Vec<[u8; 32]>, LocalError> {
        let k = keys::replica_idx(db, key);
        let Some(raw) = self.local.get_raw(&k)? else {
            return Ok(Vec::new());
        };
        let o = pb::KeyOwners::decode(raw.as_slice()).map_err(|e| LocalError::corrupt(&k, e))?;
        Ok(o.owners
            .iter()
            .filter_map(|b| <[u8; 32]>::try_from(b.as_slice()).ok())
            .collect())
    }

    /// Keys of `db` after `start_after`, at most `limit`; true when more
    /// follow.
    pub fn keys(
        &self,
        db: &str,
        start_after: &[u8],
        limit: usize,
    ) -> Result<(Vec<Vec<u8>>, bool), LocalError> {
        let prefix = keys::replica_idx_prefix(db);
        let mut from = keys::replica_idx(db, start_after);
        if !start_after.is_empty() {
            from.push(0);
        }
        let (rows, more) = self
            .local
            .scan_raw_page(&prefix, &from, limit, usize::MAX)?;
        let out = rows
            .into_iter()
            .filter_map(|(k, _)| keys::id_of(&prefix, &k).map(<[u8]>::to_vec))
            .collect();
        Ok((out, more))
    }

    /// The records under a datakey prefix after `start_after`, at most
    /// `limit`, in datakey order; true when more follow.
    pub fn scan(
        &self,
        prefix: &[u8],
        start_after: Option<&[u8; 32]>,
        limit: usize,
    ) -> Result<Page, LocalError> {
        let p = keys::replica_md(prefix);
        let from = match start_after {
            Some(dk) => [keys::replica_md(dk).as_slice(), &[0]].concat(),
            None => p.clone(),
        };
        let (rows, more) = self.local.scan_raw_page(&p, &from, limit, usize::MAX)?;
        let mut out = Vec::with_capacity(rows.len());
        for (k, v) in rows {
            if let Some(dk) = datakey_of(&k) {
                out.push((dk, decode_held(&k, &v)?));
            }
        }
        Ok((out, more))
    }

    /// The XOR of the CRCs, and the count, of the records under `prefix`.
    pub fn summary(&self, prefix: &[u8]) -> Summary {
        self.crcs.write().summary(prefix)
    }

    /// The summaries of `prefix`'s non-empty children (`prefix ‖ i`), in
    /// index order. Empty for a whole datakey.
    pub fn children(&self, prefix: &[u8]) -> Vec<(u8, Summary)> {
        self.crcs.write().children(prefix)
    }

    /// `prefix`'s summary and, when it is not `theirs`, its children, read
    /// under one lock so that they agree with each other (a write lock:
    /// a walk of a crowded prefix keeps what it found).
    pub fn crc_answer(&self, prefix: &[u8], theirs: Summary) -> (Summary, Vec<(u8, Summary)>) {
        let mut ix = self.crcs.write();
        let s = ix.summary(prefix);
        let kids = if s == theirs {
            Vec::new()
        } else {
            ix.children(prefix)
        };
        (s, kids)
    }

    /// Calls `f` with every record held, in datakey order, reading the
    /// rows a page at a time (for sweeps).
    pub fn for_each(&self, mut f: impl FnMut([u8; 32], &Held)) -> Result<(), LocalError> {
        let mut after: Option<[u8; 32]> = None;
        loop {
            let (rows, more) = self.scan(&[], after.as_ref(), 10_000)?;
            for (dk, h) in &rows {
                f(*dk, h);
            }
            after = rows.last().map(|(dk, _)| *dk);
            if !more || after.is_none() {
                return Ok(());
            }
        }
    }

    /// What `owner`'s records take here.
    pub fn usage(&self, owner: &[u8; 32]) -> Usage {
        self.usage.lock().get(owner).copied().unwrap_or_default()
    }

    /// Stores each record that is newer than the one held (or new) and
    /// fits its owner's quota, with its value, in one synced batch.
    pub fn put(&self, items: Vec<Put>) -> Result<Stored, LocalError> {
        let _w = self.write.lock();
        let mut b = Batch::default();
        let mut stored: BTreeMap<[u8; 32], u32> = BTreeMap::new();
        let mut usage: BTreeMap<[u8; 32], Usage> = BTreeMap::new();
        let mut over_quota = 0;
        for p in items {
            let old = self.get(&p.datakey)?;
            let staged = stored.contains_key(&p.datakey);
            if staged || old.as_ref().is_some_and(|o| !p.held.md.newer_than(&o.md)) {
                continue;
            }
            let owner = p.held.owner;
            let u = usage
                .get(&owner)
                .copied()
                .unwrap_or_else(|| self.usage(&owner));
            let Some(next) = admit(u, self.quota, old.as_ref().map(|o| &o.md), &p.held.md) else {
                over_quota += 1;
                continue;
            };
            usage.insert(owner, next);
            if let Some(o) = &old {
                self.unref(&mut b, &o.md.hash)?;
                self.unindex(&mut b, o)?;
            }
            self.reference(&mut b, &p.held.md.hash, &p.value)?;
            self.index(&mut b, &p.held)?;
            b.put(keys::replica_md(&p.datakey), encode_held(&p.held));
            stored.insert(p.datakey, p.held.md.crc());
        }
        self.commit(b)?;
        self.usage.lock().extend(usage);
        let mut ix = self.crcs.write();
        for (k, v) in &stored {
            ix.insert(*k, *v);
        }
        Ok(Stored {
            keys: stored.into_keys().collect(),
            over_quota,
        })
    }

    /// Removes the records under `datakeys` (and values no record names
    /// any more) in one synced batch.
    pub fn remove(&self, datakeys: &[[u8; 32]]) -> Result<usize, LocalError> {
        let _w = self.write.lock();
        let mut b = Batch::default();
        let mut gone = Vec::new();
        for dk in datakeys {
            if let Some(o) = self.get(dk)? {
                self.unref(&mut b, &o.md.hash)?;
                self.unindex(&mut b, &o)?;
                b.delete(keys::replica_md(dk));
                gone.push((*dk, o));
            }
        }
        self.commit(b)?;
        let mut usage = self.usage.lock();
        for (_, o) in &gone {
            if let Some(u) = usage.get_mut(&o.owner) {
                *u = release(*u, &o.md);
                if u.records == 0 {
                    usage.remove(&o.owner);
                }
            }
        }
        drop(usage);
        let mut ix = self.crcs.write();
        for (dk, _) in &gone {
            ix.remove(dk);
        }
        Ok(gone.len())
    }

    fn refs(&self, b: &Batch, hash: &[u8; 32]) -> Result<u32, LocalError> {
        if let Some(n) = b.refs.get(hash) {
            return Ok(*n);
        }
        let k = keys::replica_refs(hash);
        Ok(match self.local.get_raw(&k)? {
            None => 0,
            Some(raw) => u32::from_be_bytes(
                raw.as_slice()
                    .try_into()
                    .map_err(|_| LocalError::corrupt(&k, "not 4 bytes"))?,
            ),
        })
    }

    fn reference(&self, b: &mut Batch, hash: &[u8; 32], value: &[u8]) -> Result<(), LocalError> {
        let n = self.refs(b, hash)?;
        if n == 0 {
            b.put(keys::replica_value(hash), value.to_vec());
        }
        b.refs.insert(*hash, n.saturating_add(1));
        b.put(
            keys::replica_refs(hash),
            (n.saturating_add(1)).to_be_bytes().to_vec(),
        );
        Ok(())
    }

    fn unref(&self, b: &mut Batch, hash: &[u8; 32]) -> Result<(), LocalError> {
        let n = self.refs(b, hash)?.saturating_sub(1);
        b.refs.insert(*hash, n);
        if n == 0 {
            b.delete(keys::replica_value(hash));
            b.delete(keys::replica_refs(hash));
        } else {
            b.put(keys::replica_refs(hash), n.to_be_bytes().to_vec());
        }
        Ok(())
    }

    fn owners_staged(&self, b: &Batch, h: &Held) -> Result<Vec<[u8; 32]>, LocalError> {
        match b.idx.get(&(h.db.clone(), h.key.clone())) {
            Some(o) => Ok(o.clone()),
            None => self.owners_of(&h.db, &h.key),
        }
    }

    fn set_owners(&self, b: &mut Batch, h: &Held, owners: Vec<[u8; 32]>) {
        let k = keys::replica_idx(&h.db, &h.key);
        if owners.is_empty() {
            b.delete(k);
        } else {
            let v = pb::KeyOwners {
                owners: owners.iter().map(|o| o.to_vec()).collect(),
            };
            b.put(k, v.encode_to_vec());
        }
        b.idx.insert((h.db.clone(), h.key.clone()), owners);
    }

    fn index(&self, b: &mut Batch, h: &Held) -> Result<(), LocalError> {
        let mut owners = self.owners_staged(b, h)?;
        if let Err(at) = owners.binary_search(&h.owner) {
            owners.insert(at, h.owner);
        }
        self.set_owners(b, h, owners);
        Ok(())
    }

    fn unindex(&self, b: &mut Batch, h: &Held) -> Result<(), LocalError> {
        let mut owners = self.owners_staged(b, h)?;
        owners.retain(|o| *o != h.owner);
        self.set_owners(b, h, owners);
        Ok(())
    }

    fn commit(&self, b: Batch) -> Result<(), LocalError> {
        if b.puts.is_empty() && b.deletes.is_empty() {
            return Ok(());
        }
        let puts: Vec<_> = b.puts.into_iter().collect();
        self.local.apply_raw(&puts, &b.deletes)
    }

    /// Records held, and the bytes they count for (128 bytes of metadata
    /// plus the value each, a shared value counted for each record): the
    /// owners' quota usage summed, so it costs no scan.
    pub fn footprint(&self) -> (u64, u64) {
        let bytes = self.usage.lock().values().map(|u| u.bytes).sum();
        (self.len() as u64, bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn put(dk: [u8; 32], ts: u64, value: &[u8]) -> Put {
        let md = Metadata {
            ts,
            flags: 1,
            size: value.len() as u32,
            hash: sha2::Digest::finalize(<sha2::Sha256 as sha2::Digest>::new_with_prefix(value))
                .into(),
            sig: [3; 64],
            ttl_begin: ts,
            ttl: 7,
            pow_nonce: 9,
        };
        Put {
            datakey: dk,
            held: Held {
                owner: [1; 32],
                md,
                db: "d".into(),
                key: dk.to_vec(),
            },
            value: value.to_vec(),
        }
    }

    fn open() -> (tempfile::TempDir, Records) {
        let dir = tempfile::tempdir().unwrap();
        let r = Records::open(LocalStore::open(dir.path()).unwrap(), Quota::UNLIMITED).unwrap();
        (dir, r)
    }

    #[test]
    fn a_crc_vector_and_values_shared_and_freed_with_their_records() {
        let (_d, r) = open();
        let a = put([0x10; 32], 5, b"same");
        let mut b = put([0x20; 32], 5, b"same");
        b.held.key = b"other".to_vec();
        // CRC-32 of this metadata, computed independently (Python zlib.crc32).
        assert_eq!(a.held.md.crc(), 0xFE29_C7D6);
        assert_eq!(r.put(vec![a.clone(), b.clone()]).unwrap().keys.len(), 2);
        let h = a.held.md.hash;
        assert_eq!(r.value(&h).unwrap().as_deref(), Some(&b"same"[..]));
        // An older version is not taken; a newer one replaces and frees.
        assert!(r
            .put(vec![put([0x10; 32], 4, b"old")])
            .unwrap()
            .keys
            .is_empty());
        r.put(vec![put([0x10; 32], 6, b"new")]).unwrap();
        assert!(
            r.value(&h).unwrap().is_some(),
            "still named by the other record"
        );
        r.remove(&[[0x20; 32]]).unwrap();
        assert!(r.value(&h).unwrap().is_none(), "freed with its last record");
        assert_eq!(r.owners_of("d", &[0x10; 32]).unwrap(), vec![[1; 32]]);
        assert!(r.owners_of("d", b"other").unwrap().is_empty());
        // Reopened, the CRC index is the same.
        let s = r.summary(&[]);
        let again = Records::open(r.local.clone(), Quota::UNLIMITED).unwrap();
        assert_eq!(again.usage(&[1; 32]), r.usage(&[1; 32]));
        assert_eq!(again.summary(&[]), s);
        assert_eq!(s.count, 1);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// At every prefix, the children's CRCs XOR to the prefix's and their
        /// counts add up to its count, which is what a brute-force pass
        /// over the records gives.
        #[test]
        fn prefix_crcs_recurse_exactly(keys in prop::collection::btree_set(prop::array::uniform32(0u8..4), 1..60)) {
            let (_d, r) = open();
            let puts: Vec<_> = keys.iter().enumerate().map(|(i, k)| put(*k, i as u64 + 1, &[i as u8])).collect();
            let crcs: BTreeMap<[u8; 32], u32> = puts.iter().map(|p| (p.datakey, p.held.md.crc())).collect();
            r.put(puts).unwrap();
            let mut prefixes = vec![Vec::new()];
            while let Some(p) = prefixes.pop() {
                let brute = crcs.iter().filter(|(k, _)| k.starts_with(&p)).fold(Summary::default(), |mut s, (_, c)| { s.add(*c); s });
                prop_assert_eq!(r.summary(&p), brute);
                let kids = r.children(&p);
                let x = kids.iter().fold(Summary::default(), |acc, (_, s)| Summary { crc: acc.crc ^ s.crc, count: acc.count + s.count });
                if p.len() < 32 {
                    prop_assert_eq!(x, brute);
                }
                if p.len() < 3 {
                    prefixes.extend(kids.iter().map(|(i, _)| [p.as_slice(), &[*i]].concat()));
                }
            }
        }
    }
}
