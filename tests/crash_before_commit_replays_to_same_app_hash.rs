//! A crash after FinalizeBlock and before Commit loses nothing that was
//! committed, and replaying the block gives the same app hash.

mod inproc;
use inproc::*;

#[tokio::test(flavor = "multi_thread")]
async fn crash_before_commit_replays_to_same_app_hash() {
    let dir = tempfile::tempdir().unwrap();
    let mut node = Node::open(dir.path());
    node.init_chain(default_genesis()).await;
    node.block(1, vec![signed(1, 0, vec![set("a", "1")])]).await;
    let committed = node.info().await;

    let block2 = vec![
        signed(1, 1, vec![set("b", "2")]),
        signed(2, 0, vec![set("c", "3")]),
        signed(1, 2, vec![del("a")]),
    ];
    let first = node.finalize(2, block2.clone()).await;
    // FinalizeBlock repeated for the same height before Commit: same result.
    let again = node.finalize(2, block2.clone()).await;
    assert_eq!(first.app_hash, again.app_hash);
    assert_eq!(first.tx_results, again.tx_results);

    // crash: nothing of height 2 may be on disk
    let path = node.shutdown();
    let mut node = Node::open(&path);
    let info = node.info().await;
    assert_eq!(info.last_block_height.value(), 1);
    assert_eq!(info.last_block_app_hash, committed.last_block_app_hash);

    // replay
    let replay = node.finalize(2, block2).await;
    assert_eq!(
        replay.app_hash, first.app_hash,
        "replay gives the same app hash"
    );
    assert_eq!(replay.tx_results, first.tx_results);
    node.commit().await;
    assert_eq!(node.info().await.last_block_app_hash, first.app_hash);
}
