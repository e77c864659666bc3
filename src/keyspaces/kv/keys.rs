//! Key builders of the kv area. Every key is built here; numbers are
//! fixed-width big-endian so byte order is numeric order.
//!
//! Verifiable state:
//! - `kvdb/{owner:32}/{db}/{key}`: a kvdb entry (`db` never holds `/`).
//! - `kvdbm/{owner:32}{dblen:1}{db}{keylen:4}{key}{incarnation:8}{tag:1}{member}`:
//!   one collection member (tag `h` hash field, `s` set member, `z` sorted-set
//!   member, `l` list position).
//! - `kvdbgc/{seq:8}`: a queued orphan member prefix with its owner and the
//!   bytes still charged for it (end-of-block GC).
//! - `kvdbx/{expire_ms:8}{owner:32}{dblen:1}{db}{keylen:4}{key}`: expiry queue.
//! - `kvmeta/{name}`: counters (`incarnation`, `gcseq`, `tokseq`).
//! - `kvtok/tok/{id:32}`, `kvtok/tuple/{tuple:32}`, `kvtok/ctl/{controller:32}`.
//!
//! Index space (derived, not in the app hash):
//! - `kvtokix/{kind:1}{h:32}{seq:8}{id:32}`: live tokens by key (`k`),
//!   controller (`c`), protocol id (`p`) and tag (`t`), in creation order.
//! - `kvtokixn/{kind:1}{h:32}`: the number of postings under one selector.
//! - `kvtokh/{tuple:32}{n:8}`: a tuple's history, its token ids in creation
//!   order.
//! - `kvdbz/{member prefix}{score:16}{member}`: sorted-set score order.
//! - `kvdbzgc/{member prefix}`: score rows of a deleted sorted set, still to
//!   be removed. Only index maintenance reads it: no state transition reads
//!   index space.

use sha2::{Digest, Sha256};

const KVDB: &[u8] = b"kvdb/";
const MEMBER: &[u8] = b"kvdbm/";
const GC: &[u8] = b"kvdbgc/";
const META: &[u8] = b"kvmeta/";
const TOKEN_AREA: &[u8] = b"kvtok/";
const TOK: &[u8] = b"kvtok/tok/";
const TUPLE: &[u8] = b"kvtok/tuple/";
const HIST: &[u8] = b"kvtokh/";
const CTL: &[u8] = b"kvtok/ctl/";
const IX: &[u8] = b"kvtokix/";
const IXN: &[u8] = b"kvtokixn/";
const EXPIRY: &[u8] = b"kvdbx/";
const ZORDER: &[u8] = b"kvdbz/";
const ZGC: &[u8] = b"kvdbzgc/";

/// The database `kv.Set` / `kv.Delete` act on.
pub const DEFAULT_DB: &str = "default";

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    let mut k = Vec::with_capacity(parts.iter().map(|p| p.len()).sum());
    for p in parts {
        k.extend_from_slice(p);
    }
    k
}

/// `kvdb/`: every kvdb entry of every owner.
pub fn kvdb_area() -> Vec<u8> {
    KVDB.to_vec()
}

/// `kvdb/{owner}/{db}/`: one database of one owner.
pub fn kvdb_prefix(owner: &[u8; 32], db: &str) -> Vec<u8> {
    cat(&[KVDB, owner, b"/", db.as_bytes(), b"/"])
}

/// `kvdb/{owner}/{db}/{key}`.
pub fn kvdb_key(owner: &[u8; 32], db: &str, key: &[u8]) -> Vec<u8> {
    cat(&[&kvdb_prefix(owner, db), key])
}

/// `kv/`-era builder: the signer's key in the default database.
pub fn kv_key(signer: &[u8; 32], key: &[u8]) -> Vec<u8> {
    kvdb_key(signer, DEFAULT_DB, key)
}

/// The prefix of the signer's default database.
pub fn kv_prefix(signer: &[u8; 32]) -> Vec<u8> {
    kvdb_prefix(signer, DEFAULT_DB)
}

