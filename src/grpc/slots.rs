//! Streams served at once on the peer listener: a cap in all and one per
//! requesting validator. Each stream holds a blocking thread, so past
//! either cap a request is refused, never queued.

use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::Mutex;

/// Which cap a refused stream met, and its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Full {
    All(usize),
    PerPeer(usize),
}

/// The stream places of a service.
pub struct StreamSlots {
    all: Arc<tokio::sync::Semaphore>,
    max_all: usize,
    max_per_peer: usize,
    /// Streams each requester holds; an entry only while it holds one.
    per_peer: Arc<Mutex<BTreeMap<[u8; 32], usize>>>,
}

/// One open stream's places; given back when dropped.
pub struct Slot {
    _permit: tokio::sync::OwnedSemaphorePermit,
    who: [u8; 32],
    per_peer: Arc<Mutex<BTreeMap<[u8; 32], usize>>>,
}

impl StreamSlots {
    pub fn new(max_all: usize, max_per_peer: usize) -> Self {
        StreamSlots {
            all: Arc::new(tokio::sync::Semaphore::new(max_all)),
            max_all,
            max_per_peer,
            per_peer: Arc::default(),
        }
    }

    /// A place for one stream of `who`, or the cap it met.
    pub fn take(&self, who: [u8; 32]) -> Result<Slot, Full> {
        let permit = self
            .all
            .clone()
            .try_acquire_owned()
            .map_err(|_| Full::All(self.max_all))?;
        let mut map = self.per_peer.lock();
        let n = map.entry(who).or_insert(0);
        if *n >= self.max_per_peer {
            return Err(Full::PerPeer(self.max_per_peer));
        }
        *n += 1;
        Ok(Slot {
            _permit: permit,
            who,
            per_peer: self.per_peer.clone(),
        })
    }

    /// Whether `who` has an entry (it has one only while holding a stream).
    pub fn tracks(&self, who: &[u8; 32]) -> bool {
        self.per_peer.lock().contains_key(who)
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut map = self.per_peer.lock();
        if let Some(n) = map.get_mut(&self.who) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                map.remove(&self.who);
            }
        }
    }
}
