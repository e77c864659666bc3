//! Review M2 (scaled down): a tx was decoded in CheckTx, in every recheck,
//! and again in PrepareProposal, ProcessProposal and FinalizeBlock, with
//! only signature verdicts cached; its stateless checks (key
//! decompressions, model parsing) were paid five times or more. Now a tx is
//! decoded once per node while it stays in the decode cache, and the
//! results do not change: the same block on a node that never saw the txs
//! gives the same app hash and the same `(code, gas_wanted, gas_used)`.
//!
//! The counts come from the process-wide `stave_decode_cache_total`
//! metric, so this file holds one test.

mod inproc;

use bytes::Bytes;
use inproc::kv::create;
use inproc::*;
use tendermint::abci::response::ProcessProposal;

const TXS: u8 = 24;

fn counts() -> (u64, u64) {
    let c = &stave::metrics::metrics().decode_cache;
    (
        c.with_label_values(&["hit"]).get(),
        c.with_label_values(&["miss"]).get(),
    )
}

/// Txs of 16 KiB or so each: 8 `kv.Set`s of 2 KiB and a KV token create
/// (an embedded signature).
fn txs() -> Vec<Bytes> {
    (1..=TXS)
        .map(|s| {
            let mut actions: Vec<_> = (0..8)
                .map(|i| set(&format!("k{i}"), &"v".repeat(2048)))
                .collect();
            actions.push(create(s, "name", "v", &["t"], 1));
            signed(s, 0, actions)
        })
        .collect()
}

fn results(r: &tendermint::abci::response::FinalizeBlock) -> Vec<(u32, i64, i64)> {
    r.tx_results
        .iter()
        .map(|t| (t.code.value(), t.gas_wanted, t.gas_used))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn each_tx_is_decoded_once_and_results_equal_a_cold_nodes() {
    let (dw, dc) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut warm = Node::open(dw.path());
    warm.init_chain(default_genesis()).await;
    let txs = txs();
    let n = u64::from(TXS);

    let (h0, m0) = counts();
    for tx in &txs {
        let r = warm.check_tx(tx.clone(), false).await;
        assert!(r.code.is_ok(), "{}", r.log);
    }
    assert_eq!(counts(), (h0, m0 + n), "CheckTx decodes each tx once");
    // A block without them; its Commit is followed by the recheck.
    warm.block(1, vec![]).await;
    for tx in &txs {
        let r = warm.check_tx(tx.clone(), true).await;
        assert!(r.code.is_ok(), "{}", r.log);
    }
    let proposal = warm.prepare_proposal(2, txs.clone(), 4 << 20).await;
    assert_eq!(proposal, txs, "every tx fits");
    assert_eq!(
        warm.process_proposal(2, proposal.clone()).await,
        ProcessProposal::Accept
    );
    let (_, r_warm) = warm.block(2, proposal.clone()).await;
    assert_eq!(
        counts(),
        (h0 + 4 * n, m0 + n),
        "recheck, PrepareProposal, ProcessProposal and FinalizeBlock hit the cache"
    );

    let mut cold = Node::open(dc.path());
    cold.init_chain(default_genesis()).await;
    cold.block(1, vec![]).await;
    let (_, r_cold) = cold.block(2, proposal).await;
    assert_eq!(
        counts().1,
        m0 + 2 * n,
        "the cold node decoded each tx itself"
    );
    assert!(
        r_warm.tx_results.iter().all(|t| t.code.is_ok()),
        "{r_warm:?}"
    );
    assert_eq!(results(&r_warm), results(&r_cold));
    assert_eq!(r_warm.app_hash, r_cold.app_hash);

    // Only what the mempool admits is kept: a tx with a bad signature, or
    // a recheck that misses (the scan over the mempool after a Commit),
    // is decoded each time and leaves nothing behind.
    let forged = prost::Message::encode_to_vec(&{
        let mut t: stave::proto::tx::Tx = prost::Message::decode(txs[0].as_ref()).unwrap();
        t.signature[0] ^= 1;
        t
    });
    let (_, m1) = counts();
    for seed in [200, 201] {
        let r = cold.check_tx(Bytes::from(forged.clone()), false).await;
        assert!(r.code.is_err());
        let r = cold
            .check_tx(signed(seed, 0, vec![set("a", "b")]), true)
            .await;
        assert!(r.code.is_ok(), "{}", r.log);
    }
    assert_eq!(counts().1, m1 + 4, "refused and rechecked txs are not kept");
}
