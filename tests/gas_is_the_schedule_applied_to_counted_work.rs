//! Gas (issue 19): `gas_used` is the schedule applied to work this test
//! counts itself, a limit one below it fails OUT_OF_GAS changing only the
//! nonce, and CheckTx refuses a limit below the intrinsic cost.
//!
//! The test counts execution work with its own state wrapper around the
//! same committed state ([`Counting`]): every read, byte and listed row, and
//! every write, as the actions make them. It counts intrinsic work from the
//! tx bytes: one signature and one curve point (the signer) per kv tx.

mod inproc;

use std::cell::RefCell;

use bytes::Bytes;
use inproc::kv::{code, kvdb};
use inproc::*;
use proptest::prelude::*;
use stave::gas::GasParams;
use stave::keyspaces::accounts::{AccountsRead, AccountsWrite};
use stave::keyspaces::kv::KvdbOp;
use stave::keyspaces::params::Params;
use stave::keyspaces::TxContext;
use stave::store::{Overlay, Rows, Space, StateRead, StateWrite, StoreError};
use stave::tx::{build::sign_tx_with_gas, Action, Code, DecodedTx};

/// Work as this test counts it.
#[derive(Default, Debug, Clone, Copy)]
struct Counted {
    reads: u64,
    read_bytes: u64,
    rows: u64,
    writes: u64,
    write_bytes: u64,
}

impl Counted {
    fn gas(&self, g: &GasParams) -> u64 {
        self.reads * g.read
            + self.read_bytes * g.read_byte
            + self.rows * g.iter_row
            + self.writes * g.write
            + self.write_bytes * g.write_byte
    }
}

/// A state that counts what passes through it.
struct Counting<S> {
    inner: S,
    c: RefCell<Counted>,
}