/// The user key inside a default-database key of `signer`.
pub fn split_kv_key<'a>(signer: &[u8; 32], full: &'a [u8]) -> Option<&'a [u8]> {
    let prefix = kv_prefix(signer);
    full.strip_prefix(prefix.as_slice())
}

/// Owner, database and key of an entry: the part members and queues share.
/// Database names are at most `params::MAX_DB_NAME_BYTES` (genesis
/// validation), so the one-byte length is exact.
fn entry_id(owner: &[u8; 32], db: &str, key: &[u8]) -> Vec<u8> {
    let dblen = [db.len().min(255) as u8];
    let keylen = (key.len() as u32).to_be_bytes();
    cat(&[owner, &dblen, db.as_bytes(), &keylen, key])
}

/// All members of one incarnation of an entry.
pub fn member_prefix(owner: &[u8; 32], db: &str, key: &[u8], incarnation: u64) -> Vec<u8> {
    cat(&[
        MEMBER,
        &entry_id(owner, db, key),
        &incarnation.to_be_bytes(),
    ])
}

/// One member: `tag` is `h`, `s`, `z` or `l`.
pub fn member_key(mprefix: &[u8], tag: u8, member: &[u8]) -> Vec<u8> {
    cat(&[mprefix, &[tag], member])
}

/// The length of the member prefix of a member key and its tag, if `k` is one.
pub fn split_member_key(k: &[u8]) -> Option<(usize, u8)> {
    let rest = k.strip_prefix(MEMBER)?;
    let dblen = *rest.get(32)? as usize;
    let kl_at = 33 + dblen;
    let keylen = u32::from_be_bytes(rest.get(kl_at..kl_at + 4)?.try_into().ok()?) as usize;
    let plen = MEMBER.len() + kl_at + 4 + keylen + 8;
    Some((plen, *k.get(plen)?))
}

/// The prefix of every member key.
pub fn members_root() -> &'static [u8] {
    MEMBER
}

/// A list position, offset so that byte order is numeric order.
pub fn list_pos(pos: i64) -> [u8; 8] {
    ((pos as u64) ^ (1 << 63)).to_be_bytes()
}

/// Score order of a sorted set's members (index space).
pub fn zorder_prefix(mprefix: &[u8]) -> Vec<u8> {
    cat(&[ZORDER, mprefix])
}

/// `kvdbz/{member prefix}{score}{member}`.
pub fn zorder_key(mprefix: &[u8], score: i128, member: &[u8]) -> Vec<u8> {
    cat(&[&zorder_prefix(mprefix), &score_bytes(score), member])
}

/// A score, sign-flipped so that byte order is numeric order.
pub fn score_bytes(score: i128) -> [u8; 16] {
    ((score as u128) ^ (1 << 127)).to_be_bytes()
}

/// `kvdbz/`: every sorted-set score row (index space).
pub fn zorder_root() -> &'static [u8] {
    ZORDER
}

/// Index-space queue of deleted sorted sets' score rows.
pub fn zorder_gc_prefix() -> &'static [u8] {
    ZGC
}

/// `kvdbzgc/{member prefix}`.
pub fn zorder_gc_key(mprefix: &[u8]) -> Vec<u8> {
    cat(&[ZGC, mprefix])
}

/// Expiry queue prefix.
pub fn expiry_prefix() -> &'static [u8] {
    EXPIRY
}

/// `kvdbx/{expire_ms}{owner}{dblen}{db}{keylen}{key}`; negative times sort first.
pub fn expiry_key(expire_ms: i64, owner: &[u8; 32], db: &str, key: &[u8]) -> Vec<u8> {
    cat(&[EXPIRY, &list_pos(expire_ms), &entry_id(owner, db, key)])
}

