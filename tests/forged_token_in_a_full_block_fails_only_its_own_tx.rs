//! In a block, token signatures are batch-verified together with the tx
//! signatures. A bad signature anywhere in a batch fails only its own tx,
//! with the code it had when token signatures were verified one by one:
//! a forged token is `KV_TOKEN_FORGED` (the tx does not authenticate, so its
//! nonce stays unused), a bad tx signature is `SIGNATURE`; every other tx in
//! the block applies.

mod inproc;
use inproc::kv::*;
use inproc::*;
use prost::Message;
use stave::keyspaces::kv::token::client;
use stave::tx::{Action, Code};

/// Signed by key 2 but naming `seed` as its controller.
fn forged(seed: u8, k: &str) -> Action {
    let mut c = client::create(&key(2), CHAIN, PID, k, b"evil", "", 1);
    c.token.controller = controller(seed);
    Action::KvTokenCreate(c)
}

fn bad_tx_signature(tx: bytes::Bytes) -> bytes::Bytes {
    let mut t = stave::proto::tx::Tx::decode(tx).unwrap();
    t.signature[5] ^= 1;
    bytes::Bytes::from(t.encode_to_vec())
}

#[tokio::test(flavor = "multi_thread")]
async fn one_bad_signature_fails_only_its_own_tx() {
    let dir = tempfile::tempdir().unwrap();
    let mut node = Node::open(dir.path());
    node.init_chain(default_genesis()).await;
    // 16 txs (32 signatures: batches of 64 split over cores), seeds 20..36,
    // each relaying its own token.
    let mut txs = Vec::new();
    let mut want = Vec::new();
    for s in 20u8..36 {
        let k = format!("k{s}");
        let (tx, code) = match s {
            24 => (signed(s, 0, vec![forged(s, &k)]), Code::KvTokenForged),
            28 => (
                bad_tx_signature(signed(s, 0, vec![create(s, &k, "v", &["a"], 1)])),
                Code::Signature,
            ),
            // The second action's token is forged: the whole tx fails.
            31 => (
                signed(
                    s,
                    0,
                    vec![create(s, &k, "v", &["a"], 1), forged(s, "other")],
                ),
                Code::KvTokenForged,
            ),
            _ => (signed(s, 0, vec![create(s, &k, "v", &["a"], 1)]), Code::Ok),
        };
        txs.push(tx);
        want.push((s, code));
    }
    let (_, r) = node.block(1, txs).await;
    for (j, (s, c)) in want.iter().enumerate() {
        assert_eq!(
            code(&r, j),
            c.value(),
            "tx {j} (seed {s}): {}",
            r.tx_results[j].log
        );
        let k = format!("k{s}");
        assert_eq!(live(&node, *s, &k).is_some(), *c == Code::Ok, "seed {s}");
    }
    assert!(live(&node, 31, "other").is_none());

    // The failed txs consumed no nonce: the same signers' nonce 0 applies now.
    let again: Vec<_> = [24u8, 28, 31]
        .iter()
        .map(|s| signed(*s, 0, vec![create(*s, &format!("k{s}"), "v", &[], 1)]))
        .collect();
    let (_, r) = node.block(2, again).await;
    for j in 0..3 {
        assert_eq!(code(&r, j), 0, "{}", r.tx_results[j].log);
    }
}
