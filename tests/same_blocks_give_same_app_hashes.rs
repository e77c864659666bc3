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
