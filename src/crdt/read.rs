//! What a reader sees: a pure function of the merged entry and the time.

use std::collections::{BTreeMap, BTreeSet};

use super::entry::{Entry, Join, Part};
use super::lww::Whole;
use super::Stamp;

/// The parts an entry's newest write can be in, in the order that breaks a
/// tie between two of them (one replica writing two types in the same
/// millisecond).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Whole,
    Hash,
    Set,
    ZSet,
    Counter,
}

/// A live key's value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Visible {
    Value(Vec<u8>),
    List(Vec<Vec<u8>>),
    Hash(BTreeMap<Vec<u8>, Vec<u8>>),
    Set(BTreeSet<Vec<u8>>),
    /// Member to score.
    ZSet(BTreeMap<Vec<u8>, i64>),
    Counter(i128),
}

impl Visible {
    /// The part a value of this shape lives in.
    pub fn kind(&self) -> Kind {
        match self {
            Visible::Value(_) | Visible::List(_) => Kind::Whole,
            Visible::Hash(_) => Kind::Hash,
            Visible::Set(_) => Kind::Set,
            Visible::ZSet(_) => Kind::ZSet,
            Visible::Counter(_) => Kind::Counter,
        }
    }
}

/// A live key: its value and its deadline, if any.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct View {
    pub value: Visible,
    pub expire_at: Option<u64>,
}

/// The key's current life: the part of its newest write, and the reset
/// that life began after (the newest write of any other part, or a passed
/// deadline).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Life {
    pub kind: Kind,
    pub reset: Option<Stamp>,
}

/// A passed deadline as a stamp: after every write of an earlier
/// millisecond, before any of that millisecond.
fn deadline(at: u64) -> Stamp {
    Stamp::new(at, [0; 32])
}

impl Entry {
    fn heads(&self) -> [(Option<Stamp>, Kind); 5] {
        [
            (self.reg.as_ref().map(|r| r.stamp), Kind::Whole),
            (self.hash.last, Kind::Hash),
            (self.set.last, Kind::Set),
            (self.zset.last, Kind::ZSet),
            (self.counter.last, Kind::Counter),
        ]
    }

    /// The newest write above `floor`, and its reset.
    fn life_above(&self, floor: Option<Stamp>) -> Option<Life> {
        let heads = self.heads();
        let kind = heads
            .iter()
            .filter(|(s, _)| s.is_some() && *s > floor)
            .max_by_key(|(s, k)| (*s, *k))
            .map(|(_, k)| *k)?;
        Some(Life {
            kind,
            reset: newest_except(&heads, kind).max(floor),
        })
    }

    /// Whether the deadline register belongs to `life`: set at or after
    /// the whole-value write that began it, or after its reset.
    fn deadline_of(&self, life: Life) -> Option<(Stamp, u64)> {
        let e = self.expiry.as_ref()?;
        let at = e.value?;
        let belongs = match life.kind {
            Kind::Whole => self.reg.as_ref().is_some_and(|r| e.stamp >= r.stamp),
            _ => Some(e.stamp) > life.reset,
        };
        belongs.then_some((e.stamp, at))
    }

    /// Where the newest life ended, if its deadline has passed at
    /// `now_ms`: at the deadline (or, for a register no local write makes,
    /// one whose time is not after its own write, at that write).
    pub(super) fn passed_deadline(&self, now_ms: u64) -> Option<Stamp> {
        let life = self.life_above(None)?;
        let (set_at, at) = self.deadline_of(life)?;
        (at <= now_ms).then(|| deadline(at).max(set_at))
    }

    /// The current life at `now_ms`, with its deadline: a passed deadline
    /// ends a life, and the writes after it (if any) make the next.
    pub(super) fn life(&self, now_ms: u64) -> Option<(Life, Option<u64>)> {
        match self.passed_deadline(now_ms) {
            Some(end) => Some((self.life_above(Some(end))?, None)),
            None => {
                let life = self.life_above(None)?;
                Some((life, self.deadline_of(life).map(|(_, at)| at)))
            }
        }
    }

    /// What a reader sees at `now_ms`: `None` for a key that is absent,
    /// deleted, expired, or a structure with nothing left in it.
    pub fn read(&self, now_ms: u64) -> Option<View> {
        let (life, expire_at) = self.life(now_ms)?;
        let value = self.visible(life)?;
        Some(View { value, expire_at })
    }

    /// The type a reader sees at `now_ms`.
    pub fn kind_at(&self, now_ms: u64) -> Option<Kind> {
        self.read(now_ms).map(|v| v.value.kind())
    }

    fn visible(&self, life: Life) -> Option<Visible> {
        let r = life.reset;
        let v = match life.kind {
            Kind::Whole => match &self.reg.as_ref()?.value {
                Whole::Tombstone => return None,
                Whole::Value(v) => Visible::Value(v.clone()),
                Whole::List(l) => Visible::List(l.clone()),
            },
            Kind::Hash => Visible::Hash(live(&self.hash, |f| {
                f.value.clone().filter(|_| Some(f.stamp) > r)
            })),
            Kind::Set => Visible::Set(
                live(&self.set, |m| (m.add > m.remove && m.add > r).then_some(()))
                    .into_keys()
                    .collect(),
            ),
            Kind::ZSet => Visible::ZSet(live(&self.zset, |m| {
                let add = m.add.as_ref()?;
                (Some(add.stamp) > m.remove && Some(add.stamp) > r).then_some(add.value)
            })),
            Kind::Counter => {
                // A counter with no accumulator of its life left (every one
                // dropped or collected) reads as absent, as an emptied
                // structure does: a live counter always has its writer's.
                let mut live = self
                    .counter
                    .elems
                    .values()
                    .filter(|p| p.epoch >= r)
                    .peekable();
                live.peek()?;
                let sum = live.fold(0i128, |acc, p| acc + i128::from(p.pos) - i128::from(p.neg));
                return Some(Visible::Counter(sum));
            }
        };
        let empty = match &v {
            Visible::Hash(m) => m.is_empty(),
            Visible::Set(s) => s.is_empty(),
            Visible::ZSet(z) => z.is_empty(),
            _ => false,
        };
        (!empty).then_some(v)
    }

    /// The newest write of any part but the whole-value register: a
    /// register at or below it can never be the current life.
    pub(super) fn whole_reset(&self) -> Option<Stamp> {
        newest_except(&self.heads(), Kind::Whole)
    }

    /// The resets of each part: the newest write of any other part. An
    /// element at or below its part's reset can never show again.
    pub(super) fn part_resets(&self) -> [Option<Stamp>; 4] {
        let heads = self.heads();
        [Kind::Hash, Kind::Set, Kind::ZSet, Kind::Counter].map(|k| newest_except(&heads, k))
    }
}

/// The newest write of any part but `kind`.
fn newest_except(heads: &[(Option<Stamp>, Kind)], kind: Kind) -> Option<Stamp> {
    heads
        .iter()
        .filter(|(_, k)| *k != kind)
        .filter_map(|(s, _)| *s)
        .max()
}

/// The elements of `part` that `pick` keeps, with what it kept of each.
fn live<K: Ord + Clone, E: Join, T>(
    part: &Part<K, E>,
    pick: impl Fn(&E) -> Option<T>,
) -> BTreeMap<K, T> {
    part.elems
        .iter()
        .filter_map(|(k, e)| pick(e).map(|t| (k.clone(), t)))
        .collect()
}
