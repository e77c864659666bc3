//! Versions older than the retention window are pruned: their queries get a
//! clear code, the retained ones still read and prove, and the app hash is
//! unaffected by pruning.

mod inproc;
use inproc::*;
use stave::app::AppConfig;
use stave::keyspaces::kv::kv_key;
use stave::store::PruneConfig;

#[tokio::test(flavor = "multi_thread")]
async fn pruning_keeps_only_the_retention_window() {
    let pruned_dir = tempfile::tempdir().unwrap();
    let full_dir = tempfile::tempdir().unwrap();
    let config = AppConfig {
        prune: PruneConfig {
            keep_recent: 5,
            interval: 2,
        },
        retain_blocks: 8,
        ..AppConfig::default()
    };
    let mut pruned = Node::open_with(pruned_dir.path(), config);
    let mut full = Node::open_with(
        full_dir.path(),
        AppConfig {
            prune: PruneConfig {
                keep_recent: 0,
                interval: 1,
            },
            ..AppConfig::default()
        },
    );
    pruned.init_chain(default_genesis()).await;
    full.init_chain(default_genesis()).await;
    for h in 1..=20u64 {
        let txs = vec![signed(
            1,
            h - 1,
            vec![set("hot", &format!("v{h}")), set(&format!("k{h}"), "x")],
        )];
        let (a, _) = pruned.block(h, txs.clone()).await;
        let r = full.finalize(h, txs).await;
        let c = full.commit().await;
        assert_eq!(
            a,
            r.app_hash.as_bytes(),
            "pruning never changes the app hash (height {h})"
        );
        assert_eq!(
            c.retain_height.value(),
            0,
            "keep-all reports retain_height 0"
        );
    }
    let c = pruned.finalize(21, vec![]).await;
    let commit = pruned.commit().await;
    assert_eq!(
        commit.retain_height.value(),
        21 - 8.max(EVIDENCE_AGE),
        "Commit reports the retention window, never inside the evidence age"
    );
    let _ = c;

    let k = kv_key(&key(1).verifying_key().to_bytes(), b"hot");
    let old = pruned.query("/store", &k, 3, true).await;
    assert_eq!(
        old.code.value(),
        stave::tx::Code::NotFound.value(),
        "height 3 is pruned: {}",
        old.log
    );
    let kept = pruned.query("/store", &k, 18, true).await;
    assert!(kept.code.is_ok(), "{}", kept.log);
    assert!(kept.proof.is_some());
    let same = full.query("/store", &k, 18, false).await;
    assert_eq!(kept.value, same.value);
    assert!(
        full.query("/store", &k, 3, false).await.code.is_ok(),
        "keep-all keeps height 3"
    );

    // every retained height still reads what the unpruned node reads
    for h in 16..=20u64 {
        for name in ["hot", "k1", "k7", "k17", "k20"] {
            let k = kv_key(&key(1).verifying_key().to_bytes(), name.as_bytes());
            let a = pruned.query("/store", &k, h, true).await;
            let b = full.query("/store", &k, h, false).await;
            assert!(a.code.is_ok(), "{name}@{h}: {}", a.log);
            assert_eq!(a.value, b.value, "{name}@{h}");
        }
    }

    // pruning removed tree nodes and replaced versioned values
    let count = |s: &stave::store::ChainStore, cf: &str| {
        let cf = s.db().cf_handle(cf).unwrap();
        s.db().iterator_cf(cf, rocksdb::IteratorMode::Start).count()
    };
    use stave::store::cf::{JMT_NODES, JMT_VALUES};
    assert!(
        count(&pruned.store, JMT_NODES) < count(&full.store, JMT_NODES),
        "stale nodes are deleted"
    );
    assert!(
        count(&pruned.store, JMT_VALUES) < count(&full.store, JMT_VALUES),
        "replaced values are deleted: {} vs {}",
        count(&pruned.store, JMT_VALUES),
        count(&full.store, JMT_VALUES)
    );
}
