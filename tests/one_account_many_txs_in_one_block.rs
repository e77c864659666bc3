//! CheckTx keeps each account's pending nonce, so one account can have many
//! txs in one block; Commit rebuilds the view before the recheck.

mod inproc;
use inproc::*;
use stave::tx::Code;

#[tokio::test(flavor = "multi_thread")]
async fn one_account_many_txs_in_one_block() {
    let dir = tempfile::tempdir().unwrap();
    let mut node = Node::open(dir.path());
    node.init_chain(default_genesis()).await;
    let txs: Vec<_> = (0..20u64)
        .map(|n| signed(3, n, vec![set(&format!("k{n}"), "v")]))
        .collect();
    for tx in &txs {
        let r = node.check_tx(tx.clone(), false).await;
        assert!(r.code.is_ok(), "{}", r.log);
    }
    // a duplicate of a pending nonce and a gap are refused
    let dup = node
        .check_tx(signed(3, 5, vec![set("x", "y")]), false)
        .await;
    assert_eq!(dup.code.value(), Code::Nonce.value());
    let gap = node
        .check_tx(signed(3, 25, vec![set("x", "y")]), false)
        .await;
    assert_eq!(gap.code.value(), Code::Nonce.value());

    // the proposal keeps them all, in order, and they all apply
    let proposal = node.prepare_proposal(1, txs[..12].to_vec(), 1 << 20).await;
    assert_eq!(proposal.len(), 12);
    let (_, r) = node.block(1, proposal).await;
    assert!(r.tx_results.iter().all(|t| t.code.is_ok()));

    // after Commit, recheck keeps the 8 still pending and drops the committed ones
    for (n, tx) in txs.iter().enumerate() {
        let r = node.check_tx(tx.clone(), true).await;
        if n < 12 {
            assert_eq!(
                r.code.value(),
                Code::Nonce.value(),
                "committed tx {n} is evicted"
            );
        } else {
            assert!(r.code.is_ok(), "pending tx {n} stays: {}", r.log);
        }
    }
    let next = node
        .check_tx(signed(3, 20, vec![set("z", "1")]), false)
        .await;
    assert!(next.code.is_ok(), "{}", next.log);
}

#[tokio::test(flavor = "multi_thread")]
async fn prepare_proposal_respects_max_tx_bytes_and_drops_bad_nonces() {
    let dir = tempfile::tempdir().unwrap();
    let mut node = Node::open(dir.path());
    node.init_chain(default_genesis()).await;
    let txs: Vec<_> = (0..10u64)
        .map(|n| signed(4, n, vec![set(&format!("k{n}"), "v")]))
        .collect();
    let size = txs[1].len() as i64 + 8; // txs[0] is 2 bytes shorter: nonce 0 is not encoded
    let kept = node.prepare_proposal(1, txs.clone(), size * 4).await;
    assert_eq!(kept, txs[..4].to_vec());
    // a gap: nonce 0,1 then 3 – 3 and everything after it from that account is dropped
    let gapped = vec![txs[0].clone(), txs[1].clone(), txs[3].clone()];
    let kept = node.prepare_proposal(1, gapped, 1 << 20).await;
    assert_eq!(kept, txs[..2].to_vec());
}

#[tokio::test(flavor = "multi_thread")]
async fn concurrent_check_tx_admits_one_accounts_txs_in_nonce_order() {
    use stave::abci::mempool::MempoolService;
    use tendermint::abci::request;
    use tendermint::v0_38::abci::{MempoolRequest, MempoolResponse};
    use tower::{Service, ServiceExt};

    let dir = tempfile::tempdir().unwrap();
    let store = stave::store::ChainStore::open(dir.path()).unwrap();
    let mut app = stave::app::App::load(store, stave::app::AppConfig::default()).unwrap();
    app.init_chain(
        CHAIN,
        0,
        br#"{"params":{"storage":{"pow_base":1,"pow_retention":0}}}"#,
        &[],
    )
    .unwrap();
    let (mut svc, checker) = MempoolService::spawn_with_handle(app.mempool());
    // Half the txs have their signature cached already (fast precheck), half
    // not (slow precheck): the fast ones must still wait for their turn.
    let txs: Vec<_> = (0..64u64)
        .map(|n| signed(7, n, vec![set(&format!("k{n}"), "v")]))
        .collect();
    for (n, tx) in txs.iter().enumerate() {
        if n % 2 == 1 {
            let _ = app.mempool().precheck(tx, stave::app::CheckKind::New);
        }
    }
    let mut pending = Vec::new();
    for tx in &txs {
        let req = MempoolRequest::CheckTx(request::CheckTx {
            tx: tx.clone(),
            kind: request::CheckTxKind::New,
        });
        // call in order without awaiting the responses, as tower-abci does
        pending.push(svc.ready().await.unwrap().call(req));
    }
    let results = futures::future::join_all(pending).await;
    for (n, r) in results.into_iter().enumerate() {
        let MempoolResponse::CheckTx(r) = r.unwrap();
        assert!(r.code.is_ok(), "tx {n} refused: {}", r.log);
    }
    // Close the store before the process exits: RocksDB must not outlive main.
    drop((svc, app));
    checker.join().unwrap();
}
