//! Tells waiters (gRPC `BroadcastAndWait`) when their tx is committed.

use std::collections::HashMap;

use parking_lot::Mutex;
use tokio::sync::{oneshot, watch};

use super::outcome::TxOutcome;

/// A committed tx as a waiter sees it.
#[derive(Debug, Clone)]
pub struct Committed {
    pub height: u64,
    pub outcome: TxOutcome,
}

/// Distinct tx ids that may be waited on at once.
pub const MAX_WAITERS: usize = 50_000;
/// Clients that may wait on one tx id at once.
pub const MAX_WAITERS_PER_TX: usize = 16;

pub struct CommitNotifier {
    waiters: Mutex<HashMap<[u8; 32], Vec<oneshot::Sender<Committed>>>>,
    /// The last durably committed height, for background workers.
    height: watch::Sender<u64>,
    /// The last committed height with a `takedown.confirmed` event.
    takedowns: watch::Sender<u64>,
}

impl Default for CommitNotifier {
    fn default() -> Self {
        CommitNotifier {
            waiters: Mutex::default(),
            height: watch::Sender::new(0),
            takedowns: watch::Sender::new(0),
        }
    }
}

impl CommitNotifier {
    /// Follows the committed height (the local-store reconciler wakes on it).
    pub fn subscribe_height(&self) -> watch::Receiver<u64> {
        self.height.subscribe()
    }

    /// Follows the last committed height that confirmed a takedown (the
    /// reconciler stops holding that content: `local::purge`).
    pub fn subscribe_takedowns(&self) -> watch::Receiver<u64> {
        self.takedowns.subscribe()
    }

    /// Registers interest in a tx id. Register before broadcasting. Returns
    /// `None` when [`MAX_WAITERS`] are already waiting.
    pub fn wait_for(&self, tx_id: [u8; 32]) -> Option<oneshot::Receiver<Committed>> {
        let (tx, rx) = oneshot::channel();
        let mut w = self.waiters.lock();
        if w.len() >= MAX_WAITERS {
            return None; // every waiter forgets itself when it ends (ForgetOnDrop)
        }
        let list = w.entry(tx_id).or_default();
        if list.len() >= MAX_WAITERS_PER_TX {
            return None;
        }
        list.push(tx);
        Some(rx)
    }

    /// Drops the registration of waiters that gave up.
    pub fn forget(&self, tx_id: &[u8; 32]) {
        let mut w = self.waiters.lock();
        if let Some(list) = w.get_mut(tx_id) {
            list.retain(|s| !s.is_closed());
            if list.is_empty() {
                w.remove(tx_id);
            }
        }
    }

    /// Called after a height is durably committed.
    pub fn committed(&self, height: u64, outcomes: &[TxOutcome]) {
        // before the height: a worker woken by it sees the takedown too
        let confirmed = outcomes
            .iter()
            .flat_map(|o| &o.events)
            .any(|e| e.kind == crate::keyspaces::takedowns::CONFIRMED_EVENT);
        if confirmed {
            self.takedowns.send_replace(height);
        }
        self.height.send_replace(height);
        let mut w = self.waiters.lock();
        if w.is_empty() {
            return;
        }
        for o in outcomes {
            let Some(id) = o.tx_id else { continue };
            for s in w.remove(&id).unwrap_or_default() {
                let _ = s.send(Committed {
                    height,
                    outcome: o.clone(),
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keyspaces::Event;

    fn outcome(kind: &str) -> TxOutcome {
        TxOutcome::ok([1; 32], vec![Event::new(kind)])
    }

    #[test]
    fn the_takedown_feed_follows_confirming_heights_only() {
        let n = CommitNotifier::default();
        let feed = n.subscribe_takedowns();
        n.committed(5, &[outcome("takedown.voted")]);
        assert_eq!(*feed.borrow(), 0);
        n.committed(
            6,
            &[
                outcome("kv.set"),
                outcome(crate::keyspaces::takedowns::CONFIRMED_EVENT),
            ],
        );
        assert_eq!(*feed.borrow(), 6);
        n.committed(7, &[outcome("takedown.dismissed")]);
        assert_eq!(*feed.borrow(), 6, "a dismissal changes nothing");
        assert_eq!(*n.subscribe_height().borrow(), 7);
    }
}
