//! Fuzz case `kvdb`: sequences of kvdb actions (and the `kv.Set` /
//! `kv.Delete` spellings) over an in-memory state, in blocks whose time
//! advances by chosen steps, each block closed by the end-of-block GC.
//!
//! The harness runs them as the executor does: every action's
//! `check_stateless` first, then `dispatch` inside a per-tx overlay over the
//! block overlay, merged only when every action of the tx succeeds (so a
//! failure leaves the block as it was); then `kv::end_block`, and commit.
//!
//! Oracles, after every committed block: the expiry queue and the score
//! order of live sorted sets equal those rebuilt from the entries and their
//! members (`db::rebuild_index`); every member row belongs to a live entry,
//! and an entry's member count, list span and `bytes` match its rows; no
//! entry due at block time survives the GC, and both GC queues are empty (at
//! this size everything fits one block's GC budget); each owner's
//! `stored_bytes` is its account record plus the `bytes` of its entries.
//! Always: no store fault and no panic; an action converts to its wire arm
//! and back unchanged; the whole sequence run twice from scratch gives the
//! same result codes and byte-identical state.
//!
//! Input: one byte per choice (`Unstructured::int_in_range`): a step kind
//! (0 end the block and advance time, 1-7 a tx of one action, 8 of two, 9 of
//! three), an owner, then per action a database, a key, an op and its
//! operands from small tables (so ops collide), with raw bytes one past the
//! end of each table. At most 32 actions.

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};

use arbitrary::Unstructured;
use prost::Message;

use crate::app::dispatch;
use crate::keyspaces::accounts::storage::ACCOUNT_RECORD_BYTES;
use crate::keyspaces::accounts::AccountsRead;
use crate::keyspaces::index_rows::IndexRows;
use crate::keyspaces::kv::db::{self, now_ms};
use crate::keyspaces::kv::{keys, KvDelete, KvEntry, KvSet, KvType, KvdbAction, KvdbOp};
use crate::keyspaces::params::Params;
use crate::keyspaces::TxContext;
use crate::proto::kv as pb;
use crate::store::{MemState, Overlay, Rows, Space, StateRead};
use crate::tx::{Action, TxError};

const MAX_ACTIONS: usize = 32;
const OWNERS: [[u8; 32]; 3] = [[1; 32], [2; 32], [3; 32]];
const DBS: [&str; 4] = ["default", "a", "b.c-1", "bad/db"];
const KEYS: [&[u8]; 4] = [b"k0", b"k1", b"\x00", b"k0/x"];
const MEMBERS: [&[u8]; 3] = [b"a", b"b", b"\xff"];
const TTLS: [u64; 7] = [0, 1, 1000, 1500, 60_000, i64::MAX as u64, u64::MAX];
const STEPS_MS: [i64; 6] = [0, 1, 999, 1000, 1500, 60_000];
const SCORES: [&str; 6] = [
    "0",
    "1.5",
    "-2",
    "99999999999999999999.999999999999999999",
    "1e3",
    "",
];
const DELTAS: [i64; 5] = [1, -1, 1000, i64::MAX, i64::MIN];
const T0_NS: i64 = 1_700_000_000_000 * 1_000_000;

fn pick(u: &mut Unstructured<'_>, n: usize) -> usize {
    u.int_in_range(0..=n.saturating_sub(1)).unwrap_or(0)
}

/// Up to `max` bytes (`max` < 256), length first.
fn take(u: &mut Unstructured<'_>, max: usize) -> Vec<u8> {
    let n = pick(u, max + 1).min(u.len());
    u.bytes(n).unwrap_or_default().to_vec()
}

#[derive(Debug)]
enum Step {
    Tx(usize, Vec<Action>),
    EndBlock(i64),
}

/// Runs the case on `data`.
pub fn kvdb_case(data: &[u8]) {
    run(data);
}

/// Result codes of the txs (0 = ok), for the tests.
fn run(data: &[u8]) -> Vec<u32> {
    let steps = decode(&mut Unstructured::new(data));
    let p = Params::default();
    let (codes, mem) = execute(&steps, &p);
    let (again, mem2) = execute(&steps, &p);
    assert_eq!(codes, again, "result codes of a second run");
    assert!(mem.state == mem2.state, "state of a second run differs");
    assert!(
        mem.index == mem2.index,
        "index space of a second run differs"
    );
    codes
}

