//! Issue 19, item 4 (review M4): every byte of state is charged to someone,
//! and Sybil keys buy nothing.
//!
//! - 10,000 fresh, unsponsored keys without valid proof of work, through
//!   CheckTx and placed directly into blocks: every one is refused with
//!   POW_REQUIRED, the state's row count does not move and every app hash
//!   equals a control run of the same blocks without them.
//! - The same keys with valid work, at a low `pow_base`: together they add
//!   at most `unsponsored_block_bytes` of state per block.
//! - A validator sponsors an account, which then needs no work and holds at
//!   most its quota; a withdrawal returns only unused quota; the pool is
//!   bounded; a non-validator is no sponsor.

mod inproc;

use bytes::Bytes;
use ed25519_dalek::SigningKey;
use inproc::governance::{genesis, op_seed, Chain};
use inproc::{set, Node, CHAIN};
use stave::keyspaces::accounts::{pow, AccountsRead, SetAccountQuota, StorageParams};
use stave::store::ChainStore;
use stave::tx::build::sign_tx_with_gas;
use stave::tx::{Action, Code};
use tendermint::abci::response::ProcessProposal;

const POW_REQUIRED: u32 = 20;
const SYBILS: usize = 10_000;
/// Sybil txs per block (each declares `SYBIL_GAS`: 2,500 of them and the
/// operator's tx fit the default `max_block_gas`, 1.2×10⁹).
const PER_BLOCK: usize = 2_500;
const SYBIL_GAS: u64 = 300_000;

fn sybil_key(i: usize) -> SigningKey {
    let mut seed = [0u8; 32];
    seed[..8].copy_from_slice(&(i as u64 + 1).to_be_bytes());
    seed[31] = 0x5b;
    SigningKey::from_bytes(&seed)
}

/// Tx `i` of the Sybil run: a kv write from a fresh key, its envelope's
/// `pow_nonce` chosen to be valid work or (exactly) not.
fn sybil_tx(i: usize, storage: &StorageParams, valid: bool) -> Bytes {
    let action = set(&format!("k{i}"), &"v".repeat(64));
    let raw = sign_tx_with_gas(&sybil_key(i), CHAIN, 0, vec![action], "", SYBIL_GAS);
    let mut tx = <stave::proto::tx::Tx as prost::Message>::decode(raw.as_slice()).unwrap();
    let id: [u8; 32] = sha2::Digest::finalize(sha2::Digest::chain_update(
        <sha2::Sha256 as sha2::Digest>::new(),
        &tx.body_bytes,
    ))
    .into();
    let size = tx.body_bytes.len() as u64;
    tx.pow_nonce = (0u64..)
        .find(|n| pow::meets(storage, &id, size, *n) == valid)
        .unwrap();
    Bytes::from(prost::Message::encode_to_vec(&tx))
}

fn with_storage(storage: serde_json::Value) -> (serde_json::Value, Vec<([u8; 32], u64)>) {
    let (mut state, comet) = genesis(1, serde_json::json!({}));
    state["params"]["storage"] = storage;
    (state, comet)
}

/// Every row of verifiable state: (count, key + value bytes).
fn rows(store: &ChainStore) -> (usize, u64) {
    let all = store.prefix_list(b"", None, usize::MAX).unwrap();
    let bytes = all.iter().map(|(k, v)| (k.len() + v.len()) as u64).sum();
    (all.len(), bytes)
}

/// A legitimate tx of genesis validator 0 (sponsored by its own pool).
fn operator_tx(nonce: u64, height: u64) -> Bytes {
    let op = SigningKey::from_bytes(&[op_seed(0); 32]);
    let action = set(&format!("op{height}"), "x");
    Bytes::from(sign_tx_with_gas(
        &op,
        CHAIN,
        nonce,
        vec![action],
        "",
        5_000_000,
    ))
}