/// Splits an expiry key into (expire_ms, owner, db, key).
pub fn split_expiry_key(k: &[u8]) -> Option<(i64, [u8; 32], String, Vec<u8>)> {
    let rest = k.strip_prefix(EXPIRY)?;
    let t: [u8; 8] = rest.get(..8)?.try_into().ok()?;
    let t = (u64::from_be_bytes(t) ^ (1 << 63)) as i64;
    let owner: [u8; 32] = rest.get(8..40)?.try_into().ok()?;
    let dblen = *rest.get(40)? as usize;
    let db = std::str::from_utf8(rest.get(41..41 + dblen)?)
        .ok()?
        .to_string();
    let key = rest.get(41 + dblen + 4..)?.to_vec();
    Some((t, owner, db, key))
}

/// GC queue prefix.
pub fn gc_prefix() -> &'static [u8] {
    GC
}

/// `kvdbgc/{seq}`.
pub fn gc_key(seq: u64) -> Vec<u8> {
    cat(&[GC, &seq.to_be_bytes()])
}

/// `kvmeta/{name}`: a counter of the area.
pub fn meta_key(name: &str) -> Vec<u8> {
    cat(&[META, name.as_bytes()])
}

/// `kvtok/tok/{id}`.
pub fn token_key(id: &[u8; 32]) -> Vec<u8> {
    cat(&[TOK, id])
}

/// `kvtok/tuple/{tuple}`.
pub fn tuple_key(tuple: &[u8; 32]) -> Vec<u8> {
    cat(&[TUPLE, tuple])
}

/// `kvtokh/{tuple}{n}` (index space).
pub fn history_key(tuple: &[u8; 32], n: u64) -> Vec<u8> {
    cat(&[HIST, tuple, &n.to_be_bytes()])
}

/// `kvtok/ctl/{controller}`: the controller's live-token count.
pub fn controller_key(controller: &[u8; 32]) -> Vec<u8> {
    cat(&[CTL, controller])
}

/// Selector kinds of the token indexes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Sel {
    Key = b'k' as isize,
    Controller = b'c' as isize,
    Protocol = b'p' as isize,
    Tag = b't' as isize,
}

/// The 32-byte name of a selector value: sha256 of it (fixed width).
pub fn sel_hash(value: &[u8]) -> [u8; 32] {
    Sha256::digest(value).into()
}

/// `kvtokix/{kind}{h}`: the postings of one selector value.
pub fn ix_prefix(kind: Sel, h: &[u8; 32]) -> Vec<u8> {
    cat(&[IX, &[kind as u8], h])
}

/// `kvtokix/{kind}{h}{seq}{id}`.
pub fn ix_key(kind: Sel, h: &[u8; 32], seq: u64, id: &[u8; 32]) -> Vec<u8> {
    cat(&[&ix_prefix(kind, h), &seq.to_be_bytes(), id])
}

/// (seq, id) of a posting key under `prefix`.
pub fn split_ix_key(prefix_len: usize, k: &[u8]) -> Option<(u64, [u8; 32])> {
    let rest = k.get(prefix_len..)?;
    let seq = u64::from_be_bytes(rest.get(..8)?.try_into().ok()?);
    let id = rest.get(8..40)?.try_into().ok()?;
    Some((seq, id))
}

/// `kvtokixn/{kind}{h}`: how many postings one selector value has.
pub fn ix_count_key(kind: Sel, h: &[u8; 32]) -> Vec<u8> {
    cat(&[IXN, &[kind as u8], h])
}

/// `kvtok/`: every token row in state (tokens, tuples, controller counts).
pub fn token_area_root() -> &'static [u8] {
    TOKEN_AREA
}

/// `kvtok/tok/`: the tokens themselves.
pub fn tokens_root() -> &'static [u8] {
    TOK
}

/// `kvdb/`: every kvdb entry.
pub fn kvdb_root() -> &'static [u8] {
    KVDB
}

/// `kvtokix/`: every token posting (index space).
pub fn ix_root() -> &'static [u8] {
    IX
}

/// `kvtokixn/`: every posting count (index space).
pub fn ix_count_root() -> &'static [u8] {
    IXN
}

/// `kvtokh/`: every tuple's history (index space).
pub fn history_root() -> &'static [u8] {
    HIST
}

