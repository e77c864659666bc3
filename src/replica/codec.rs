//! Records' values: a CRDT [`Entry`] with its owner, database and key, as
//! `stave.replica.v1.RecordValue`. Decoding refuses anything but the one
//! canonical encoding of a state (elements in strictly ascending order,
//! no fields a variant does not use), so a value's hash names one state.

use sha2::{Digest, Sha256};
use thiserror::Error;

use crate::crdt::{Entry, Lww, Member, Part, Pn, Stamp, Whole, ZMember};
use crate::proto::replica as pb;

/// The longest database name (bytes).
pub const MAX_DB_BYTES: usize = 64;
/// The longest key (bytes).
pub const MAX_KEY_BYTES: usize = 1024;

/// Why a value is not a record value.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum CodecError {
    #[error("value does not decode: {0}")]
    Decode(String),
    #[error("{0}")]
    Shape(String),
}

fn shape(msg: impl Into<String>) -> CodecError {
    CodecError::Shape(msg.into())
}

/// `SHA-256(owner ‖ len(db):u8 ‖ db ‖ key)`: one record per (owner, db,
/// key). Stave's documented deviation from UEP-20's `pubkey[0..31] ‖ slot`,
/// which gives an owner only 256 records. The length byte makes it
/// injective (db names are at most [`MAX_DB_BYTES`]).
pub fn datakey(owner: &[u8; 32], db: &str, key: &[u8]) -> [u8; 32] {
    Sha256::new()
        .chain_update(owner)
        .chain_update([db.len() as u8])
        .chain_update(db.as_bytes())
        .chain_update(key)
        .finalize()
        .into()
}

/// Checks a database name: 1–64 bytes of `[A-Za-z0-9._:-]`.
pub fn check_db(db: &str) -> Result<(), CodecError> {
    let ok = !db.is_empty()
        && db.len() <= MAX_DB_BYTES
        && db
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._:-".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(shape(format!(
            "database name {db:?} must be 1-{MAX_DB_BYTES} bytes of [A-Za-z0-9._:-]"
        )))
    }
}

/// Checks a key: 1–1024 bytes.
pub fn check_key(key: &[u8]) -> Result<(), CodecError> {
    if key.is_empty() || key.len() > MAX_KEY_BYTES {
        return Err(shape(format!(
            "key of {} bytes; keys are 1-{MAX_KEY_BYTES} bytes",
            key.len()
        )));
    }
    Ok(())
}

/// A decoded record value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordValue {
    pub owner: [u8; 32],
    pub db: String,
    pub key: Vec<u8>,
    pub entry: Entry,
}

impl RecordValue {
    pub fn datakey(&self) -> [u8; 32] {
        datakey(&self.owner, &self.db, &self.key)
    }

    /// The canonical bytes.
    pub fn encode(&self) -> Vec<u8> {
        use prost::Message;
        pb::RecordValue {
            owner: self.owner.to_vec(),
            db: self.db.clone(),
            key: self.key.clone(),
            entry: Some(entry_to_pb(&self.entry)),
        }
        .encode_to_vec()
    }

    /// Decodes and checks canonical form.
    ///
    /// # Errors
    /// Bytes that do not decode, or are not the canonical encoding.
    pub fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
        use prost::Message;
        let v = pb::RecordValue::decode(bytes).map_err(|e| CodecError::Decode(e.to_string()))?;
        let owner = arr32(&v.owner, "owner")?;
        check_db(&v.db)?;
        check_key(&v.key)?;
        let entry = entry_from_pb(v.entry.unwrap_or_default())?;
        let out = RecordValue {
            owner,
            db: v.db,
            key: v.key,
            entry,
        };
        if out.encode() != bytes {
            return Err(shape("value is not in canonical encoding"));
        }
        Ok(out)
    }
}

fn arr32(b: &[u8], what: &str) -> Result<[u8; 32], CodecError> {
    b.try_into()
        .map_err(|_| shape(format!("{what} is {} bytes, not 32", b.len())))
}

fn stamp_pb(s: &Stamp) -> pb::Stamp {
    pb::Stamp {
        ms: s.ms,
        replica: s.replica.to_vec(),
    }
}

fn opt_stamp_pb(s: &Option<Stamp>) -> Option<pb::Stamp> {
    s.as_ref().map(stamp_pb)
}

fn stamp_of(s: Option<pb::Stamp>) -> Result<Option<Stamp>, CodecError> {
    s.map(|s| Ok(Stamp::new(s.ms, arr32(&s.replica, "stamp replica")?)))
        .transpose()
}

fn need_stamp(s: Option<pb::Stamp>, what: &str) -> Result<Stamp, CodecError> {
    stamp_of(s)?.ok_or_else(|| shape(format!("{what} has no stamp")))
}

