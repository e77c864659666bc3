//! The mempool view's bounds: the cap on signers read, the pending limit,
//! and what a Commit forgets.

use std::sync::Arc;

use ed25519_dalek::SigningKey;

use super::*;
use crate::keyspaces::kv::KvSet;
use crate::tx::build::sign_tx;
use crate::tx::Action;

const CHAIN: &str = "stave-mempool-test";

fn mempool(dir: &std::path::Path, max_pending: u32) -> Mempool {
    let store = ChainStore::open(dir).unwrap();
    let m = Mempool::new(
        store,
        Arc::new(SigCache::default()),
        Arc::new(DecodeCache::default()),
        max_pending,
    );
    m.set_chain(CHAIN.into(), Params::default());
    m
}

fn tx(seed: u8, nonce: u64) -> DecodedTx {
    let key = SigningKey::from_bytes(&[seed; 32]);
    let action = Action::KvSet(KvSet {
        key: b"k".to_vec(),
        value: b"v".to_vec(),
    });
    let raw = sign_tx(&key, CHAIN, nonce, vec![action], "");
    DecodedTx::decode(&raw, &Params::default()).unwrap()
}

/// Reads `MAX_SIGNERS_READ` + 100 distinct signers (none on chain).
fn fill_to_cap(m: &Mempool) {
    for i in 0..MAX_SIGNERS_READ as u64 + 100 {
        let mut key = [0u8; 32];
        key[..8].copy_from_slice(&i.to_be_bytes());
        let (read, _) = m.signer(&key).unwrap();
        assert_eq!((read.next, read.pending), (0, 0));
    }
}

fn remembered(m: &Mempool) -> usize {
    m.view.lock().signers.len()
}

#[test]
fn signers_read_stop_being_remembered_at_the_cap_but_admitted_ones_always_are() {
    let dir = tempfile::tempdir().unwrap();
    let m = mempool(dir.path(), 8);
    fill_to_cap(&m);
    assert_eq!(remembered(&m), MAX_SIGNERS_READ);

    // Past the cap, a signer's txs still chain: its admitted entry is kept.
    let first = tx(0xA1, 0);
    assert!(m.admit(&first).is_ok(), "{:?}", m.admit(&first));
    assert_eq!(remembered(&m), MAX_SIGNERS_READ + 1);
    assert_eq!(m.next_nonce(&first.signer), Some(1));
    let again = m.admit(&tx(0xA1, 0));
    assert_eq!(again.code, crate::tx::Code::Nonce, "{}", again.log);
    assert!(m.admit(&tx(0xA1, 1)).is_ok());
    assert_eq!(m.next_nonce(&first.signer), Some(2));

    // A Commit forgets everything and gives the flood's room back.
    m.reset();
    assert_eq!(remembered(&m), 0);
    assert!(m.view.lock().signers.capacity() < MAX_SIGNERS_READ);
    assert_eq!(m.next_nonce(&first.signer), None);
}

#[test]
fn pending_txs_per_account_stop_at_the_node_limit() {
    let dir = tempfile::tempdir().unwrap();
    let m = mempool(dir.path(), 3);
    for nonce in 0..3 {
        let out = m.admit(&tx(7, nonce));
        assert!(out.is_ok(), "nonce {nonce}: {}", out.log);
    }
    let over = m.admit(&tx(7, 3));
    assert_eq!(over.code, crate::tx::Code::MempoolPolicy, "{}", over.log);
    assert!(over.log.contains("node limit 3"), "{}", over.log);
    // Refused txs leave the view where it was.
    assert_eq!(m.next_nonce(&tx(7, 0).signer), Some(3));
    // After a Commit (nothing committed here) the view starts again from state.
    m.reset();
    assert!(m.admit(&tx(7, 0)).is_ok());
}

#[test]
fn a_read_from_before_a_commit_is_read_again_not_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let m = mempool(dir.path(), 8);
    let t = tx(9, 0);
    let (read, generation) = m.signer(&t.signer).unwrap();
    m.reset();
    // A stale read (the Commit may have moved the signer's nonce) admits nothing...
    assert!(m.admit_read(&t, read, generation).is_none());
    assert_eq!(m.next_nonce(&t.signer), None);
    // ...while a read of this block's state does.
    let (fresh, now) = m.signer(&t.signer).unwrap();
    assert_ne!(now, generation);
    assert!(matches!(m.admit_read(&t, fresh, now), Some(Ok(()))));
    assert_eq!(m.next_nonce(&t.signer), Some(1));
}

#[test]
fn past_the_cap_a_signer_read_this_block_is_admitted_on_that_read() {
    let dir = tempfile::tempdir().unwrap();
    let m = mempool(dir.path(), 8);
    fill_to_cap(&m);
    let t = tx(0x33, 0);
    let (read, generation) = m.signer(&t.signer).unwrap();
    assert_eq!(
        m.next_nonce(&t.signer),
        None,
        "past the cap, not remembered"
    );
    assert!(matches!(m.admit_read(&t, read, generation), Some(Ok(()))));
    assert_eq!(m.next_nonce(&t.signer), Some(1));
}
