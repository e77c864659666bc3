//! Malformed, bad-signature, wrong-nonce, wrong-chain and oversized txs are
//! each refused with their own code, change nothing (not even a nonce), and
//! the node keeps going. Checked in CheckTx and in FinalizeBlock, which must
//! survive any bytes (block sync and replay skip ProcessProposal).

mod inproc;
use bytes::Bytes;
use inproc::*;
use prost::Message;
use stave::proto::tx as pb;
use stave::tx::{build::sign_tx, Code};

fn bad_signature() -> Bytes {
    let raw = signed(1, 0, vec![set("k", "v")]);
    let mut tx = pb::Tx::decode(raw.as_ref()).unwrap();
    tx.signature[10] ^= 0x40;
    Bytes::from(tx.encode_to_vec())
}

fn cases() -> Vec<(&'static str, Bytes, Code)> {
    vec![
        (
            "malformed",
            Bytes::from_static(b"\xff\xff\x00garbage"),
            Code::Decode,
        ),
        ("empty", Bytes::new(), Code::Decode),
        ("bad signature", bad_signature(), Code::Signature),
        (
            "wrong nonce",
            signed(1, 5, vec![set("k", "v")]),
            Code::Nonce,
        ),
        (
            "wrong chain",
            Bytes::from(sign_tx(&key(1), "other-chain", 0, vec![set("k", "v")], "")),
            Code::WrongChain,
        ),
        (
            "oversized",
            signed(1, 0, vec![set("k", &"x".repeat(200_000))]),
            Code::TxTooLarge,
        ),
        ("no actions", signed(1, 0, vec![]), Code::ActionCount),
        (
            "empty key",
            signed(1, 0, vec![set("", "v")]),
            Code::KvBadKey,
        ),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn each_bad_tx_gets_its_own_code_in_check_tx() {
    let dir = tempfile::tempdir().unwrap();
    let mut node = Node::open(dir.path());
    node.init_chain(default_genesis()).await;
    for (name, tx, code) in cases() {
        let r = node.check_tx(tx, false).await;
        assert_eq!(r.code.value(), code.value(), "{name}: {}", r.log);
        assert_eq!(r.codespace, "stave", "{name}");
        assert!(!r.log.is_empty(), "{name}: the log says why");
    }
    // the node keeps going: a good tx passes
    let r = node
        .check_tx(signed(1, 0, vec![set("k", "v")]), false)
        .await;
    assert!(r.code.is_ok(), "{}", r.log);
}

#[tokio::test(flavor = "multi_thread")]
async fn each_bad_tx_gets_its_own_code_in_finalize_block_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut node = Node::open(dir.path());
    let genesis = node.init_chain(default_genesis()).await;
    let before = state_dump(&node.store);
    let cases = cases();
    let txs: Vec<Bytes> = cases.iter().map(|(_, t, _)| t.clone()).collect();

    // ProcessProposal refuses a block with undecodable or unauthenticated txs…
    let verdict = node.process_proposal(1, txs.clone()).await;
    assert_eq!(verdict, tendermint::abci::response::ProcessProposal::Reject);
    // …and PrepareProposal drops them all.
    assert!(node
        .prepare_proposal(1, txs.clone(), 1 << 20)
        .await
        .is_empty());

    // FinalizeBlock (as in replay) gives each its code and changes nothing.
    let (hash, r) = node.block(1, txs).await;
    for ((name, _, code), res) in cases.iter().zip(&r.tx_results) {
        assert_eq!(res.code.value(), code.value(), "{name}: {}", res.log);
    }
    assert_eq!(
        hash, genesis,
        "no state change, so the root is the genesis root"
    );
    assert_eq!(state_dump(&node.store), before);

    // the node keeps going
    let (_, r) = node.block(2, vec![signed(1, 0, vec![set("k", "v")])]).await;
    assert!(r.tx_results[0].code.is_ok(), "{}", r.tx_results[0].log);
}

#[tokio::test(flavor = "multi_thread")]
async fn failed_action_consumes_only_the_nonce() {
    let dir = tempfile::tempdir().unwrap();
    let mut node = Node::open(dir.path());
    node.init_chain(default_genesis()).await;
    node.block(1, vec![signed(1, 0, vec![set("keep", "1")])])
        .await;
    // set then delete a missing key in one tx: the set must not survive
    let (_, r) = node
        .block(2, vec![signed(1, 1, vec![set("new", "2"), del("missing")])])
        .await;
    assert_eq!(r.tx_results[0].code.value(), Code::NotFound.value());
    let acct = node
        .query(
            &format!(
                "/accounts/{}",
                hex::encode(key(1).verifying_key().to_bytes())
            ),
            b"",
            0,
            false,
        )
        .await;
    let acct = stave::proto::accounts::Account::decode(acct.value.as_ref()).unwrap();
    assert_eq!(acct.nonce, 2, "the nonce is consumed");
    let signer = hex::encode(key(1).verifying_key().to_bytes());
    let q = node
        .query(
            &format!("/kv/{signer}/{}", hex::encode("new")),
            b"",
            0,
            false,
        )
        .await;
    assert!(q.value.is_empty(), "the failed tx's set was dropped");
    let q = node
        .query(
            &format!("/kv/{signer}/{}", hex::encode("keep")),
            b"",
            0,
            false,
        )
        .await;
    assert!(!q.value.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn process_proposal_accepts_good_blocks_and_rejects_each_bad_class() {
    use tendermint::abci::response::ProcessProposal;
    let dir = tempfile::tempdir().unwrap();
    let mut node = Node::open(dir.path());
    node.init_chain(default_genesis()).await;
    let good = vec![
        signed(1, 0, vec![set("a", "1")]),
        signed(1, 1, vec![del("missing")]), // authenticates; its action fails
        signed(2, 0, vec![set("b", "2")]),
    ];
    assert_eq!(
        node.process_proposal(1, good.clone()).await,
        ProcessProposal::Accept
    );
    assert_eq!(
        node.process_proposal(1, vec![]).await,
        ProcessProposal::Accept
    );
    for (name, bad, _) in cases() {
        let mut block = good.clone();
        block.insert(1, bad);
        assert_eq!(
            node.process_proposal(1, block).await,
            ProcessProposal::Reject,
            "{name}"
        );
    }
    // a replayed tx (nonce already used inside the block) is refused too
    let replay = vec![good[0].clone(), good[0].clone()];
    assert_eq!(
        node.process_proposal(1, replay).await,
        ProcessProposal::Reject
    );
}
