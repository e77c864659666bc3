//! Last-writer-wins registers: the newer stamp wins, and on equal stamps
//! the larger SHA-256 of the canonical value, so the join commutes.

use sha2::{Digest, Sha256};

use super::Stamp;

/// A value's canonical bytes, hashed to break ties between equal stamps.
pub trait Canon {
    fn canon(&self, out: &mut Vec<u8>);

    fn digest(&self) -> [u8; 32] {
        let mut buf = Vec::new();
        self.canon(&mut buf);
        Sha256::digest(&buf).into()
    }
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u64).to_be_bytes());
    out.extend_from_slice(b);
}

impl Canon for Vec<u8> {
    fn canon(&self, out: &mut Vec<u8>) {
        put_bytes(out, self);
    }
}

impl Canon for i64 {
    fn canon(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_be_bytes());
    }
}

impl Canon for u64 {
    fn canon(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_be_bytes());
    }
}

impl<T: Canon> Canon for Option<T> {
    fn canon(&self, out: &mut Vec<u8>) {
        match self {
            None => out.push(0),
            Some(v) => {
                out.push(1);
                v.canon(out);
            }
        }
    }
}

/// A whole-value write: the register part of an entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Whole {
    /// A delete.
    Tombstone,
    Value(Vec<u8>),
    /// CAD037 lists merge as one value: the newest list wins.
    List(Vec<Vec<u8>>),
}

impl Canon for Whole {
    fn canon(&self, out: &mut Vec<u8>) {
        match self {
            Whole::Tombstone => out.push(0),
            Whole::Value(v) => {
                out.push(1);
                put_bytes(out, v);
            }
            Whole::List(items) => {
                out.push(2);
                out.extend_from_slice(&(items.len() as u64).to_be_bytes());
                for i in items {
                    put_bytes(out, i);
                }
            }
        }
    }
}

/// A last-writer-wins register.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lww<T> {
    pub stamp: Stamp,
    pub value: T,
}

impl<T: Canon + Clone> Lww<T> {
    pub fn new(stamp: Stamp, value: T) -> Self {
        Lww { stamp, value }
    }

    /// Whether `self` wins over `other`: a newer stamp, or the same stamp
    /// and a larger value hash (equal values are the same write).
    pub fn beats(&self, other: &Lww<T>) -> bool {
        match self.stamp.cmp(&other.stamp) {
            std::cmp::Ordering::Equal => self.value.digest() > other.value.digest(),
            o => o.is_gt(),
        }
    }

    /// The join of two optional registers.
    pub fn join(a: &Option<Lww<T>>, b: &Option<Lww<T>>) -> Option<Lww<T>> {
        match (a, b) {
            (Some(x), Some(y)) => Some(if y.beats(x) { y.clone() } else { x.clone() }),
            (Some(x), None) | (None, Some(x)) => Some(x.clone()),
            (None, None) => None,
        }
    }

    /// Joins `other` into `slot`.
    pub fn join_into(slot: &mut Option<Lww<T>>, other: Lww<T>) {
        let take = slot.as_ref().is_none_or(|mine| other.beats(mine));
        if take {
            *slot = Some(other);
        }
    }
}
