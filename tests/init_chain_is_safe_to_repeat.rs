//! After a crash before block 1, Info reports height 0 and CometBFT calls
//! InitChain again: the result is the same genesis app hash.

mod inproc;
use inproc::*;

fn genesis_with_account() -> serde_json::Value {
    serde_json::json!({
        // a release must fit one tx: its cap comes down with max_tx_bytes
        "params": {"max_tx_bytes": 4096, "rights": {"max_release_bytes": 2048}},
        "accounts": [{"pubkey": hex::encode(key(9).verifying_key().to_bytes())}]
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn init_chain_is_safe_to_repeat() {
    let dir = tempfile::tempdir().unwrap();
    let mut node = Node::open(dir.path());
    let first = node.init_chain(genesis_with_account()).await;

    let path = node.shutdown();
    let mut node = Node::open(&path);
    let info = node.info().await;
    assert_eq!(info.last_block_height.value(), 0, "still before block 1");
    assert_eq!(info.last_block_app_hash.as_bytes(), &first[..]);

    let second = node.init_chain(genesis_with_account()).await;
    assert_eq!(first, second, "InitChain again gives the same genesis");
    let dump = state_dump(&node.store);

    // a different genesis retried before block 1 leaves nothing of the first
    let third = node.init_chain(default_genesis()).await;
    assert_ne!(third, first);
    let other_dump = state_dump(&node.store);
    assert!(
        other_dump.len() < dump.len(),
        "the first genesis' account is gone"
    );
    let fourth = node.init_chain(genesis_with_account()).await;
    assert_eq!(fourth, first);
    assert_eq!(state_dump(&node.store), dump);

    // blocks follow
    let (h1, r) = node.block(1, vec![signed(9, 0, vec![set("k", "v")])]).await;
    assert!(r.tx_results[0].code.is_ok());
    assert_ne!(h1, first);
}

#[tokio::test(flavor = "multi_thread")]
async fn genesis_params_are_enforced() {
    let dir = tempfile::tempdir().unwrap();
    let mut node = Node::open(dir.path());
    node.init_chain(genesis_with_account()).await;
    // max_tx_bytes = 4096 from genesis, not the default
    let big = signed(9, 0, vec![set("k", &"x".repeat(5000))]);
    let r = node.check_tx(big.clone(), false).await;
    assert_eq!(
        r.code.value(),
        stave::tx::Code::TxTooLarge.value(),
        "{}",
        r.log
    );
    let (_, f) = node.block(1, vec![big]).await;
    assert_eq!(
        f.tx_results[0].code.value(),
        stave::tx::Code::TxTooLarge.value()
    );
}
