//! Each intent is accepted once: its signer and nonce are remembered in
//! `local/intents/` until the timestamp window has passed, after which the
//! window alone refuses a replay. Kept in the local store, so a restart
//! does not reopen the window.

use super::{IngestError, Intent};
use crate::local::{keys, LocalRaw, LocalStore};

/// Records `intent` as used, forgetting it after `until_ms`.
///
/// # Errors
/// `Replayed` if it was recorded before; `Internal` on a store error.
pub fn remember(store: &LocalStore, intent: &Intent, until_ms: u64) -> Result<(), IngestError> {
    // check-then-write: one upload at a time, so two copies of one intent
    // cannot both pass
    static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = ONE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let key = keys::intent(&intent.replay_key());
    if store.get_raw(&key)?.is_some() {
        return Err(IngestError::Replayed {
            uploader: hex::encode(intent.uploader),
            nonce: hex::encode(intent.nonce),
        });
    }
    store.put_raw(&key, &until_ms.to_be_bytes())?;
    Ok(())
}

/// Forgets the entries whose time has passed; returns how many.
///
/// # Errors
/// `Internal` on a store error.
pub fn forget_expired(store: &LocalStore, now_ms: u64) -> Result<usize, IngestError> {
    let mut n = 0;
    for (key, value) in store.scan_raw(&keys::intents_prefix())? {
        let until = <[u8; 8]>::try_from(value.as_slice()).map_or(0, u64::from_be_bytes);
        if until < now_ms {
            store.delete_raw(&key)?;
            n += 1;
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn intent(nonce: u8) -> Intent {
        Intent {
            chain_id: "c".into(),
            timestamp_ms: 0,
            nonce: [nonce; 16],
            uploader: [1; 32],
            processing_validator: [2; 32],
            replication_set: vec![[2; 32]],
            dek_holder_set: vec![[2; 32]],
            group_id: String::new(),
            recovery_x25519: [3; 32],
            audio_bytes: 1,
            art_bytes: vec![],
        }
    }

    #[test]
    fn an_intent_is_accepted_once_until_it_expires_and_across_reopens() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("local");
        {
            let s = LocalStore::open(&path).unwrap();
            remember(&s, &intent(1), 100).unwrap();
            remember(&s, &intent(2), 300).unwrap();
            assert_eq!(
                remember(&s, &intent(1), 100).unwrap_err().code(),
                "REPLAYED"
            );
        }
        let s = LocalStore::open(&path).unwrap();
        assert_eq!(
            remember(&s, &intent(1), 100).unwrap_err().code(),
            "REPLAYED"
        );
        assert_eq!(forget_expired(&s, 200).unwrap(), 1);
        remember(&s, &intent(1), 400).unwrap();
        assert_eq!(
            remember(&s, &intent(2), 400).unwrap_err().code(),
            "REPLAYED"
        );
    }
}
