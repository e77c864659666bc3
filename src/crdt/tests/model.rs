//! One Redis-like node holding one key: what the CRDT must read as when
//! every write sees all the earlier ones.

use super::{deadline, Op};
use crate::crdt::{Stamp, View, Visible};

#[derive(Default)]
pub(super) struct Model {
    value: Option<Visible>,
    expire_at: Option<u64>,
}

impl Model {
    fn clear(&mut self) {
        self.value = None;
        self.expire_at = None;
    }

    pub(super) fn apply(&mut self, s: Stamp, op: &Op) {
        if self.expire_at.is_some_and(|at| at <= s.ms) {
            self.clear();
        }
        match op {
            Op::Set(v, t) => match deadline(s, *t) {
                Some(at) if at <= s.ms => self.clear(),
                at => {
                    self.value = Some(Visible::Value(v.clone()));
                    self.expire_at = at;
                }
            },
            Op::SetList(l) => {
                self.value = Some(Visible::List(l.clone()));
                self.expire_at = None;
            }
            Op::Del => self.clear(),
            Op::Expire(t) if self.value.is_some() => match deadline(s, *t) {
                Some(at) if at <= s.ms => self.clear(),
                at => self.expire_at = at,
            },
            Op::Expire(_) => {}
            _ => self.structural(op),
        }
        let empty = match &self.value {
            Some(Visible::Hash(h)) => h.is_empty(),
            Some(Visible::Set(m)) => m.is_empty(),
            Some(Visible::ZSet(z)) => z.is_empty(),
            _ => false,
        };
        if empty {
            self.clear();
        }
    }

    /// A write to a hash, set, sorted set or counter: creates the key when
    /// absent, and is refused (changes nothing) on another type.
    fn structural(&mut self, op: &Op) {
        if self.value.is_none() {
            self.value = match op {
                Op::HSet(..) => Some(Visible::Hash(Default::default())),
                Op::SAdd(_) => Some(Visible::Set(Default::default())),
                Op::ZAdd(..) => Some(Visible::ZSet(Default::default())),
                Op::Incr(_) => Some(Visible::Counter(0)),
                _ => None,
            };
        }
        match (op, &mut self.value) {
            (Op::HSet(f, v), Some(Visible::Hash(h))) => {
                h.insert(f.clone(), v.clone());
            }
            (Op::HDel(f), Some(Visible::Hash(h))) => {
                h.remove(f);
            }
            (Op::SAdd(ms), Some(Visible::Set(set))) => set.extend(ms.iter().cloned()),
            (Op::SRem(ms), Some(Visible::Set(set))) => ms.iter().for_each(|m| {
                set.remove(m);
            }),
            (Op::ZAdd(m, sc), Some(Visible::ZSet(z))) => {
                z.insert(m.clone(), *sc);
            }
            (Op::ZRem(ms), Some(Visible::ZSet(z))) => ms.iter().for_each(|m| {
                z.remove(m);
            }),
            (Op::Incr(n), Some(Visible::Counter(c))) => *c += i128::from(*n),
            _ => {}
        }
    }

    pub(super) fn read(&self, now: u64) -> Option<View> {
        if self.expire_at.is_some_and(|at| at <= now) {
            return None;
        }
        let value = self.value.clone()?;
        Some(View {
            value,
            expire_at: self.expire_at,
        })
    }
}
