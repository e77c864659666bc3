//! A block through FinalizeBlock on the seeded chain ([`super::world`]),
//! run twice and judged by what consensus needs.
//!
//! The input is a block of up to [`MAX_TXS`] txs, shaped with
//! [`arbitrary`]: raw bytes, or txs signed by the world's users and
//! validators (so they reach execution) with a nonce in or out of sequence,
//! a gas limit from tight to over the block's, and actions that are either
//! templated (kv, kvdb and Casbin writes on colliding keys) or any wire
//! `Action` the fuzzer's bytes decode to.
//!
//! # The oracle
//! - **Determinism.** The block runs once on a cold app (reloaded: empty
//!   signature and decode caches, the Casbin and identity-key caches
//!   cleared, one thread)
//!   and once warm (every tx through CheckTx first, three threads, every
//!   input split however small). Both give the same app hash, and every
//!   tx the same outcome: class, code, log, events, `gas_wanted`,
//!   `gas_used`.
//! - **Honest proposals pass.** What PrepareProposal keeps is a
//!   subsequence of the candidates; ProcessProposal accepts it; and
//!   FinalizeBlock authenticates every tx of it.
//! - **Bad bytes change nothing.** A raw tx is never applied.

use arbitrary::{Result as AResult, Unstructured};
use prost::Message;

use super::world::{self, model_id, sign_wire, World, USERS, VALIDATORS};
use crate::app::{BlockOutcome, CheckKind, TxClass};
use crate::keyspaces::casbin::{AddCasbinRule, RemoveCasbinRule};
use crate::keyspaces::kv::{KvDelete, KvSet, KvdbAction, KvdbOp};
use crate::par::Override;
use crate::proto::tx as pb;
use crate::tx::Action;

/// Most txs in one fuzzed block.
pub const MAX_TXS: usize = 12;
/// Most actions in one structured tx.
const MAX_ACTIONS: usize = 4;
/// Gas limits a structured tx may declare: under the intrinsic gas, tight,
/// ordinary, large, and one over `max_block_gas`.
const GAS: [u64; 5] = [1_000, 400_000, 5_000_000, 200_000_000, u64::MAX / 2];

/// One candidate tx: raw bytes, or a signed tx and whether it is raw.
struct Candidate {
    raw: bool,
    bytes: Vec<u8>,
}

/// Runs the oracle on the block `data` describes.
pub fn block_case(data: &[u8]) {
    block_run(data);
}

/// [`block_case`], returning each tx's class (`None`: no block shaped).
fn block_run(data: &[u8]) -> Option<Vec<TxClass>> {
    let mut w = world::world();
    let block = shape(&mut Unstructured::new(data), &w).ok()?;
    let txs: Vec<&[u8]> = block.iter().map(|c| c.bytes.as_slice()).collect();
    let height = world::SETUP_BLOCKS + 1;
    let split = crate::par::Override::hold(1, false);
    let cold = cold_run(&mut w, height, &txs, &split);
    let warm = warm_run(&mut w, height, &txs, &split);
    drop(split);
    assert_eq!(cold.app_hash, warm.app_hash, "app hash, cold vs warm");
    assert_eq!(cold.txs, warm.txs, "tx outcomes, cold vs warm");
    assert_eq!(cold.events, warm.events, "block events, cold vs warm");
    assert_eq!(
        cold.validator_updates, warm.validator_updates,
        "validator updates, cold vs warm"
    );
    for (c, o) in block.iter().zip(&cold.txs) {
        assert!(
            !(c.raw && o.class == TxClass::Applied),
            "a raw tx applied: {}",
            hex::encode(&c.bytes)
        );
    }
    honest_proposal(&w, height, &txs);
    Some(cold.txs.iter().map(|t| t.class).collect())
}

