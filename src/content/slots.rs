//! How many uploads this node processes at once: at most `max_total`, and
//! `max_per_uploader` for any one uploader. A [`Slot`] holds one place
//! until it is dropped.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use super::IngestError;

/// The node's processing places.
#[derive(Debug)]
pub struct Slots {
    max_total: usize,
    max_per_uploader: usize,
    held: Mutex<BTreeMap<[u8; 32], usize>>,
}

/// One held place; dropping it frees the place.
#[derive(Debug)]
pub struct Slot {
    slots: Arc<Slots>,
    uploader: [u8; 32],
}

impl Slots {
    pub fn new(max_total: usize, max_per_uploader: usize) -> Arc<Self> {
        Arc::new(Slots {
            max_total,
            max_per_uploader,
            held: Mutex::new(BTreeMap::new()),
        })
    }

    /// Takes a place for `uploader`.
    ///
    /// # Errors
    /// `Busy` when the node or the uploader is at its cap.
    pub fn take(self: &Arc<Self>, uploader: [u8; 32]) -> Result<Slot, IngestError> {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        let total: usize = held.values().sum();
        if total >= self.max_total {
            return Err(IngestError::Busy(format!(
                "this node is processing {total} uploads, its cap (upload.max_jobs); retry later"
            )));
        }
        let mine = held.entry(uploader).or_insert(0);
        if *mine >= self.max_per_uploader {
            return Err(IngestError::Busy(format!(
                "uploader {} has {mine} uploads in progress here, the cap (upload.max_jobs_per_uploader)",
                hex::encode(uploader)
            )));
        }
        *mine += 1;
        Ok(Slot {
            slots: self.clone(),
            uploader,
        })
    }

    /// Places held now.
    pub fn in_use(&self) -> usize {
        self.held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .sum()
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut held = self
            .slots
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(n) = held.get_mut(&self.uploader) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                held.remove(&self.uploader);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_per_uploader_and_in_total_and_frees_on_drop() {
        let s = Slots::new(3, 2);
        let a1 = s.take([1; 32]).expect("a1");
        let _a2 = s.take([1; 32]).expect("a2");
        assert_eq!(s.take([1; 32]).unwrap_err().code(), "BUSY");
        let _b1 = s.take([2; 32]).expect("b1");
        assert_eq!(s.take([3; 32]).unwrap_err().code(), "BUSY");
        assert_eq!(s.in_use(), 3);
        drop(a1);
        assert_eq!(s.in_use(), 2);
        let _c1 = s.take([3; 32]).expect("c1 after a1 left");
    }
}