fn decode(u: &mut Unstructured<'_>) -> Vec<Step> {
    let (mut steps, mut actions) = (Vec::new(), 0);
    while !u.is_empty() && actions < MAX_ACTIONS {
        let n = match pick(u, 10) {
            0 => {
                steps.push(Step::EndBlock(STEPS_MS[pick(u, STEPS_MS.len())]));
                continue;
            }
            8 => 2,
            9 => 3,
            _ => 1,
        };
        let owner = pick(u, OWNERS.len());
        steps.push(Step::Tx(owner, (0..n).map(|_| action(u)).collect()));
        actions += n;
    }
    steps
}

fn action(u: &mut Unstructured<'_>) -> Action {
    let db = DBS[pick(u, DBS.len())].to_string();
    let key = match KEYS.get(pick(u, KEYS.len() + 1)) {
        Some(k) => k.to_vec(),
        None => take(u, 8),
    };
    let op = match pick(u, 14) {
        0 => KvdbOp::Set {
            value: value(u),
            ttl_ms: TTLS[pick(u, TTLS.len())],
        },
        1 => KvdbOp::Del,
        2 => KvdbOp::Expire {
            ttl_ms: TTLS[pick(u, TTLS.len())],
        },
        3 => KvdbOp::HSet {
            field: member(u),
            value: value(u),
        },
        4 => KvdbOp::HDel { field: member(u) },
        5 => KvdbOp::SAdd(members(u)),
        6 => KvdbOp::SRem(members(u)),
        7 => KvdbOp::ZAdd {
            member: member(u),
            score: score(u),
        },
        8 => KvdbOp::ZRem(members(u)),
        9 => KvdbOp::Push {
            values: (0..pick(u, 4)).map(|_| value(u)).collect(),
            left: pick(u, 2) == 1,
        },
        10 => KvdbOp::Pop {
            left: pick(u, 2) == 1,
        },
        11 => KvdbOp::IncrBy(DELTAS[pick(u, DELTAS.len())]),
        12 => {
            return Action::KvSet(KvSet {
                key,
                value: value(u),
            })
        }
        _ => return Action::KvDelete(KvDelete { key }),
    };
    Action::Kvdb(KvdbAction { db, key, op })
}

fn value(u: &mut Unstructured<'_>) -> Vec<u8> {
    match pick(u, 4) {
        0 => Vec::new(),
        1 => b"v".to_vec(),
        2 => vec![7; 300],
        _ => take(u, 64),
    }
}

fn member(u: &mut Unstructured<'_>) -> Vec<u8> {
    match MEMBERS.get(pick(u, MEMBERS.len() + 1)) {
        Some(m) => m.to_vec(),
        None => take(u, 8),
    }
}

fn members(u: &mut Unstructured<'_>) -> Vec<Vec<u8>> {
    (0..pick(u, 4)).map(|_| member(u)).collect()
}

fn score(u: &mut Unstructured<'_>) -> String {
    match SCORES.get(pick(u, SCORES.len() + 1)) {
        Some(s) => s.to_string(),
        None => String::from_utf8_lossy(&take(u, 24)).into_owned(),
    }
}

/// Runs the steps from an empty state; returns the codes and the state.
fn execute(steps: &[Step], p: &Params) -> (Vec<u32>, MemState) {
    let mut mem = MemState::default();
    let (mut height, mut time_ns, mut i) = (1u64, T0_NS, 0);
    let mut codes = Vec::new();
    loop {
        let changes = {
            let mut block = Overlay::new(&mem);
            while let Some(Step::Tx(owner, actions)) = steps.get(i) {
                codes.push(run_tx(
                    &mut block,
                    OWNERS[*owner],
                    actions,
                    (height, time_ns),
                    p,
                ));
                i += 1;
            }
            crate::keyspaces::kv::end_block(&mut block, time_ns, p)
                .unwrap_or_else(|e| panic!("store fault in the kvdb GC: {e}"));
            block.into_changes()
        };
        assert!(changes.counters.is_empty(), "kvdb wrote index counters");
        mem.apply_changes(changes);
        check_state(&mem, time_ns);
        match steps.get(i) {
            Some(Step::EndBlock(ms)) => {
                (height, time_ns, i) = (height + 1, time_ns + ms * 1_000_000, i + 1);
            }
            _ => return (codes, mem),
        }
    }
}