fn cold_run(w: &mut World, height: u64, txs: &[&[u8]], split: &Override) -> BlockOutcome {
    w.reload();
    crate::keyspaces::casbin::cache::clear();
    crate::tx::clear_identity_key_cache();
    split.set(1, false);
    w.app
        .finalize_block(height, world::time_ns(height), txs)
        .expect("FinalizeBlock of the next height never fails")
}

fn warm_run(w: &mut World, height: u64, txs: &[&[u8]], split: &Override) -> BlockOutcome {
    let mempool = w.app.mempool();
    mempool.reset();
    for tx in txs {
        mempool.check(tx, CheckKind::New);
    }
    mempool.reset();
    split.set(3, true);
    w.app
        .finalize_block(height, world::time_ns(height), txs)
        .expect("FinalizeBlock of the next height never fails")
}

/// PrepareProposal's choice is accepted by ProcessProposal, and every tx
/// of it authenticates in FinalizeBlock.
fn honest_proposal(w: &World, height: u64, txs: &[&[u8]]) {
    let t = world::time_ns(height);
    let kept = w
        .app
        .prepare_proposal(height, t, txs, 4 << 20)
        .expect("PrepareProposal runs");
    let mut rest = txs.iter();
    for k in &kept {
        assert!(
            rest.any(|t| t == k),
            "PrepareProposal kept a tx out of order or not offered"
        );
    }
    let verdict = w
        .app
        .process_proposal(height, t, &kept)
        .expect("ProcessProposal runs");
    assert_eq!(
        verdict,
        Ok(()),
        "ProcessProposal refused PrepareProposal's block"
    );
}

fn shape(u: &mut Unstructured<'_>, w: &World) -> AResult<Vec<Candidate>> {
    let n = u.int_in_range(0..=MAX_TXS)?;
    let mut nonces: Vec<(u8, u64)> = Vec::new();
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(candidate(u, w, &mut nonces)?);
    }
    Ok(out)
}

fn candidate(
    u: &mut Unstructured<'_>,
    w: &World,
    nonces: &mut Vec<(u8, u64)>,
) -> AResult<Candidate> {
    if u.ratio(1, 8)? {
        let len = u.int_in_range(0..=512)?;
        return Ok(Candidate {
            raw: true,
            bytes: u.bytes(len)?.to_vec(),
        });
    }
    let seed = *u.choose(&[
        USERS[0],
        USERS[1],
        USERS[2],
        USERS[3],
        VALIDATORS[0],
        VALIDATORS[1],
        9,
    ])?;
    let next = match nonces.iter_mut().find(|(s, _)| *s == seed) {
        Some((_, n)) => n,
        None => {
            nonces.push((seed, w.nonce(seed)));
            &mut nonces.last_mut().expect("just pushed").1
        }
    };
    let nonce = match u.int_in_range(0..=9u8)? {
        0 => next.saturating_add(1),
        1 => next.saturating_sub(1),
        _ => *next,
    };
    if nonce == *next {
        *next += 1;
    }
    let gas = if u.ratio(1, 2)? {
        GAS[2]
    } else {
        *u.choose(&GAS)?
    };
    let count = u.int_in_range(1..=MAX_ACTIONS)?;
    let mut actions = Vec::with_capacity(count);
    for _ in 0..count {
        actions.push(action(u, seed)?);
    }
    Ok(Candidate {
        raw: false,
        bytes: sign_wire(seed, nonce, actions, gas),
    })
}

/// Small key sets, so actions collide on the same state.
const KEYS: [&[u8]; 4] = [b"k1", b"k2", b"set", b"z"];

