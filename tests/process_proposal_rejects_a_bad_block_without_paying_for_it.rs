//! Review m3: ProcessProposal used to decode and verify the whole block
//! before looking at the first tx, and bisected a failed signature batch to
//! attribute the bad signature, about seven checks per signature. Now it
//! stops decoding at the first failure and checks each signature once.
//! Counted with `stave_signature_checks_total`, which counts every signature
//! block verification checks. One test in this file: the counter is global.

mod inproc;
use bytes::Bytes;
use inproc::*;
use prost::Message;
use stave::proto::tx as pb;
use tendermint::abci::response::ProcessProposal;

fn checks() -> u64 {
    stave::metrics::metrics().signature_checks.get()
}

/// One tx per seed in `seeds`, each setting a key named after `tag` and
/// declaring 1M gas, so 250 of them fit `max_block_gas` (1.2×10⁹) with room.
fn block(seeds: std::ops::RangeInclusive<u8>, tag: &str) -> Vec<Bytes> {
    seeds
        .map(|s| signed_with_gas(s, 0, vec![set(&format!("{tag}{s}"), "v")], 1_000_000))
        .collect()
}

fn forge(raw: &Bytes) -> Bytes {
    let mut tx = pb::Tx::decode(raw.as_ref()).unwrap();
    tx.signature[10] ^= 0x40;
    Bytes::from(tx.encode_to_vec())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bad_proposal_costs_one_check_per_signature_and_nothing_after_a_decode_failure() {
    let dir = tempfile::tempdir().unwrap();
    let mut node = Node::open(dir.path());
    node.init_chain(default_genesis()).await;

    // 200 txs, one forged signature in the middle: rejected after exactly
    // 200 checks (the old bisection checked the failed half again and again).
    let mut txs = block(1..=200, "a");
    txs[100] = forge(&txs[100]);
    let before = checks();
    assert_eq!(node.process_proposal(1, txs).await, ProcessProposal::Reject);
    assert_eq!(checks() - before, 200, "one check per signature");

    // An undecodable first tx: rejected before any signature is checked.
    let mut txs = vec![Bytes::from_static(b"\xff\xff\x00garbage")];
    txs.extend(block(1..=250, "b"));
    let before = checks();
    assert_eq!(node.process_proposal(1, txs).await, ProcessProposal::Reject);
    assert_eq!(
        checks() - before,
        0,
        "no signature checked after a decode failure"
    );

    // The same shape without the bad tx is accepted, each signature checked once,
    // and FinalizeBlock then finds every one in the signature cache.
    let txs = block(1..=200, "c");
    let before = checks();
    assert_eq!(
        node.process_proposal(1, txs.clone()).await,
        ProcessProposal::Accept
    );
    assert_eq!(checks() - before, 200);
    let before = checks();
    let (_, r) = node.block(1, txs).await;
    assert!(r.tx_results.iter().all(|t| t.code.is_ok()));
    assert_eq!(checks() - before, 0, "ProcessProposal's checks are cached");
}
