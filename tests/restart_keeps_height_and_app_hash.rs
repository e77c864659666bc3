//! Genesis, then blocks, then a restart, then Info: the restarted store
//! reports the same height and app hash, and keeps going.

mod inproc;
use inproc::*;

#[tokio::test(flavor = "multi_thread")]
async fn restart_keeps_height_and_app_hash() {
    let dir = tempfile::tempdir().unwrap();
    let mut node = Node::open(dir.path());
    let info = node.info().await;
    assert_eq!(info.last_block_height.value(), 0);
    assert!(
        info.last_block_app_hash.as_bytes().is_empty(),
        "no genesis yet"
    );

    let genesis = node.init_chain(default_genesis()).await;
    assert_eq!(genesis.len(), 32);
    let mut last = genesis.clone();
    for h in 1..=5u64 {
        let txs = vec![signed(1, h - 1, vec![set(&format!("k{h}"), "v")])];
        let (hash, r) = node.block(h, txs).await;
        assert!(
            r.tx_results.iter().all(|t| t.code.is_ok()),
            "{:?}",
            r.tx_results
        );
        assert_ne!(hash, last, "a state change moves the app hash");
        last = hash;
    }
    // an empty block still writes a version
    let (empty, _) = node.block(6, vec![]).await;
    assert_eq!(empty, last, "an empty block keeps the root");
    assert_eq!(
        node.store.root_at(6).unwrap().map(|r| r.to_vec()),
        Some(last.clone()),
        "version 6 exists"
    );
    let signer = hex::encode(key(1).verifying_key().to_bytes());
    let at6 = node
        .query(&format!("/kv/{signer}/{}", hex::encode("k5")), b"", 6, true)
        .await;
    assert!(
        at6.code.is_ok() && !at6.value.is_empty(),
        "height 6 is queryable: {}",
        at6.log
    );

    let before = node.info().await;
    assert_eq!(before.last_block_height.value(), 6);
    assert_eq!(before.last_block_app_hash.as_bytes(), &last[..]);

    let path = node.shutdown();
    let mut node = Node::open(&path);
    let after = node.info().await;
    assert_eq!(after.last_block_height.value(), 6);
    assert_eq!(after.last_block_app_hash, before.last_block_app_hash);
    assert_eq!(after.app_version, 1);

    // and the restarted node keeps applying blocks
    let (h7, r) = node
        .block(7, vec![signed(1, 5, vec![set("after", "restart")])])
        .await;
    assert!(r.tx_results[0].code.is_ok(), "{:?}", r.tx_results[0]);
    assert_ne!(h7, last);
}