/// One tx: stateless checks, then the actions in a tx overlay merged into
/// `block` only if all succeed. Returns its code.
fn run_tx<S: StateRead>(
    block: &mut Overlay<S>,
    signer: [u8; 32],
    actions: &[Action],
    (height, time_ns): (u64, i64),
    p: &Params,
) -> u32 {
    for a in actions {
        if let Action::Kvdb(k) = a {
            let back = KvdbAction::from_kind(k.clone().into_kind());
            assert_eq!(back.as_ref(), Ok(k), "kvdb action -> wire -> action");
        }
        if let Err(e) = a.check_stateless(p) {
            return e.code().value();
        }
    }
    let mut ctx = TxContext {
        height,
        time_ns,
        signer,
        signing_key: signer,
        tx_id: [0; 32],
        chain_id: "stave-fuzz".into(),
        signature: [0; 64],
        action_index: 0,
        params: p.clone(),
        events: Vec::new(),
        unsponsored_others: Cell::new(0),
    };
    let mut tx = Overlay::new(&*block);
    for (i, a) in actions.iter().enumerate() {
        ctx.action_index = i as u32;
        if let Err(e) = dispatch(a, &mut tx, &mut ctx) {
            assert!(!matches!(e, TxError::Store(_)), "store fault in {a:?}: {e}");
            return e.code().value();
        }
    }
    let changes = tx.into_changes();
    block.apply(changes);
    0
}

fn rows(mem: &MemState, space: Space, prefix: &[u8]) -> Rows {
    mem.prefix_raw(space, prefix, None, usize::MAX)
        .unwrap_or_else(|e| panic!("memory state scan: {e}"))
}

fn key_set(rows: Rows) -> BTreeSet<Vec<u8>> {
    rows.into_iter().map(|(k, _)| k).collect()
}

/// The oracles over committed state at block time `time_ns`.
fn check_state(mem: &MemState, time_ns: i64) {
    let now = now_ms(time_ns);
    let (mut expiry, mut live) = (BTreeSet::new(), BTreeSet::new());
    let mut charged: BTreeMap<[u8; 32], u64> = BTreeMap::new();
    for (k, v) in rows(mem, Space::State, keys::kvdb_root()) {
        let e = pb::KvEntry::decode(v.as_slice())
            .ok()
            .and_then(|e| KvEntry::try_from(e).ok());
        let e = e.unwrap_or_else(|| panic!("undecodable kvdb entry at {k:?}"));
        let (owner, db, key) =
            keys::split_kvdb_key(&k).unwrap_or_else(|| panic!("bad kvdb key {k:?}"));
        if e.expire_ms != 0 {
            assert!(
                !e.expired(now),
                "entry {k:?} due at {} survived the GC at {now}",
                e.expire_ms
            );
            expiry.insert(keys::expiry_key(e.expire_ms, &owner, db, key));
        }
        let prefix = keys::member_prefix(&owner, db, key, e.incarnation);
        check_entry(mem, &e, &prefix, key);
        live.insert(prefix);
        *charged.entry(owner).or_default() += e.bytes;
    }
    let queued = key_set(rows(mem, Space::State, keys::expiry_prefix()));
    assert_eq!(queued, expiry, "expiry queue vs entries");
    assert!(
        rows(mem, Space::State, keys::gc_prefix()).is_empty(),
        "orphans left after GC"
    );
    let zgc = rows(mem, Space::Index, keys::zorder_gc_prefix());
    assert!(zgc.is_empty(), "score rows queued after GC");
    for (k, _) in rows(mem, Space::State, keys::members_root()) {
        let (plen, _) = keys::split_member_key(&k).unwrap_or_else(|| panic!("bad member {k:?}"));
        assert!(
            live.contains(&k[..plen]),
            "member row {k:?} of no live entry"
        );
    }
    let mut rebuilt = IndexRows::new();
    db::rebuild_index(mem, &mut rebuilt).unwrap_or_else(|e| panic!("rebuild: {e}"));
    let stored = key_set(rows(mem, Space::Index, keys::zorder_root()));
    assert_eq!(
        stored,
        rebuilt.into_keys().collect(),
        "score order vs rebuild"
    );
    for owner in OWNERS {
        let sum = charged.get(&owner).copied().unwrap_or(0);
        let account = mem
            .account(&owner)
            .unwrap_or_else(|e| panic!("account: {e}"));
        let stored = account.map(|a| a.stored_bytes.wrapping_sub(ACCOUNT_RECORD_BYTES));
        assert_eq!(
            stored.unwrap_or(0),
            sum,
            "stored bytes of {owner:?} vs its entries"
        );
    }
}

