//! Typed access to kvdb entries, members, the expiry queue and the GC queue.

use prost::Message;

use super::{corrupt, KvEntry, KvType};
use crate::keyspaces::kv::{keys, u64_of};
use crate::proto::kv as pb;
use crate::store::{StateRead, StateWrite, StoreError};

/// Where one entry lives.
#[derive(Debug, Clone, Copy)]
pub struct At<'a> {
    pub owner: &'a [u8; 32],
    pub db: &'a str,
    pub key: &'a [u8],
}

impl At<'_> {
    pub fn entry_key(&self) -> Vec<u8> {
        keys::kvdb_key(self.owner, self.db, self.key)
    }
    pub fn members(&self, e: &KvEntry) -> Vec<u8> {
        keys::member_prefix(self.owner, self.db, self.key, e.incarnation)
    }
    pub fn member(&self, e: &KvEntry, member: &[u8]) -> Vec<u8> {
        keys::member_key(&self.members(e), e.kind.member_tag(), member)
    }
}

pub trait KvdbRead: StateRead {
    /// The stored entry, expired or not.
    fn kvdb_entry(&self, at: At<'_>) -> Result<Option<KvEntry>, StoreError> {
        let k = at.entry_key();
        match self.get_raw(&k)? {
            None => Ok(None),
            Some(raw) => {
                let e = pb::KvEntry::decode(raw.as_slice()).map_err(|e| corrupt(&k, e))?;
                KvEntry::try_from(e).map(Some).map_err(|e| corrupt(&k, e))
            }
        }
    }

    /// The entry as reads see it at block time `now_ms` (expired = absent).
    fn kvdb_live(&self, at: At<'_>, now_ms: i64) -> Result<Option<KvEntry>, StoreError> {
        Ok(self.kvdb_entry(at)?.filter(|e| !e.expired(now_ms)))
    }

    /// One member's stored bytes (hash value, zset score, list element; empty for a set).
    fn kvdb_member(
        &self,
        at: At<'_>,
        e: &KvEntry,
        member: &[u8],
    ) -> Result<Option<Vec<u8>>, StoreError> {
        self.get_raw(&at.member(e, member))
    }

    /// The `kv.Set`-era read: the signer's key in the default database.
    fn kv_entry(&self, signer: &[u8; 32], key: &[u8]) -> Result<Option<KvEntry>, StoreError> {
        self.kvdb_entry(At {
            owner: signer,
            db: keys::DEFAULT_DB,
            key,
        })
    }
}
impl<T: StateRead + ?Sized> KvdbRead for T {}

pub trait KvdbWrite: StateWrite {
    fn put_kvdb_entry(&mut self, at: At<'_>, e: &KvEntry) {
        #[allow(unused_mut)]
        let mut v = pb::KvEntry::from(e).encode_to_vec();
        // the test migration's version-2 rule (`upgrade-test` builds only)
        #[cfg(feature = "upgrade-test")]
        crate::keyspaces::upgrades::test_v2::stamp(self, &mut v);
        self.put_raw(at.entry_key(), v);
    }
    fn delete_kvdb_entry(&mut self, at: At<'_>) {
        self.delete_raw(at.entry_key());
    }
    fn put_kvdb_member(&mut self, at: At<'_>, e: &KvEntry, member: &[u8], value: Vec<u8>) {
        self.put_raw(at.member(e, member), value);
    }
    fn delete_kvdb_member(&mut self, at: At<'_>, e: &KvEntry, member: &[u8]) {
        self.delete_raw(at.member(e, member));
    }
    fn put_zorder(&mut self, at: At<'_>, e: &KvEntry, score: i128, member: &[u8]) {
        self.put_index_raw(keys::zorder_key(&at.members(e), score, member), Vec::new());
    }
    fn delete_zorder(&mut self, at: At<'_>, e: &KvEntry, score: i128, member: &[u8]) {
        self.delete_index_raw(keys::zorder_key(&at.members(e), score, member));
    }
    /// Adds (`on`) or removes the entry's slot in the expiry queue, which
    /// is verifiable state: the GC decides from it what expires.
    fn set_expiry(&mut self, at: At<'_>, expire_ms: i64, on: bool) {
        if expire_ms == 0 {
            return;
        }
        let k = keys::expiry_key(expire_ms, at.owner, at.db, at.key);
        if on {
            self.put_raw(k, Vec::new());
        } else {
            self.delete_raw(k);
        }
    }

    /// The next incarnation number (unique for the life of the chain).
    fn next_incarnation(&mut self) -> Result<u64, StoreError> {
        self.bump("incarnation")
    }

    /// Queues an orphaned member prefix for the end-of-block GC, with the
    /// `charged` bytes that stay on the owner's quota until it is collected
    /// (review M3). A sorted set's score rows go to the index-space queue.
    fn queue_orphans(&mut self, at: At<'_>, e: &KvEntry, charged: u64) -> Result<(), StoreError> {
        if !e.kind.is_collection() {
            return Ok(());
        }
        let member_prefix = at.members(e);
        if e.kind == KvType::ZSet {
            self.put_index_raw(keys::zorder_gc_key(&member_prefix), Vec::new());
        }
        let seq = self.bump("gcseq")?;
        let item = pb::KvdbOrphans {
            member_prefix,
            owner: at.owner.to_vec(),
            charged,
        };
        self.put_raw(keys::gc_key(seq), item.encode_to_vec());
        Ok(())
    }

    fn bump(&mut self, name: &str) -> Result<u64, StoreError> {
        let k = keys::meta_key(name);
        let next = u64_of(&k, self.get_raw(&k)?)? + 1;
        self.put_raw(k, next.to_be_bytes().to_vec());
        Ok(next)
    }
}
impl<T: StateWrite + ?Sized> KvdbWrite for T {}

/// A fresh entry of `kind` (its header charged as `key.len()`).
pub fn fresh(kind: KvType, key: &[u8], incarnation: u64) -> KvEntry {
    KvEntry {
        value: Vec::new(),
        updated_height: 0,
        updated_at: 0,
        kind,
        expire_ms: 0,
        len: 0,
        head: 0,
        tail: 0,
        counter: 0,
        incarnation,
        bytes: key.len() as u64,
    }
}
