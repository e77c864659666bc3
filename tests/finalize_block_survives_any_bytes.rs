//! FinalizeBlock must survive any bytes (block sync and replay skip
//! ProcessProposal): random bytes and mutated valid txs never panic, never
//! error, and every result carries a code. Mutations that still decode and
//! verify are impossible without the key, so no mutated tx may succeed.

mod inproc;
use bytes::Bytes;
use inproc::*;
use proptest::prelude::*;

fn mutate(tx: &[u8], at: usize, byte: u8, cut: bool) -> Bytes {
    let mut t = tx.to_vec();
    if t.is_empty() {
        return Bytes::new();
    }
    let i = at % t.len();
    if cut {
        t.truncate(i);
    } else {
        t[i] ^= byte.max(1);
    }
    Bytes::from(t)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
    #[test]
    fn finalize_block_survives_any_bytes(
        random in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..300), 0..20),
        mutations in proptest::collection::vec((any::<usize>(), any::<u8>(), any::<bool>()), 0..20),
    ) {
        let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let dir = tempfile::tempdir().unwrap();
            let mut node = Node::open(dir.path());
            let genesis = node.init_chain(default_genesis()).await;
            let valid = signed(1, 0, vec![set("k", "v"), del("k")]);
            let mut txs: Vec<Bytes> = random.into_iter().map(Bytes::from).collect();
            txs.extend(mutations.iter().map(|&(at, b, cut)| mutate(&valid, at, b, cut)));
            let (hash, r) = node.block(1, txs.clone()).await;
            assert_eq!(r.tx_results.len(), txs.len());
            for (tx, res) in txs.iter().zip(&r.tx_results) {
                assert!(!res.code.is_ok(), "a random or mutated tx succeeded: {}", hex::encode(tx));
            }
            assert_eq!(hash, genesis, "nothing changed state");
            // and the node still works
            let (_, ok) = node.block(2, vec![signed(1, 0, vec![set("k", "v")])]).await;
            assert!(ok.tx_results[0].code.is_ok(), "{}", ok.tx_results[0].log);
        });
    }
}