/// An entry against its member rows.
fn check_entry(mem: &MemState, e: &KvEntry, prefix: &[u8], key: &[u8]) {
    let members = rows(mem, Space::State, prefix);
    let row_bytes: usize = members
        .iter()
        .map(|(k, v)| k.len() - prefix.len() - 1 + v.len())
        .sum();
    assert_eq!(members.len() as u64, e.len, "member rows vs len of {e:?}");
    let bytes = key.len()
        + match e.kind {
            KvType::Value => e.value.len(),
            KvType::Counter => 8,
            _ => row_bytes,
        };
    assert_eq!(e.bytes, bytes as u64, "bytes of {e:?}");
    assert!(
        !e.kind.is_collection() || e.len > 0,
        "an empty collection is stored: {e:?}"
    );
    if e.kind == KvType::List {
        assert_eq!(e.tail - e.head, e.len as i64, "list span of {e:?}");
    }
}

/// Seeds: op sequences on colliding keys, across blocks (TTL, GC).
pub fn seeds() -> Vec<(String, Vec<u8>)> {
    // step 1 = one-action tx; owner; db; key; op; operands (table indices)
    let tx = |owner: u8, db: u8, key: u8, op: &[u8]| [&[1, owner, db, key][..], op].concat();
    let set = |v: u8, ttl: u8| vec![0, v, ttl];
    let zadd = |m: u8, s: u8| vec![7, m, s];
    let sets = [
        tx(0, 1, 0, &set(1, 2)),       // SET a/k0 "v" ttl 1000
        tx(0, 1, 0, &[3, 0, 1]),       // HSET on a value: WRONGTYPE
        tx(0, 1, 1, &[5, 3, 0, 1, 2]), // SADD a/k1 a b \xff
        tx(0, 1, 1, &[6, 1, 1]),       // SREM b
        vec![0, 3],                    // end block, +1000 ms: k0 expires
        tx(0, 1, 0, &[11, 2]),         // INCRBY 1000 on the expired key
        tx(0, 1, 0, &[11, 3]),         // INCRBY i64::MAX: overflow
    ]
    .concat();
    let zsets = [
        tx(1, 2, 0, &zadd(0, 1)),                 // ZADD b.c-1/k0 a 1.5
        tx(1, 2, 0, &zadd(1, 2)),                 // ZADD b -2
        tx(1, 2, 0, &zadd(0, 0)),                 // ZADD a 0 (moves a)
        tx(1, 2, 0, &[8, 1, 1]),                  // ZREM b
        vec![8, 1, 2, 0, 7, 0, 0, 2, 0, 7, 1, 4], // ZADD then ZADD "1e3": the tx fails
        tx(1, 2, 0, &[2, 2]),                     // EXPIRE 1000
        vec![0, 4],                               // +1500 ms: the set expires, GC
        tx(1, 2, 0, &[1]),                        // DEL: not found
    ]
    .concat();
    let lists = [
        tx(2, 0, 2, &[9, 3, 1, 2, 0, 1]), // LPUSH v, 300 bytes, empty
        tx(2, 0, 2, &[10, 0]),            // RPOP
        tx(2, 0, 2, &[10, 1]),            // LPOP
        tx(2, 0, 2, &[0, 1, 0]),          // SET over the list: orphans
        vec![0, 0],                       // end block: GC the members
        tx(2, 0, 3, &[12, 1]),            // kv.Set k0/x
        tx(2, 0, 3, &[13]),               // kv.Delete k0/x
        tx(2, 3, 0, &[1]),                // bad db name
    ]
    .concat();
    vec![
        ("sets_and_counters".into(), sets),
        ("sorted_sets".into(), zsets),
        ("lists".into(), lists),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz_fixtures::common::Noise;

    #[test]
    fn seeds_reach_deep_and_pseudo_random_inputs_pass() {
        for (name, s) in seeds() {
            let codes = run(&s);
            let ok = codes.iter().filter(|c| **c == 0).count();
            assert!(ok >= 3 && ok < codes.len(), "{name}: codes {codes:?}");
        }
        let mut x = Noise::new(0x853c_49e6_748f_ea9b);
        for n in 0..2000 {
            kvdb_case(&x.bytes(n % 200));
        }
    }
}