#[tokio::test(flavor = "multi_thread")]
async fn sybil_keys_without_work_change_nothing() {
    let storage = StorageParams::default();
    let params = serde_json::to_value(&storage).unwrap();
    let (dir_a, dir_c) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut attacked = Node::open(dir_a.path());
    let mut control = Node::open(dir_c.path());
    let (state, comet) = with_storage(params);
    let h0 = attacked
        .init_chain_with_validators(state.clone(), comet.clone())
        .await;
    assert_eq!(h0, control.init_chain_with_validators(state, comet).await);

    let sybils: Vec<Bytes> = (0..SYBILS).map(|i| sybil_tx(i, &storage, false)).collect();
    for tx in &sybils {
        let r = attacked.check_tx(tx.clone(), false).await;
        assert_eq!(r.code.value(), POW_REQUIRED, "{}", r.log);
    }
    let before = rows(&attacked.store);
    for (b, chunk) in sybils.chunks(PER_BLOCK).enumerate() {
        let height = b as u64 + 1;
        let mut txs = chunk.to_vec();
        txs.insert(chunk.len() / 2, operator_tx(b as u64, height));
        if b == 0 {
            // A proposer leaves every Sybil tx out; a block of them is refused.
            let kept = attacked
                .prepare_proposal(height, txs.clone(), 4 << 20)
                .await;
            assert_eq!(kept, vec![operator_tx(0, height)]);
            let r = attacked.process_proposal(height, txs.clone()).await;
            assert_eq!(r, tendermint::abci::response::ProcessProposal::Reject);
        }
        let (hash_a, r) = attacked.block(height, txs).await;
        let (hash_c, rc) = control
            .block(height, vec![operator_tx(b as u64, height)])
            .await;
        assert_eq!(
            hash_a, hash_c,
            "height {height}: the Sybil txs changed the app hash"
        );
        assert_eq!(rc.tx_results[0].code.value(), 0, "{}", rc.tx_results[0].log);
        let mut refused = 0;
        for t in &r.tx_results {
            if t.code.value() == POW_REQUIRED {
                refused += 1;
                assert_eq!(t.gas_used, 0);
            } else {
                assert_eq!(t.code.value(), 0, "{}", t.log);
            }
        }
        assert_eq!(refused, chunk.len());
    }
    let after = rows(&attacked.store);
    let control_rows = rows(&control.store);
    assert_eq!(after, control_rows, "attacked and control states differ");
    // Only the operator's sponsored writes (and its account) grew the state.
    assert!(after.0 > before.0);
    for i in (0..SYBILS).step_by(97) {
        let pk = sybil_key(i).verifying_key().to_bytes();
        assert!(attacked.store.view().account(&pk).unwrap().is_none());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn sybil_keys_with_work_share_the_unsponsored_block_budget() {
    let storage = StorageParams {
        pow_base: 16,
        pow_retention: 1,
        unsponsored_block_bytes: 4096,
        ..StorageParams::default()
    };
    let keys = 400;
    let per_block = 100;
    let (dir_a, dir_c) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut attacked = Node::open(dir_a.path());
    let mut control = Node::open(dir_c.path());
    let (state, comet) = with_storage(serde_json::to_value(&storage).unwrap());
    attacked
        .init_chain_with_validators(state.clone(), comet.clone())
        .await;
    control.init_chain_with_validators(state, comet).await;
    let txs: Vec<Bytes> = (0..keys).map(|i| sybil_tx(i, &storage, true)).collect();
    let mut admitted = 0;
    for (b, chunk) in txs.chunks(per_block).enumerate() {
        let height = b as u64 + 1;
        let (_, grown_before) = rows(&attacked.store);
        let (_, control_before) = rows(&control.store);
        let (_, r) = attacked.block(height, chunk.to_vec()).await;
        control.block(height, vec![]).await;
        let grown = rows(&attacked.store).1 - grown_before;
        let base = rows(&control.store).1 - control_before;
        assert!(
            grown.saturating_sub(base) <= storage.unsponsored_block_bytes,
            "block {height}: unsponsored keys added {} bytes, budget {}",
            grown - base,
            storage.unsponsored_block_bytes
        );
        let ok = r.tx_results.iter().filter(|t| t.code.value() == 0).count();
        assert!(ok > 0, "valid work admits some writers");
        assert!(ok < chunk.len(), "the budget stops the rest");
        let view = attacked.store.view();
        for (t, i) in r.tx_results.iter().zip(b * per_block..) {
            let account = view
                .account(&sybil_key(i).verifying_key().to_bytes())
                .unwrap();
            match t.code.value() {
                // applied: the account exists and used its nonce
                0 => assert_eq!(account.map(|a| a.nonce), Some(1)),
                // its writes did not fit: the account exists, only the nonce moved
                c if c == Code::UnsponsoredBudget.value() => {
                    assert_eq!(account.map(|a| a.nonce), Some(1), "{}", t.log)
                }
                // no room for its record: refused at authentication, no account
                c if c == Code::NewAccountBudget.value() => assert!(account.is_none()),
                c => panic!("code {c}: {}", t.log),
            }
        }
        admitted += ok;
    }
    assert!(admitted > 0);
}

/// Review S2: PrepareProposal judged txs without running their actions, so
/// the unsponsored budget it tracked held only new accounts' records, and
/// it proposed new unsponsored accounts that FinalizeBlock then refused
/// with NEW_ACCOUNT_BUDGET. It now runs the actions as FinalizeBlock does:
/// every tx it keeps gets a result in FinalizeBlock other than
/// NEW_ACCOUNT_BUDGET, ProcessProposal accepts the proposal, and the txs it
/// leaves out are exactly the ones FinalizeBlock would have refused.
#[tokio::test(flavor = "multi_thread")]
async fn proposals_leave_out_new_accounts_the_budget_has_no_room_for() {
    let storage = StorageParams {
        pow_base: 16,
        pow_retention: 1,
        unsponsored_block_bytes: 4096,
        ..StorageParams::default()
    };
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (mut proposer, mut syncing) = (Node::open(dir_a.path()), Node::open(dir_b.path()));
    let (state, comet) = with_storage(serde_json::to_value(&storage).unwrap());
    proposer
        .init_chain_with_validators(state.clone(), comet.clone())
        .await;
    syncing.init_chain_with_validators(state, comet).await;
    let txs: Vec<Bytes> = (0..100).map(|i| sybil_tx(i, &storage, true)).collect();

    let kept = proposer.prepare_proposal(1, txs.clone(), 4 << 20).await;
    assert!(
        kept.len() < txs.len(),
        "the budget has no room for them all"
    );
    assert_eq!(
        proposer.process_proposal(1, kept.clone()).await,
        ProcessProposal::Accept
    );
    let (hash, r) = proposer.block(1, kept.clone()).await;
    let refused = Code::NewAccountBudget.value();
    assert!(
        r.tx_results.iter().all(|t| t.code.value() != refused),
        "{:?}",
        r.tx_results
    );
    assert!(r.tx_results.iter().any(|t| t.code.value() == 0));

    // The whole batch in a block (block sync): the txs the proposal kept
    // are the ones not refused, with the same results and state.
    let (synced, all) = syncing.block(1, txs.clone()).await;
    let not_refused: Vec<Bytes> = txs
        .iter()
        .zip(&all.tx_results)
        .filter(|(_, t)| t.code.value() != refused)
        .map(|(tx, _)| tx.clone())
        .collect();
    assert!(not_refused.len() < txs.len(), "some were refused");
    assert_eq!(kept, not_refused);
    let codes = |r: &tendermint::abci::response::FinalizeBlock| -> Vec<u32> {
        r.tx_results
            .iter()
            .map(|t| t.code.value())
            .filter(|c| *c != refused)
            .collect()
    };
    assert_eq!(codes(&r), codes(&all));
    assert_eq!(hash, synced);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sponsored_relayer_cannot_give_fresh_controllers_free_state() {
    // Review B1: KV tokens are charged to their controller, who need not
    // sign the tx. Fresh controllers are unsponsored, so what they are
    // charged draws on the block's unsponsored budget whoever relays.
    let storage = StorageParams {
        unsponsored_block_bytes: 2048,
        ..StorageParams::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let (state, comet) = with_storage(serde_json::to_value(&storage).unwrap());
    let mut chain = Chain::start_with(Node::open(dir.path()), state, comet).await;
    let op = op_seed(0);
    let value = "v".repeat(300);
    let many: Vec<Action> = (1..=8u8)
        .map(|seed| inproc::kv::create(seed, "profile", &value, &["t"], 1))
        .collect();
    let r = chain.send(op, many).await;
    assert_eq!(
        r.tx_results[0].code.value(),
        Code::UnsponsoredBudget.value(),
        "{}",
        r.tx_results[0].log
    );
    let view = chain.node.store.view();
    for seed in 1..=8u8 {
        assert!(view
            .account(&inproc::key(seed).verifying_key().to_bytes())
            .unwrap()
            .is_none());
    }
    drop(view);
    let one = inproc::kv::create(1, "profile", &value, &["t"], 1);
    let r = chain.send(op, vec![one]).await;
    assert_eq!(r.tx_results[0].code.value(), 0, "{}", r.tx_results[0].log);
    let controller = chain
        .node
        .store
        .view()
        .account(&inproc::key(1).verifying_key().to_bytes())
        .unwrap()
        .unwrap();
    assert!(
        controller.stored_bytes > 300 + 96,
        "{}",
        controller.stored_bytes
    );
}

fn quota(account: &SigningKey, amount: u64, group: &str) -> Action {
    Action::SetAccountQuota(SetAccountQuota {
        account: account.verifying_key().to_bytes().to_vec(),
        amount,
        group_id: group.into(),
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn sponsors_move_bounded_budgets_and_take_back_only_unused_quota() {
    let storage = StorageParams {
        validator_budget: 2_000,
        ..StorageParams::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let (state, comet) = with_storage(serde_json::to_value(&storage).unwrap());
    let mut chain = Chain::start_with(Node::open(dir.path()), state, comet).await;
    let op = op_seed(0);
    let alice = SigningKey::from_bytes(&[41; 32]);
    let alice_pk = alice.verifying_key().to_bytes();
    let view = |c: &Chain| c.node.store.view().account(&alice_pk).unwrap();

    // Before any sponsorship, CheckTx asks alice for work; the mempool's
    // view of her (read once per block) must not outlive the block that
    // sponsors her.
    let first = Bytes::from(sign_tx_with_gas(
        &alice,
        CHAIN,
        0,
        vec![set("a", &"x".repeat(500))],
        "",
        5_000_000,
    ));
    let r = chain.node.check_tx(first.clone(), false).await;
    assert_eq!(r.code.value(), POW_REQUIRED, "{}", r.log);

    // A first sponsorship must cover the account's own record.
    let outsider = SigningKey::from_bytes(&[42; 32]);
    assert_eq!(
        chain.code(op, quota(&alice, 50, "")).await,
        Code::QuotaExceeded.value()
    );
    assert!(view(&chain).is_none(), "below the record's own bytes");
    assert_eq!(
        chain.code(op, quota(&alice, 3_000, "")).await,
        Code::SponsorBudget.value()
    );
    assert_eq!(chain.code(op, quota(&alice, 1_000, "")).await, 0);
    let a = view(&chain).unwrap();
    assert_eq!((a.quota, a.nonce), (1_000, 0));

    // Sponsored: no work needed (pow_nonce 0 under the default target),
    // in CheckTx as in the block.
    let r = chain.node.check_tx(first.clone(), false).await;
    assert_eq!(r.code.value(), 0, "{}", r.log);
    let r = chain.raw(vec![first]).await;
    assert_eq!(r.tx_results[0].code.value(), 0, "{}", r.tx_results[0].log);
    let used = view(&chain).unwrap().stored_bytes;
    assert!(used > 500 && used <= 1_000, "{used}");
    // Past the quota: QUOTA_EXCEEDED, nonce consumed, nothing stored.
    let tx = Bytes::from(sign_tx_with_gas(
        &alice,
        CHAIN,
        1,
        vec![set("b", &"x".repeat(600))],
        "",
        5_000_000,
    ));
    let r = chain.raw(vec![tx]).await;
    assert_eq!(r.tx_results[0].code.value(), Code::QuotaExceeded.value());
    assert_eq!(view(&chain).unwrap().stored_bytes, used);
    assert_eq!(view(&chain).unwrap().nonce, 2);

    // Withdrawing to 0 returns only the unused part.
    assert_eq!(chain.code(op, quota(&alice, 0, "")).await, 0);
    let a = view(&chain).unwrap();
    assert_eq!(a.quota, used, "the used quota stays");
    // The pool got the rest back: it can sponsor 2,000 - used elsewhere.
    let bob = SigningKey::from_bytes(&[43; 32]);
    assert_eq!(
        chain.code(op, quota(&bob, 2_000 - used + 1, "")).await,
        Code::SponsorBudget.value()
    );
    assert_eq!(chain.code(op, quota(&bob, 2_000 - used, "")).await, 0);
    // Freed bytes return to alice's quota, and a sponsor may then take them.
    let tx = Bytes::from(sign_tx_with_gas(
        &alice,
        CHAIN,
        2,
        vec![inproc::del("a")],
        "",
        5_000_000,
    ));
    let r = chain.raw(vec![tx]).await;
    assert_eq!(r.tx_results[0].code.value(), 0, "{}", r.tx_results[0].log);
    assert_eq!(chain.code(op, quota(&alice, 0, "")).await, 0);
    let a = view(&chain).unwrap();
    assert_eq!(
        a.quota, a.stored_bytes,
        "only the record's bytes stay sponsored"
    );

    // An unsponsored key cannot sponsor: NOT_SPONSOR (it proves work first).
    let storage_default = StorageParams::default();
    let raw = sign_tx_with_gas(
        &outsider,
        CHAIN,
        0,
        vec![quota(&alice, 500, "")],
        "",
        5_000_000,
    );
    let raw = stave::tx::build::with_pow(&raw, &storage_default, 1 << 26).unwrap();
    let r = chain.raw(vec![Bytes::from(raw)]).await;
    assert_eq!(
        r.tx_results[0].code.value(),
        Code::NotSponsor.value(),
        "{}",
        r.tx_results[0].log
    );
}