/// The proto form of an entry.
pub fn entry_to_pb(e: &Entry) -> pb::EntryState {
    pb::EntryState {
        reg: e.reg.as_ref().map(reg_pb),
        expiry: e.expiry.as_ref().map(|x| pb::Expiry {
            stamp: Some(stamp_pb(&x.stamp)),
            has_at: x.value.is_some(),
            at: x.value.unwrap_or(0),
        }),
        hash_last: opt_stamp_pb(&e.hash.last),
        hash: e
            .hash
            .elems
            .iter()
            .map(|(f, l)| pb::HashField {
                field: f.clone(),
                stamp: Some(stamp_pb(&l.stamp)),
                deleted: l.value.is_none(),
                value: l.value.clone().unwrap_or_default(),
            })
            .collect(),
        set_last: opt_stamp_pb(&e.set.last),
        set: e
            .set
            .elems
            .iter()
            .map(|(m, x)| pb::SetMember {
                member: m.clone(),
                add: opt_stamp_pb(&x.add),
                remove: opt_stamp_pb(&x.remove),
            })
            .collect(),
        zset_last: opt_stamp_pb(&e.zset.last),
        zset: e
            .zset
            .elems
            .iter()
            .map(|(m, x)| pb::ZMember {
                member: m.clone(),
                add: x.add.as_ref().map(|a| stamp_pb(&a.stamp)),
                score: x.add.as_ref().map_or(0, |a| a.value),
                remove: opt_stamp_pb(&x.remove),
            })
            .collect(),
        counter_last: opt_stamp_pb(&e.counter.last),
        counter: e
            .counter
            .elems
            .iter()
            .map(|(r, p)| pb::PnCounter {
                replica: r.to_vec(),
                epoch: opt_stamp_pb(&p.epoch),
                pos: p.pos,
                neg: p.neg,
            })
            .collect(),
    }
}

fn reg_pb(r: &Lww<Whole>) -> pb::Reg {
    let (kind, value, items) = match &r.value {
        Whole::Tombstone => (pb::RegKind::Tombstone, Vec::new(), Vec::new()),
        Whole::Value(v) => (pb::RegKind::Value, v.clone(), Vec::new()),
        Whole::List(l) => (pb::RegKind::List, Vec::new(), l.clone()),
    };
    pb::Reg {
        stamp: Some(stamp_pb(&r.stamp)),
        kind: kind as i32,
        value,
        items,
    }
}

fn reg_of(r: pb::Reg) -> Result<Lww<Whole>, CodecError> {
    let stamp = need_stamp(r.stamp, "register")?;
    let value = match (
        pb::RegKind::try_from(r.kind),
        r.value.is_empty(),
        r.items.is_empty(),
    ) {
        (Ok(pb::RegKind::Tombstone), true, true) => Whole::Tombstone,
        (Ok(pb::RegKind::Value), _, true) => Whole::Value(r.value),
        (Ok(pb::RegKind::List), true, _) => Whole::List(r.items),
        _ => return Err(shape(format!("register of kind {} is malformed", r.kind))),
    };
    Ok(Lww::new(stamp, value))
}

/// Collects `(key, element)` pairs into a part, refusing any order but
/// strictly ascending keys.
fn part_of<K: Ord + Clone, E>(
    last: Option<pb::Stamp>,
    items: impl IntoIterator<Item = Result<(K, E), CodecError>>,
    what: &str,
) -> Result<Part<K, E>, CodecError> {
    let mut part = Part {
        last: stamp_of(last)?,
        elems: Default::default(),
    };
    for item in items {
        let (k, e) = item?;
        if part
            .elems
            .last_key_value()
            .is_some_and(|(prev, _)| *prev >= k)
        {
            return Err(shape(format!(
                "{what} elements are not in strictly ascending order"
            )));
        }
        part.elems.insert(k, e);
    }
    Ok(part)
}

