//! Helpers for kv token and kvdb scenarios on the in-process node.

use stave::keyspaces::kv::db::{now_ms, query as dbq, At};
use stave::keyspaces::kv::token::{client, query, StoredToken};
use stave::keyspaces::kv::{KvdbAction, KvdbOp};
use stave::tx::Action;
use tendermint::abci::response;

use super::{key, Node, CHAIN};

/// The protocol id every scenario uses.
pub const PID: &str = "[1,\"profile data\"]";

pub fn tags(t: &[&str]) -> String {
    client::tags_json(t)
}

pub fn create(seed: u8, k: &str, v: &str, t: &[&str], generation: u64) -> Action {
    Action::KvTokenCreate(client::create(
        &key(seed),
        CHAIN,
        PID,
        k,
        v.as_bytes(),
        &tags(t),
        generation,
    ))
}

pub fn update(
    seed: u8,
    k: &str,
    v: &str,
    t: &[&str],
    generation: u64,
    replaces: [u8; 32],
) -> Action {
    Action::KvTokenUpdate(client::update(
        &key(seed),
        CHAIN,
        PID,
        k,
        v.as_bytes(),
        &tags(t),
        generation,
        replaces,
    ))
}

pub fn delete(seed: u8, k: &str, generation: u64, id: [u8; 32]) -> Action {
    Action::KvTokenDelete(client::delete(&key(seed), CHAIN, PID, k, generation, id))
}

pub fn controller(seed: u8) -> String {
    client::controller_hex(&key(seed))
}

/// The live token of (PID, k, controller(seed)).
pub fn live(node: &Node, seed: u8, k: &str) -> Option<StoredToken> {
    query::live_token(&node.store.view(), PID, k, &controller(seed)).unwrap()
}

pub fn history(node: &Node, seed: u8, k: &str) -> Vec<StoredToken> {
    query::history(&node.store.view(), PID, k, &controller(seed), 0, 1000)
        .unwrap()
        .0
}

pub fn lookup(node: &Node, q: &query::Lookup) -> Vec<StoredToken> {
    query::lookup(&node.store.view(), q).unwrap()
}

pub fn values(ts: &[StoredToken]) -> Vec<String> {
    ts.iter()
        .map(|t| String::from_utf8_lossy(&t.token.value).into_owned())
        .collect()
}

/// Code of tx `i` of a block.
pub fn code(r: &response::FinalizeBlock, i: usize) -> u32 {
    r.tx_results[i].code.value()
}

pub fn kvdb(db: &str, k: &str, op: KvdbOp) -> Action {
    Action::Kvdb(KvdbAction {
        db: db.into(),
        key: k.as_bytes().to_vec(),
        op,
    })
}

/// Block time of the last commit, in ms (what queries read at).
pub fn committed_ms(node: &Node) -> i64 {
    now_ms(node.store.commit_info().unwrap().block_time_ns().unwrap())
}

pub fn at<'a>(owner: &'a [u8; 32], db: &'a str, k: &'a str) -> At<'a> {
    At {
        owner,
        db,
        key: k.as_bytes(),
    }
}

pub fn owner(seed: u8) -> [u8; 32] {
    key(seed).verifying_key().to_bytes()
}

pub fn ttl(node: &Node, seed: u8, db: &str, k: &str) -> i64 {
    let o = owner(seed);
    dbq::ttl(&node.store.view(), at(&o, db, k), committed_ms(node)).unwrap()
}
