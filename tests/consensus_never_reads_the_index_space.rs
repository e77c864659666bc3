//! Issue 19 item 5: no state transition reads the index space, so a node
//! whose index was lost (a state-sync restore, a migration, a crash of the
//! rebuild) gives the same app hash and the same `(code, gas_wanted,
//! gas_used)` for every tx as one that kept it. Gas is consensus data
//! (CometBFT hashes it into `LastResultsHash`), so a read of an index row,
//! or a write whose size depends on one, forks the chain.
//!
//! Two nodes run the same blocks. After block 1 (a Casbin model with rules
//! filed under a few subjects, KV tokens with tags) the whole index column
//! family of one of them is deleted. Blocks 2–4 add and remove rules under
//! the same subjects and update and delete the tokens. Before the Casbin
//! index became one blind row per rule, `AddCasbinRule` read its subject's
//! slot list from the index and wrote it back, and the two nodes' gas
//! differed at block 2.

mod inproc;
use inproc::casbin::{add_model, add_rule, model_id, remove_rule, RBAC};
use inproc::kv::{create, delete, live, update};
use inproc::*;

/// `(code, gas_wanted, gas_used)` of every tx.
fn results(r: &tendermint::abci::response::FinalizeBlock) -> Vec<(u32, i64, i64)> {
    r.tx_results
        .iter()
        .map(|t| (t.code.value(), t.gas_wanted, t.gas_used))
        .collect()
}

const OWNER: u8 = 1;
const TOKENS: u8 = 2;

fn first_block() -> Vec<bytes::Bytes> {
    let m = model_id(OWNER, "rbac");
    let mut casbin = vec![add_model(&m, RBAC)];
    for (i, sub) in [(0, "alice"), (1, "alice"), (2, "bob"), (3, "alice")] {
        casbin.push(add_rule(&m, i, "p", &[sub, &format!("song{i}"), "access"]));
    }
    let tokens = (0..4)
        .map(|i| create(TOKENS, &format!("k{i}"), "v", &["shared", "t"], 1))
        .collect();
    vec![signed(OWNER, 0, casbin), signed_large(TOKENS, 0, tokens)]
}

#[tokio::test(flavor = "multi_thread")]
async fn a_node_without_its_index_agrees_on_app_hash_and_gas() {
    let (da, dc) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut a = Node::open(da.path());
    let mut c = Node::open(dc.path());
    a.init_chain(default_genesis()).await;
    c.init_chain(default_genesis()).await;
    let (ha, ra) = a.block(1, first_block()).await;
    let (hc, _) = c.block(1, first_block()).await;
    assert!(ra.tx_results.iter().all(|r| r.code.is_ok()), "{ra:?}");
    assert_eq!(ha, hc);

    let path = c.shutdown();
    let wiped = wipe_index(&path, b"");
    assert!(wiped >= 4 + 4 * 4, "rule and token index rows: {wiped}");
    let mut c = Node::open(&path);

    let m = model_id(OWNER, "rbac");
    let ids: Vec<[u8; 32]> = (0..4)
        .map(|i| live(&a, TOKENS, &format!("k{i}")).unwrap().id)
        .collect();
    let blocks = vec![
        vec![
            signed(
                OWNER,
                1,
                vec![add_rule(&m, 7, "p", &["alice", "x", "access"])],
            ),
            signed(
                TOKENS,
                1,
                vec![
                    update(TOKENS, "k0", "w", &["shared"], 2, ids[0]),
                    delete(TOKENS, "k1", 2, ids[1]),
                ],
            ),
        ],
        vec![signed(
            OWNER,
            2,
            vec![remove_rule(&m, 1), remove_rule(&m, 2)],
        )],
        vec![
            signed(
                OWNER,
                3,
                vec![add_rule(&m, 1, "p", &["bob", "y", "access"])],
            ),
            signed(TOKENS, 2, vec![delete(TOKENS, "k2", 2, ids[2])]),
        ],
    ];
    for (h, txs) in (2u64..).zip(blocks) {
        let (ha, ra) = a.block(h, txs.clone()).await;
        let (hc, rc) = c.block(h, txs).await;
        assert!(
            ra.tx_results.iter().all(|r| r.code.is_ok()),
            "height {h}: {ra:?}"
        );
        assert_eq!(results(&ra), results(&rc), "height {h}: gas read the index");
        assert_eq!(ha, hc, "height {h}: a state transition read the index");
    }
    assert_eq!(state_dump(&a.store), state_dump(&c.store));
}