fn action(u: &mut Unstructured<'_>, seed: u8) -> AResult<pb::Action> {
    let key = u.choose(&KEYS)?.to_vec();
    let a = match u.int_in_range(0..=7u8)? {
        0 | 1 => {
            let len = u.int_in_range(0..=256)?;
            return Ok(pb::Action::decode(u.bytes(len)?).unwrap_or_default());
        }
        2 => Action::KvSet(KvSet {
            key,
            value: u.arbitrary::<Vec<u8>>()?,
        }),
        3 => Action::KvDelete(KvDelete { key }),
        4 => Action::Kvdb(KvdbAction {
            db: "db".into(),
            key,
            op: kvdb_op(u)?,
        }),
        5 => Action::AddCasbinRule(AddCasbinRule {
            model_id: model_id(*u.choose(&USERS)?),
            rule_index: u.int_in_range(0..=4)?,
            ptype: u.choose(&["p", "g", "x"])?.to_string(),
            values: u.arbitrary::<Vec<String>>()?.into_iter().take(4).collect(),
        }),
        6 => Action::RemoveCasbinRule(RemoveCasbinRule {
            model_id: model_id(if u.arbitrary()? { seed } else { USERS[0] }),
            rule_index: u.int_in_range(0..=4)?,
        }),
        _ => return Ok(pb::Action::default()),
    };
    Ok(pb::Action::from(a))
}

fn kvdb_op(u: &mut Unstructured<'_>) -> AResult<KvdbOp> {
    let members = |u: &mut Unstructured<'_>| -> AResult<Vec<Vec<u8>>> {
        let n = u.int_in_range(0..=4)?;
        (0..n).map(|_| Ok(vec![u.int_in_range(0..=7u8)?])).collect()
    };
    Ok(match u.int_in_range(0..=11u8)? {
        0 => KvdbOp::Set {
            value: u.arbitrary()?,
            ttl_ms: *u.choose(&[0, 1, 999, 1_000, 1_001, u64::MAX])?,
        },
        1 => KvdbOp::Del,
        2 => KvdbOp::Expire {
            ttl_ms: *u.choose(&[0, 1, 1_000, u64::MAX])?,
        },
        3 => KvdbOp::HSet {
            field: members(u)?.concat(),
            value: u.arbitrary()?,
        },
        4 => KvdbOp::HDel {
            field: members(u)?.concat(),
        },
        5 => KvdbOp::SAdd(members(u)?),
        6 => KvdbOp::SRem(members(u)?),
        7 => KvdbOp::ZAdd {
            member: members(u)?.concat(),
            score: u.arbitrary()?,
        },
        8 => KvdbOp::ZRem(members(u)?),
        9 => KvdbOp::Push {
            values: members(u)?,
            left: u.arbitrary()?,
        },
        10 => KvdbOp::Pop {
            left: u.arbitrary()?,
        },
        _ => KvdbOp::IncrBy(*u.choose(&[1, -1, i64::MAX, i64::MIN, 0])?),
    })
}

/// Seeds: blocks that decode (through this module's shape) into a mix of
/// templated txs by every signer.
pub fn seeds() -> Vec<(String, Vec<u8>)> {
    let mut seeds = Vec::new();
    for (i, fill) in [0x00u8, 0x11, 0x37, 0x5a, 0x80, 0xa5, 0xc3, 0xff]
        .iter()
        .enumerate()
    {
        let mut bytes = vec![MAX_TXS as u8];
        for j in 0..512u32 {
            bytes.push(fill.wrapping_add((j * (i as u32 + 3)) as u8));
        }
        seeds.push((format!("mix-{i}"), bytes));
    }
    seeds
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz_fixtures::common::Noise;

    /// The shaped blocks reach execution: some txs apply, some fail in
    /// their actions, some are rejected.
    #[test]
    fn seeds_and_noise_reach_every_class() {
        let mut classes = Vec::new();
        let mut x = Noise::new(0x9e37_79b9_7f4a_7c15);
        let noise = (0..200).map(|_| x.bytes(600));
        for data in seeds().into_iter().map(|(_, b)| b).chain(noise) {
            classes.extend(block_run(&data).unwrap_or_default());
        }
        for class in [TxClass::Applied, TxClass::ActionFailed, TxClass::Rejected] {
            let n = classes.iter().filter(|c| **c == class).count();
            assert!(n > 0, "no tx of class {class:?} in {} txs", classes.len());
        }
    }
}
