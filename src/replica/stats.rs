//! Per-peer anti-entropy figures since this node started, for
//! `stave query local replicas`; the totals also go to the metrics.

use std::collections::BTreeMap;

use parking_lot::Mutex;

use crate::proto::replica as pb;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PeerStats {
    pub last_sync_ms: u64,
    pub last_error: String,
    pub rounds: u64,
    pub records_received: u64,
    pub records_accepted: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub bytes_accepted: u64,
    pub refused: u64,
}

/// Figures by peer operator key.
#[derive(Default)]
pub struct Stats {
    peers: Mutex<BTreeMap<[u8; 32], PeerStats>>,
}

impl Stats {
    /// Changes `peer`'s figures.
    pub fn with<T>(&self, peer: [u8; 32], f: impl FnOnce(&mut PeerStats) -> T) -> T {
        f(self.peers.lock().entry(peer).or_default())
    }

    /// Bytes sent to and received from `peer` in one exchange.
    pub fn bytes(&self, peer: [u8; 32], sent: usize, received: usize) {
        let m = &crate::metrics::metrics().replica.bytes;
        m.with_label_values(&["sent"]).inc_by(sent as u64);
        m.with_label_values(&["received"]).inc_by(received as u64);
        self.with(peer, |s| {
            s.bytes_sent += sent as u64;
            s.bytes_received += received as u64;
        });
    }

    pub fn snapshot(&self) -> BTreeMap<[u8; 32], PeerStats> {
        self.peers.lock().clone()
    }

    pub fn to_pb(&self) -> Vec<pb::PeerReplicaStats> {
        self.snapshot()
            .into_iter()
            .map(|(peer, s)| pb::PeerReplicaStats {
                peer: peer.to_vec(),
                last_sync_ms: s.last_sync_ms,
                last_error: s.last_error,
                rounds: s.rounds,
                records_received: s.records_received,
                records_accepted: s.records_accepted,
                bytes_sent: s.bytes_sent,
                bytes_received: s.bytes_received,
                bytes_accepted: s.bytes_accepted,
                refused: s.refused,
            })
            .collect()
    }
}
