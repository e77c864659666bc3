//! The block gas limit (issue 19): CometBFT v0.38 never checks a proposal's
//! gas, so Stave does. PrepareProposal packs by declared gas, ProcessProposal
//! rejects a block whose summed `gas_limit` exceeds `max_block_gas`, and
//! FinalizeBlock (which block sync runs without ProcessProposal) fails every
//! tx past the limit with BLOCK_GAS_EXCEEDED, identically on two stores.

mod inproc;

use bytes::Bytes;
use inproc::kv::code;
use inproc::*;
use stave::keyspaces::accounts::AccountsRead;
use stave::tx::{build::sign_tx_with_gas, Code};
use tendermint::abci::response::ProcessProposal;

const MAX_BLOCK_GAS: u64 = 3_000_000;
const PER_TX: u64 = 1_000_000;

fn genesis() -> serde_json::Value {
    serde_json::json!({"params": {"gas": {"max_block_gas": MAX_BLOCK_GAS}}})
}

/// One kv set from each of `n` signers, each declaring [`PER_TX`].
fn txs(n: u8) -> Vec<Bytes> {
    (1..=n)
        .map(|seed| {
            let raw = sign_tx_with_gas(&key(seed), CHAIN, 0, vec![set("k", "v")], "", PER_TX);
            Bytes::from(raw)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_block_over_max_block_gas_is_rejected_packed_and_cut_identically() {
    let over = txs(5);
    let (a_dir, b_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut a = Node::open(a_dir.path());
    let mut b = Node::open(b_dir.path());
    assert_eq!(a.init_chain(genesis()).await, b.init_chain(genesis()).await);

    // ProcessProposal: 5 × 1,000,000 declared > 3,000,000.
    assert_eq!(
        a.process_proposal(1, over.clone()).await,
        ProcessProposal::Reject
    );
    assert_eq!(
        a.process_proposal(1, over[..3].to_vec()).await,
        ProcessProposal::Accept
    );

    // PrepareProposal keeps what fits, in order.
    let kept = a.prepare_proposal(1, over.clone(), 1 << 22).await;
    assert_eq!(kept, over[..3].to_vec());

    // FinalizeBlock of the over-limit block (the block-sync path).
    let (ha, ra) = a.block(1, over.clone()).await;
    let (hb, rb) = b.block(1, over.clone()).await;
    assert_eq!(ha, hb);
    assert_eq!(ra.tx_results, rb.tx_results);
    for i in 0..3 {
        assert_eq!(code(&ra, i), Code::Ok.value(), "{}", ra.tx_results[i].log);
        assert_eq!(ra.tx_results[i].gas_wanted as u64, PER_TX);
        assert!(ra.tx_results[i].gas_used > 0);
    }
    for i in 3..5 {
        let r = &ra.tx_results[i];
        assert_eq!(code(&ra, i), Code::BlockGasExceeded.value(), "{}", r.log);
        assert_eq!((r.gas_wanted as u64, r.gas_used), (PER_TX, 0));
        // Nothing changed for its signer, not even the nonce.
        let signer = key(i as u8 + 1).verifying_key().to_bytes();
        assert_eq!(a.store.committed().account(&signer).unwrap(), None);
    }
    assert_eq!(state_dump(&a.store), state_dump(&b.store));
}

/// InitChain sets CometBFT's `max_gas` from the app's `max_block_gas`, and
/// refuses a CometBFT genesis that names another limit.
#[test]
fn init_chain_agrees_with_cometbft_on_max_gas() {
    let app_state = serde_json::to_vec(&genesis()).unwrap();
    let want = MAX_BLOCK_GAS as i64;
    assert_eq!(stave::app::block_max_gas(&app_state, -1).unwrap(), want);
    assert_eq!(stave::app::block_max_gas(&app_state, want).unwrap(), want);
    let e = stave::app::block_max_gas(&app_state, want + 1).unwrap_err();
    assert!(e.to_string().contains("max_gas"), "{e}");
    let default = stave::keyspaces::params::Params::default()
        .gas
        .max_block_gas as i64;
    assert_eq!(stave::app::block_max_gas(b"", -1).unwrap(), default);
}
