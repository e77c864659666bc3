//! Determinism: the same blocks applied to two fresh stores give identical
//! app hashes at every height, whatever the txs (good, bad, failing).

mod inproc;
use bytes::Bytes;
use inproc::*;
use proptest::prelude::*;

fn tx_strategy() -> impl Strategy<Value = (u8, u8, u8, bool)> {
    // (signer seed 1..=4, key id, nonce skew 0 = right nonce, delete?)
    (
        1u8..=4,
        0u8..6,
        prop_oneof![8 => Just(0u8), 1 => 1u8..3],
        any::<bool>(),
    )
}

fn build_blocks(spec: &[Vec<(u8, u8, u8, bool)>]) -> Vec<Vec<Bytes>> {
    let mut nonces = [0u64; 5];
    spec.iter()
        .map(|block| {
            block
                .iter()
                .map(|&(seed, k, skew, is_del)| {
                    let n = nonces[seed as usize] + skew as u64;
                    if skew == 0 {
                        nonces[seed as usize] += 1;
                    }
                    let action = if is_del {
                        del(&format!("k{k}"))
                    } else {
                        set(&format!("k{k}"), &format!("v{seed}{n}"))
                    };
                    signed(seed, n, vec![action])
                })
                .collect()
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]
    #[test]
    fn same_blocks_give_same_app_hashes(spec in proptest::collection::vec(proptest::collection::vec(tx_strategy(), 0..12), 1..8)) {
        let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let blocks = build_blocks(&spec);
            let (a_dir, b_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
            let mut a = Node::open(a_dir.path());
            let mut b = Node::open(b_dir.path());
            assert_eq!(a.init_chain(default_genesis()).await, b.init_chain(default_genesis()).await);
            for (i, txs) in blocks.iter().enumerate() {
                let h = i as u64 + 1;
                let (ha, ra) = a.block(h, txs.clone()).await;
                let (hb, rb) = b.block(h, txs.clone()).await;
                assert_eq!(ha, hb, "app hash differs at height {h}");
                assert_eq!(ra.tx_results, rb.tx_results, "results differ at height {h}");
            }
            assert_eq!(state_dump(&a.store), state_dump(&b.store));
        });
    }
}

fn index_dump(store: &stave::store::ChainStore) -> Vec<(Vec<u8>, Vec<u8>)> {
    use stave::store::{Space, StateRead};
    store
        .view()
        .prefix_raw(Space::Index, b"", None, usize::MAX)
        .unwrap()
}

/// Token blocks (several ops per block, an update chain, a delete then a
/// re-create, a stale update that fails) on three stores: two applied once,
/// one with every FinalizeBlock repeated before its Commit. App hashes,
/// results, state and the whole index space (history, postings, counts)
/// agree at every height.
#[tokio::test(flavor = "multi_thread")]
async fn token_blocks_give_the_same_state_and_indexes_everywhere() {
    use inproc::kv::{create, delete, update};
    use stave::keyspaces::kv::token::token_id;
    let id = |tx: &Bytes| token_id(&stave::tx::build::tx_id_of(tx).unwrap(), 0);
    let a1 = signed(1, 0, vec![create(1, "a", "1", &["x", "y"], 1)]);
    let b1 = signed(2, 0, vec![create(2, "b", "1", &["x"], 1)]);
    let a2 = signed(3, 0, vec![update(1, "a", "2", &["y", "z"], 2, id(&a1))]);
    let a3 = signed(3, 1, vec![update(1, "a", "3", &["z"], 3, id(&a2))]);
    let stale = signed(4, 0, vec![update(1, "a", "X", &[], 4, id(&a1))]);
    let b_del = signed(2, 1, vec![delete(2, "b", 2, id(&b1))]);
    let b_again = signed(2, 2, vec![create(2, "b", "2", &["x"], 3)]);
    let blocks = [
        vec![a1, b1],
        vec![a2.clone(), a3.clone(), stale, b_del],
        vec![b_again],
    ];
    let dirs: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    let mut nodes: Vec<Node> = dirs.iter().map(|d| Node::open(d.path())).collect();
    for n in nodes.iter_mut() {
        n.init_chain(default_genesis()).await;
    }
    for (i, txs) in blocks.iter().enumerate() {
        let h = i as u64 + 1;
        let mut seen = Vec::new();
        for (j, n) in nodes.iter_mut().enumerate() {
            let first = if j == 2 {
                Some(n.finalize(h, txs.clone()).await)
            } else {
                None
            };
            let (hash, r) = n.block(h, txs.clone()).await;
            if let Some(first) = first {
                assert_eq!(
                    first, r,
                    "a repeated FinalizeBlock at {h} answers differently"
                );
            }
            let codes: Vec<u32> = r.tx_results.iter().map(|t| t.code.value()).collect();
            seen.push((hash, codes, state_dump(&n.store), index_dump(&n.store)));
        }
        assert_eq!(seen[0], seen[1], "height {h}");
        assert_eq!(seen[0], seen[2], "height {h} (FinalizeBlock repeated)");
        if h == 2 {
            let stale = stave::tx::Code::KvTokenStale.value();
            assert_eq!(seen[0].1, [0, 0, stale, 0], "the stale update fails alone");
        }
    }
    // The history of `a` has every version, each replaced one marked.
    let h = inproc::kv::history(&nodes[0], 1, "a");
    assert_eq!(h.len(), 3);
    assert_eq!((h[0].spent_height, h[0].spent_by), (2, Some(id(&a2))));
    assert_eq!((h[1].spent_height, h[1].spent_by), (2, Some(id(&a3))));
    assert!(h[2].spent_by.is_none() && !h[2].deleted());
}
