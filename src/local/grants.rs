//! `local/access/`: what this validator delivered to consumers.
//! - `nonces/{consumer ‖ nonce}`: each answered request, until its window
//!   has passed (after which the window alone refuses a replay);
//! - `pending/{seq}`: each delivery not yet recorded on chain;
//! - `refused`: how many deliveries the chain refused to record.
//!
//! A delivery's nonce and pending row are written in one synced batch
//! before the wrapped DEK leaves the node, so a crash after the answer
//! loses no record of it.

use prost::Message;

use super::{decode, keys, LocalError, LocalRaw};
use crate::proto::local::PendingGrant;

/// Typed access to `local/access/`.
pub trait GrantsExt: LocalRaw {
    /// Whether the request `replay_key` was answered (and not yet
    /// forgotten).
    fn nonce_seen(&self, replay_key: &[u8]) -> Result<bool, LocalError> {
        Ok(self.get_raw(&keys::access_nonce(replay_key))?.is_some())
    }

    /// Records the answer to `replay_key` (remembered until `until_ms`) and
    /// the delivery `g` as pending number `seq`, in one synced batch.
    fn put_delivery(
        &self,
        replay_key: &[u8],
        until_ms: u64,
        seq: u64,
        g: &PendingGrant,
    ) -> Result<(), LocalError> {
        self.put_raw_all(&[
            (
                keys::access_nonce(replay_key),
                until_ms.to_be_bytes().to_vec(),
            ),
            (keys::pending_grant(seq), g.encode_to_vec()),
        ])
    }

    /// Every pending delivery, oldest first, with its sequence number. A
    /// row that does not decode is returned as `Err` in place, so the
    /// caller can drop it.
    #[allow(clippy::type_complexity)]
    fn pending_grants(&self) -> Result<Vec<(u64, Result<PendingGrant, LocalError>)>, LocalError> {
        let prefix = keys::pending_grants_prefix();
        Ok(self
            .scan_raw(&prefix)?
            .into_iter()
            .map(|(k, v)| {
                let seq = k
                    .get(prefix.len()..)
                    .and_then(|s| <[u8; 8]>::try_from(s).ok())
                    .map_or(u64::MAX, u64::from_be_bytes);
                (seq, decode(&k, &v))
            })
            .collect())
    }

    /// Forgets the pending deliveries `seqs` (recorded, or refused).
    fn remove_pending(&self, seqs: &[u64]) -> Result<(), LocalError> {
        let keys: Vec<Vec<u8>> = seqs.iter().map(|s| keys::pending_grant(*s)).collect();
        self.delete_raw_all(&keys)
    }

    /// Deliveries the chain refused to record, so far.
    fn refused_grants(&self) -> Result<u64, LocalError> {
        let raw = self.get_raw(&keys::refused_grants())?;
        Ok(raw
            .and_then(|v| <[u8; 8]>::try_from(v.as_slice()).ok())
            .map_or(0, u64::from_be_bytes))
    }

    /// Counts the deliveries `seqs` as refused and forgets their pending
    /// rows, in one synced batch.
    fn refuse_pending(&self, seqs: &[u64]) -> Result<(), LocalError> {
        let total = self.refused_grants()? + seqs.len() as u64;
        let count = (keys::refused_grants(), total.to_be_bytes().to_vec());
        let rows: Vec<Vec<u8>> = seqs.iter().map(|s| keys::pending_grant(*s)).collect();
        self.apply_raw(&[count], &rows)
    }

    /// Forgets the answered nonces whose window has passed; returns how
    /// many.
    fn forget_expired_nonces(&self, now_ms: u64) -> Result<usize, LocalError> {
        let expired: Vec<Vec<u8>> = self
            .scan_raw(&keys::access_nonces_prefix())?
            .into_iter()
            .filter(|(_, v)| {
                <[u8; 8]>::try_from(v.as_slice()).map_or(0, u64::from_be_bytes) < now_ms
            })
            .map(|(k, _)| k)
            .collect();
        self.delete_raw_all(&expired)?;
        Ok(expired.len())
    }
}
impl<T: LocalRaw + ?Sized> GrantsExt for T {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::local::LocalStore;

    fn grant(n: u8) -> PendingGrant {
        PendingGrant {
            cid: vec![n; 36],
            consumer_pubkey: vec![n; 32],
            territory: "GB".into(),
            ..PendingGrant::default()
        }
    }

    #[test]
    fn deliveries_survive_a_reopen_until_recorded_or_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("local");
        {
            let s = LocalStore::open(&path).unwrap();
            s.put_delivery(b"k1", 100, 1, &grant(1)).unwrap();
            s.put_delivery(b"k2", 300, 2, &grant(2)).unwrap();
            s.put_delivery(b"k3", 300, 3, &grant(3)).unwrap();
        }
        let s = LocalStore::open(&path).unwrap();
        assert!(s.nonce_seen(b"k1").unwrap() && !s.nonce_seen(b"k4").unwrap());
        let seqs: Vec<u64> = s
            .pending_grants()
            .unwrap()
            .iter()
            .map(|(q, _)| *q)
            .collect();
        assert_eq!(seqs, vec![1, 2, 3]);
        s.remove_pending(&[1]).unwrap();
        s.refuse_pending(&[3]).unwrap();
        assert_eq!(s.refused_grants().unwrap(), 1);
        let left: Vec<PendingGrant> = s
            .pending_grants()
            .unwrap()
            .into_iter()
            .map(|(_, g)| g.unwrap())
            .collect();
        assert_eq!(left, vec![grant(2)]);
        assert_eq!(s.forget_expired_nonces(200).unwrap(), 1);
        assert!(!s.nonce_seen(b"k1").unwrap() && s.nonce_seen(b"k2").unwrap());
    }
}