/// The entry of a proto state.
///
/// # Errors
/// A malformed or non-canonical state.
pub fn entry_from_pb(s: pb::EntryState) -> Result<Entry, CodecError> {
    let expiry = s
        .expiry
        .map(|x| {
            if !x.has_at && x.at != 0 {
                return Err(shape("expiry without a deadline carries one"));
            }
            Ok(Lww::new(
                need_stamp(x.stamp, "expiry")?,
                x.has_at.then_some(x.at),
            ))
        })
        .transpose()?;
    let hash = part_of(
        s.hash_last,
        s.hash.into_iter().map(|f| {
            if f.deleted && !f.value.is_empty() {
                return Err(shape("a deleted hash field carries a value"));
            }
            let v = (!f.deleted).then_some(f.value);
            Ok((f.field, Lww::new(need_stamp(f.stamp, "hash field")?, v)))
        }),
        "hash",
    )?;
    let set = part_of(
        s.set_last,
        s.set.into_iter().map(|m| {
            let x = Member {
                add: stamp_of(m.add)?,
                remove: stamp_of(m.remove)?,
            };
            Ok((m.member, x))
        }),
        "set",
    )?;
    let zset = part_of(
        s.zset_last,
        s.zset.into_iter().map(|m| {
            let add = stamp_of(m.add)?;
            if add.is_none() && m.score != 0 {
                return Err(shape("a sorted-set member without an add carries a score"));
            }
            let x = ZMember {
                add: add.map(|a| Lww::new(a, m.score)),
                remove: stamp_of(m.remove)?,
            };
            Ok((m.member, x))
        }),
        "sorted set",
    )?;
    let counter = part_of(
        s.counter_last,
        s.counter.into_iter().map(|p| {
            let pn = Pn {
                epoch: stamp_of(p.epoch)?,
                pos: p.pos,
                neg: p.neg,
            };
            Ok((arr32(&p.replica, "counter replica")?, pn))
        }),
        "counter",
    )?;
    Ok(Entry {
        reg: s.reg.map(reg_of).transpose()?,
        hash,
        set,
        zset,
        counter,
        expiry,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(ms: u64, r: u8) -> Stamp {
        Stamp::new(ms, [r; 32])
    }

    fn sample() -> RecordValue {
        let mut e = Entry::default();
        e.sadd(st(5, 1), &[b"a".to_vec(), b"b".to_vec()]).unwrap();
        e.srem(st(6, 1), &[b"a".to_vec()]).unwrap();
        e.expire(st(7, 1), Some(1_000));
        // Every part filled: states of each type from separate replicas.
        let mut h = Entry::default();
        h.hset(st(3, 2), b"f".to_vec(), b"v".to_vec()).unwrap();
        h.hset(st(3, 3), b"g".to_vec(), b"w".to_vec()).unwrap();
        h.hdel(st(4, 2), b"f").unwrap();
        let mut z = Entry::default();
        z.zadd(st(8, 2), b"z".to_vec(), -4).unwrap();
        let mut c = Entry::default();
        c.incr_by(st(9, 2), 5).unwrap();
        let mut w = Entry::default();
        w.set(st(10, 2), b"x".to_vec(), Some(2_000));
        let mut l = Entry::default();
        l.set_list(st(2, 3), vec![b"i".to_vec(), b"j".to_vec()]);
        RecordValue {
            owner: [1; 32],
            db: "inventory".into(),
            key: b"k".to_vec(),
            entry: [h, z, c, w, l].iter().fold(e, |acc, x| acc.merge(x)),
        }
    }

    #[test]
    fn values_round_trip_and_only_the_canonical_bytes_decode() {
        let v = sample();
        let b = v.encode();
        assert_eq!(RecordValue::decode(&b), Ok(v.clone()));
        // Out-of-order elements: the same state, another encoding.
        use prost::Message;
        let mut p = pb::RecordValue::decode(b.as_slice()).unwrap();
        p.entry.as_mut().unwrap().set.reverse();
        assert!(matches!(
            RecordValue::decode(&p.encode_to_vec()),
            Err(CodecError::Shape(_))
        ));
        // A tombstone register carrying a value.
        let mut p = pb::RecordValue::decode(b.as_slice()).unwrap();
        let reg = p.entry.as_mut().unwrap().reg.as_mut().unwrap();
        reg.kind = pb::RegKind::Tombstone as i32;
        assert!(RecordValue::decode(&p.encode_to_vec()).is_err());
        assert!(RecordValue::decode(&[0xff, 0xff]).is_err());
    }

    #[test]
    fn datakeys_are_injective_in_db_and_key() {
        let o = [3u8; 32];
        assert_ne!(datakey(&o, "ab", b"c"), datakey(&o, "a", b"bc"));
        assert_ne!(datakey(&o, "a", b"b"), datakey(&[4; 32], "a", b"b"));
        assert_eq!(sample().datakey(), datakey(&[1; 32], "inventory", b"k"));
        assert!(check_db("a.b:c-d_e").is_ok());
        assert!(check_db("").is_err() && check_db("a/b").is_err());
        assert!(check_db(&"x".repeat(65)).is_err());
        assert!(check_key(b"").is_err() && check_key(&[0; 1025]).is_err());
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(b in proptest::collection::vec(proptest::num::u8::ANY, 0..256)) {
            let _ = RecordValue::decode(&b);
        }
    }
}