impl<S: StateRead> StateRead for Counting<S> {
    fn get_raw(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        let v = self.inner.get_raw(key)?;
        let mut c = self.c.borrow_mut();
        c.reads += 1;
        c.read_bytes += (key.len() + v.as_ref().map_or(0, Vec::len)) as u64;
        Ok(v)
    }
    fn get_index_raw(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        // Index values are not charged (a node may rebuild its index).
        let v = self.inner.get_index_raw(key)?;
        let mut c = self.c.borrow_mut();
        c.reads += 1;
        c.read_bytes += key.len() as u64;
        Ok(v)
    }
    fn prefix_raw(
        &self,
        space: Space,
        prefix: &[u8],
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Rows, StoreError> {
        let rows = self.inner.prefix_raw(space, prefix, after, limit)?;
        let mut c = self.c.borrow_mut();
        c.reads += 1;
        c.rows += rows.len() as u64;
        c.read_bytes += prefix.len() as u64;
        if space == Space::State {
            c.read_bytes += rows
                .iter()
                .map(|(k, v)| (k.len() + v.len()) as u64)
                .sum::<u64>();
        }
        Ok(rows)
    }
}

impl<S: StateWrite> StateWrite for Counting<S> {
    fn put_raw(&mut self, key: Vec<u8>, value: Vec<u8>) {
        self.wrote(key.len() + value.len());
        self.inner.put_raw(key, value);
    }
    fn delete_raw(&mut self, key: Vec<u8>) {
        self.wrote(key.len());
        self.inner.delete_raw(key);
    }
    fn put_index_raw(&mut self, key: Vec<u8>, value: Vec<u8>) {
        self.wrote(key.len() + value.len());
        self.inner.put_index_raw(key, value);
    }
    fn delete_index_raw(&mut self, key: Vec<u8>) {
        self.wrote(key.len());
        self.inner.delete_index_raw(key);
    }
    fn add_index_counter(&mut self, key: Vec<u8>, delta: i64) {
        self.wrote(key.len() + 8);
        self.inner.add_index_counter(key, delta);
    }
}

impl<S> Counting<S> {
    fn wrote(&mut self, bytes: usize) {
        let c = self.c.get_mut();
        c.writes += 1;
        c.write_bytes += bytes as u64;
    }
}

/// Intrinsic gas of a kv tx as this test counts it: base, bytes, one
/// signature and one point (the signer's key).
fn intrinsic(g: &GasParams, raw: &[u8]) -> u64 {
    g.tx_base + raw.len() as u64 * g.tx_byte + g.signature + g.point
}

/// Execution gas of `actions` by `seed` at the node's committed state, with
/// the block's height and time, counted by [`Counting`].
fn execution(node: &Node, height: u64, seed: u8, raw: &[u8], params: &Params) -> Option<u64> {
    let tx = DecodedTx::decode(raw, params).ok()?;
    let time_ns = block_time(height).unix_timestamp_nanos() as i64;
    // The actions run after the nonce step (BRIEF §4), which is not metered.
    let mut base = Overlay::new(node.store.committed());
    let mut account = base
        .account(&tx.signer)
        .unwrap()
        .unwrap_or_else(|| stave::keyspaces::accounts::storage::new_account(height, time_ns));
    account.nonce += 1;
    base.put_account(&tx.signer, &account);
    let mut state = Counting {
        inner: base,
        c: RefCell::new(Counted::default()),
    };
    let mut ctx = TxContext {
        height,
        time_ns,
        signer: key(seed).verifying_key().to_bytes(),
        signing_key: key(seed).verifying_key().to_bytes(),
        tx_id: tx.id,
        chain_id: CHAIN.into(),
        signature: tx.signature,
        action_index: 0,
        params: params.clone(),
        events: Vec::new(),
        unsponsored_others: std::cell::Cell::new(0),
    };
    for (i, a) in tx.actions.iter().enumerate() {
        ctx.action_index = i as u32;
        if stave::app::dispatch(a, &mut state, &mut ctx).is_err() {
            break;
        }
    }
    let c = *state.c.borrow();
    Some(c.gas(&params.gas))
}

/// The signer's stored-bytes count (what an account holds besides its
/// nonce). Before the account exists: its record's own bytes, which the
/// nonce step charges when it creates the account.
fn stored_bytes(node: &Node) -> u64 {
    let signer = key(1).verifying_key().to_bytes();
    let account = node.store.committed().account(&signer).unwrap();
    account.map_or(
        stave::keyspaces::accounts::storage::ACCOUNT_RECORD_BYTES,
        |a| a.stored_bytes,
    )
}

/// A tx whose declared limit is exactly `intrinsic + exec + delta` (the
/// limit's own varint changes the tx's length, so this iterates).
fn with_limit(seed: u8, nonce: u64, actions: &[Action], exec: u64, delta: i64) -> Bytes {
    let g = GasParams::default();
    let mut limit = 0u64;
    for _ in 0..8 {
        let raw = sign_tx_with_gas(&key(seed), CHAIN, nonce, actions.to_vec(), "", limit);
        let want = (intrinsic(&g, &raw) + exec).saturating_add_signed(delta);
        if want == limit {
            return Bytes::from(raw);
        }
        limit = want;
    }
    panic!("limit did not converge");
}

fn action(kind: u8, k: u8, len: usize) -> Action {
    let key = format!("k{k}");
    let value = "v".repeat(len);
    match kind % 6 {
        0 => set(&key, &value),
        1 => del(&key),
        2 => kvdb(
            "db",
            &key,
            KvdbOp::Set {
                value: value.into_bytes(),
                ttl_ms: 0,
            },
        ),
        3 => kvdb(
            "db",
            &key,
            KvdbOp::HSet {
                field: format!("f{len}").into_bytes(),
                value: value.into_bytes(),
            },
        ),
        // Set members are at most 256 bytes.
        4 => {
            let member = "m".repeat(len.clamp(2, 256)).into_bytes();
            kvdb("db", &key, KvdbOp::SAdd(vec![member, b"m".to_vec()]))
        }
        _ => kvdb("db", &key, KvdbOp::Del),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]
    /// For random valid kv and kvdb txs: the reported gas is the schedule
    /// applied to the counted work; a limit one below it fails OUT_OF_GAS
    /// and changes only the nonce.
    #[test]
    fn gas_used_is_the_schedule_applied_to_counted_work(
        spec in proptest::collection::vec(
            proptest::collection::vec((any::<u8>(), 0u8..4, 0usize..1500), 1..4), 1..6)
    ) {
        let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let dir = tempfile::tempdir().unwrap();
            let mut node = Node::open(dir.path());
            node.init_chain(default_genesis()).await;
            let params = Params::default();
            let mut nonce = 0;
            let mut height = 0;
            for txspec in spec {
                let actions: Vec<Action> =
                    txspec.iter().map(|&(kind, k, len)| action(kind, k, len)).collect();
                let probe = sign_tx_with_gas(&key(1), CHAIN, nonce, actions.clone(), "", 50_000_000);
                let exec = execution(&node, height + 1, 1, &probe, &params).unwrap();

                // One below: OUT_OF_GAS, only the nonce changes.
                let short = with_limit(1, nonce, &actions, exec, -1);
                let before = state_dump_but_accounts(&node.store);
                let bytes_before = stored_bytes(&node);
                height += 1;
                let (_, r) = node.block(height, vec![short.clone()]).await;
                let res = &r.tx_results[0];
                assert_eq!(code(&r, 0), Code::OutOfGas.value(), "{}", res.log);
                assert_eq!(res.gas_used, res.gas_wanted, "ran out: used is the limit");
                assert_eq!(state_dump_but_accounts(&node.store), before);
                assert_eq!(stored_bytes(&node), bytes_before, "only the nonce changes");
                nonce += 1;

                // Exactly enough: applied or failed on its own merits, with
                // gas_used = intrinsic + counted execution.
                let probe = sign_tx_with_gas(&key(1), CHAIN, nonce, actions.clone(), "", 50_000_000);
                let exec = execution(&node, height + 1, 1, &probe, &params).unwrap();
                let exact = with_limit(1, nonce, &actions, exec, 0);
                height += 1;
                let (_, r) = node.block(height, vec![exact.clone()]).await;
                let res = &r.tx_results[0];
                assert_ne!(code(&r, 0), Code::OutOfGas.value(), "{}", res.log);
                let want = intrinsic(&params.gas, &exact) + exec;
                assert_eq!(res.gas_used as u64, want, "{}", res.log);
                assert_eq!(res.gas_wanted as u64, want);
                nonce += 1;
            }
        });
    }
}

