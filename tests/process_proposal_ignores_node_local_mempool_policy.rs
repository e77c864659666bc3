//! Issue 27 item 4: ProcessProposal judges consensus rules only. A node
//! whose mempool admits one pending tx per account (`[mempool]
//! max_pending_per_account = 1`, a node-local policy) refuses a second
//! tx of an account at CheckTx, yet accepts a proposal carrying three of
//! that account's txs in sequence, and applies all three; a node with the
//! default policy reaches the same app hash.

mod inproc;

use inproc::*;
use stave::app::AppConfig;
use stave::tx::Code;
use tendermint::abci::response::ProcessProposal;

#[tokio::test(flavor = "multi_thread")]
async fn a_proposal_the_local_mempool_policy_would_refuse_is_accepted() {
    let (strict_dir, plain_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let config = AppConfig {
        max_pending_per_account: 1,
        ..AppConfig::default()
    };
    let mut strict = Node::open_with(strict_dir.path(), config);
    let mut plain = Node::open(plain_dir.path());
    strict.init_chain(default_genesis()).await;
    plain.init_chain(default_genesis()).await;

    let txs: Vec<_> = (0..3)
        .map(|n| signed(1, n, vec![set(&format!("k{n}"), "v")]))
        .collect();
    assert_eq!(strict.check_tx(txs[0].clone(), false).await.code.value(), 0);
    let second = strict.check_tx(txs[1].clone(), false).await;
    assert_eq!(
        second.code.value(),
        Code::MempoolPolicy.value(),
        "the policy is in force: {}",
        second.log
    );

    assert_eq!(
        strict.process_proposal(1, txs.clone()).await,
        ProcessProposal::Accept
    );
    let (hash, r) = strict.block(1, txs.clone()).await;
    assert!(r.tx_results.iter().all(|t| t.code.is_ok()), "{r:?}");
    assert_eq!(
        plain.process_proposal(1, txs.clone()).await,
        ProcessProposal::Accept
    );
    assert_eq!(
        plain.block(1, txs).await.0,
        hash,
        "same app hash as a default node"
    );
}
