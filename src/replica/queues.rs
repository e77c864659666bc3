//! What the sync worker has to do between rounds: records to announce
//! (UPDATE) and records whose values to pull from the peer that announced
//! them. Both are bounded: past the bound the oldest entries go, and the
//! next anti-entropy round repairs what they would have carried.

use std::collections::{BTreeMap, VecDeque};

use parking_lot::Mutex;
use tokio::sync::Notify;

use super::accept::Checked;

/// The most entries either queue holds.
pub const MAX_QUEUED: usize = 100_000;

/// A record to announce, and the peer it came from (not told again).
#[derive(Clone, Debug)]
pub struct Outgoing {
    pub record: Checked,
    pub from: Option<[u8; 32]>,
}

/// (datakey, owner) → (the record announced, the peer that announced it).
/// Keyed by owner too: a validator announcing a record under another
/// owner's datakey (refused once its value shows the mismatch) cannot
/// displace that owner's pending record.
type Wanted = BTreeMap<([u8; 32], [u8; 32]), (Checked, [u8; 32])>;

#[derive(Default)]
pub struct Queues {
    outbox: Mutex<VecDeque<Outgoing>>,
    wanted: Mutex<Wanted>,
    pub wake: Notify,
}

impl Queues {
    /// Queues records to announce to every peer but `from`.
    pub fn announce(&self, records: impl IntoIterator<Item = Checked>, from: Option<[u8; 32]>) {
        let mut q = self.outbox.lock();
        q.extend(records.into_iter().map(|record| Outgoing { record, from }));
        while q.len() > MAX_QUEUED {
            q.pop_front();
        }
        drop(q);
        self.wake.notify_one();
    }

    /// Takes everything queued to announce.
    pub fn take_outgoing(&self) -> Vec<Outgoing> {
        self.outbox.lock().drain(..).collect()
    }

    /// Queues a record whose value `from` holds; a newer announcement of
    /// the same datakey and owner replaces an older one.
    pub fn want(&self, record: Checked, from: [u8; 32]) {
        let mut w = self.wanted.lock();
        let slot = (record.datakey, record.owner);
        let newer = w
            .get(&slot)
            .is_none_or(|(old, _)| record.md.newer_than(&old.md));
        if newer && (w.len() < MAX_QUEUED || w.contains_key(&slot)) {
            w.insert(slot, (record, from));
        }
        drop(w);
        self.wake.notify_one();
    }

    /// Takes every wanted record, grouped by the peer to ask.
    pub fn take_wanted(&self) -> BTreeMap<[u8; 32], Vec<Checked>> {
        let mut out: BTreeMap<[u8; 32], Vec<Checked>> = BTreeMap::new();
        for (_, (c, from)) in std::mem::take(&mut *self.wanted.lock()) {
            out.entry(from).or_default().push(c);
        }
        out
    }

    pub fn is_idle(&self) -> bool {
        self.outbox.lock().is_empty() && self.wanted.lock().is_empty()
    }
}