/// CheckTx (and so the mempool) refuses a limit below the intrinsic cost
/// or above the block limit, with GAS_LIMIT, and reports the declared limit
/// as `gas_wanted` for a tx it admits.
#[tokio::test(flavor = "multi_thread")]
async fn check_tx_refuses_a_limit_below_intrinsic_and_reports_gas_wanted() {
    let dir = tempfile::tempdir().unwrap();
    let mut node = Node::open(dir.path());
    node.init_chain(default_genesis()).await;
    let g = GasParams::default();
    let actions = vec![set("k", "v")];
    let exact_intrinsic = with_limit(1, 0, &actions, 0, 0);
    let r = node
        .check_tx(with_limit(1, 0, &actions, 0, -1), false)
        .await;
    assert_eq!(r.code.value(), Code::GasLimit.value(), "{}", r.log);
    let over = Bytes::from(sign_tx_with_gas(
        &key(1),
        CHAIN,
        0,
        actions.clone(),
        "",
        g.max_block_gas + 1,
    ));
    let r = node.check_tx(over, false).await;
    assert_eq!(r.code.value(), Code::GasLimit.value(), "{}", r.log);
    let r = node.check_tx(exact_intrinsic.clone(), false).await;
    assert!(r.code.is_ok(), "{}", r.log);
    assert_eq!(r.gas_wanted as u64, intrinsic(&g, &exact_intrinsic));
    // In a block, the intrinsic cost alone does not pay for the writes.
    let (_, r) = node.block(1, vec![exact_intrinsic]).await;
    assert_eq!(code(&r, 0), Code::OutOfGas.value());
}