/// The (owner, db, key) of a `kvdb/{owner}/{db}/{key}` key (a db name
/// holds no `/`).
pub fn split_kvdb_key(k: &[u8]) -> Option<([u8; 32], &str, &[u8])> {
    let rest = k.strip_prefix(KVDB)?;
    let (owner, rest) = rest.split_at_checked(32)?;
    let rest = rest.strip_prefix(b"/")?;
    let slash = rest.iter().position(|b| *b == b'/')?;
    let db = std::str::from_utf8(rest.get(..slash)?).ok()?;
    Some((owner.try_into().ok()?, db, rest.get(slash + 1..)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn kvdb_keys_split_back(owner in any::<[u8; 32]>(), db in "[a-z0-9_]{1,16}",
                                key in proptest::collection::vec(any::<u8>(), 0..40)) {
            let k = kvdb_key(&owner, &db, &key);
            prop_assert_eq!(split_kvdb_key(&k), Some((owner, db.as_str(), &key[..])));
            prop_assert_eq!(split_kvdb_key(b"kvdb/short"), None);
        }

        #[test]
        fn kv_keys_round_trip_and_keep_key_order(s in any::<[u8; 32]>(),
            a in proptest::collection::vec(any::<u8>(), 1..40),
            b in proptest::collection::vec(any::<u8>(), 1..40)) {
            let ka = kv_key(&s, &a);
            prop_assert_eq!(split_kv_key(&s, &ka), Some(a.as_slice()));
            prop_assert_eq!(a.cmp(&b), ka.cmp(&kv_key(&s, &b)));
        }

        #[test]
        fn signers_never_share_a_prefix(s in any::<[u8; 32]>(), t in any::<[u8; 32]>(),
            a in proptest::collection::vec(any::<u8>(), 1..40)) {
            prop_assume!(s != t);
            prop_assert!(!kv_key(&s, &a).starts_with(&kv_prefix(&t)));
        }

        #[test]
        fn list_positions_and_expiry_times_sort_numerically(a in any::<i64>(), b in any::<i64>()) {
            prop_assert_eq!(a.cmp(&b), list_pos(a).cmp(&list_pos(b)));
            let o = [1u8; 32];
            prop_assert_eq!(a.cmp(&b), expiry_key(a, &o, "d", b"k").cmp(&expiry_key(b, &o, "d", b"k")));
        }

        #[test]
        fn scores_sort_numerically(a in any::<i128>(), b in any::<i128>()) {
            prop_assert_eq!(a.cmp(&b), score_bytes(a).cmp(&score_bytes(b)));
        }

        #[test]
        fn postings_sort_by_creation_sequence(a in any::<u64>(), b in any::<u64>(), h in any::<[u8; 32]>()) {
            prop_assume!(a != b);
            prop_assert_eq!(a.cmp(&b), ix_key(Sel::Tag, &h, a, &[9; 32]).cmp(&ix_key(Sel::Tag, &h, b, &[0; 32])));
            let k = ix_key(Sel::Tag, &h, a, &[7; 32]);
            prop_assert_eq!(split_ix_key(ix_prefix(Sel::Tag, &h).len(), &k), Some((a, [7; 32])));
        }

        #[test]
        fn history_keys_sort_by_position(a in any::<u64>(), b in any::<u64>(), t in any::<[u8; 32]>()) {
            prop_assert_eq!(a.cmp(&b), history_key(&t, a).cmp(&history_key(&t, b)));
        }

        #[test]
        fn expiry_keys_round_trip(t in any::<i64>(), o in any::<[u8; 32]>(),
            k in proptest::collection::vec(any::<u8>(), 0..40)) {
            let key = expiry_key(t, &o, "db-1", &k);
            prop_assert_eq!(split_expiry_key(&key), Some((t, o, "db-1".to_string(), k)));
        }
    }

    #[test]
    fn members_of_different_keys_never_share_a_prefix() {
        let o = [3u8; 32];
        let a = member_prefix(&o, "d", b"ab", 1);
        let b = member_prefix(&o, "d", b"a", 1);
        assert!(!a.starts_with(&b) && !b.starts_with(&a));
    }
}
