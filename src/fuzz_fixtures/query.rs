//! ABCI Query over the seeded chain ([`super::world`]): any path, data,
//! height and `prove` flag through [`crate::abci::query::query`], the
//! function CometBFT's `abci_query` reaches.
//!
//! Paths are shaped with [`arbitrary`]: a known first segment and up to
//! four more, each a real key of the world (a user's public key, a model
//! name, a kv key in hex, a number) or any string; or a path that is any
//! string at all.
//!
//! # The oracle
//! - No panic, and the same answer twice.
//! - A bad path or height is a client error (`INVALID_ARGUMENT`,
//!   `NOT_FOUND`), never an internal one (`NOT_READY`).
//! - An answer with `prove` carries one proof that holds against the app
//!   hash of the height it names, of membership with the value returned
//!   or of absence: ICS23, or jmt's own where ICS23 cannot hold (an empty
//!   value, the key's or a neighbour's). This target found that ABCI
//!   Query sent ICS23 proofs that could not hold next to empty values.

use arbitrary::{Result as AResult, Unstructured};
use prost::Message;
use tendermint::abci::request;

use super::world::{self, pubkey, SETUP_BLOCKS, USERS};
use crate::abci::query::{query, JMT_PROOF_TYPE, PROOF_TYPE};
use crate::keyspaces::accounts::account_key;
use crate::keyspaces::kv::{keys::kvdb_key, kv_key};
use crate::proof::{ics23_holds, jmt_holds};
use crate::tx::Code;

const FIRST: [&str; 16] = [
    "store",
    "accounts",
    "kv",
    "kvdb",
    "kvtok",
    "casbin",
    "uploads",
    "deks",
    "releases",
    "policies",
    "entitlements",
    "grants",
    "validators",
    "groups",
    "takedowns",
    "flags",
];

/// Runs the oracle on the query `data` describes.
pub fn query_case(data: &[u8]) {
    query_run(data);
}

/// [`query_case`], returning the answer's code and whether it was proven.
fn query_run(data: &[u8]) -> Option<(Code, bool)> {
    let w = world::world();
    let q = shape(&mut Unstructured::new(data)).ok()?;
    let a = query(&w.store, &q);
    let b = query(&w.store, &q);
    assert_eq!(a, b, "the same query twice");
    let code = Code::from_value(a.code.value()).expect("a stable code");
    assert!(
        matches!(code, Code::Ok | Code::InvalidArgument | Code::NotFound),
        "query {:?} at {} answered {code:?}: {}",
        q.path,
        q.height,
        a.log
    );
    if code == Code::Ok && q.prove {
        proven(&w.store, &a);
    }
    Some((code, q.prove && a.log == "exists"))
}

fn proven(store: &crate::store::ChainStore, a: &tendermint::abci::response::Query) {
    let ops = a.proof.as_ref().expect("a proven answer carries a proof");
    assert_eq!(ops.ops.len(), 1, "one proof op");
    let op = ops.ops.first().expect("one proof op");
    let root = store
        .root_at(a.height.value())
        .expect("the store reads")
        .expect("the answered height has a root");
    let value = (a.log == "exists").then_some(a.value.as_ref());
    let holds = match op.field_type.as_str() {
        PROOF_TYPE => {
            let cp = ics23::CommitmentProof::decode(op.data.as_slice()).expect("the proof decodes");
            ics23_holds(&cp, &a.key, value, &root)
        }
        JMT_PROOF_TYPE => {
            assert!(
                ics23_cannot_carry(store, &a.key, a.height.value(), value),
                "a jmt proof of {} at {} where ICS23 could hold",
                hex::encode(&a.key),
                a.height
            );
            jmt_holds(&op.data, &a.key, value, &root).expect("the proof decodes")
        }
        other => panic!("unknown proof op type {other:?}"),
    };
    assert!(
        holds,
        "the {} proof of {} at {} does not hold",
        op.field_type,
        hex::encode(&a.key),
        a.height
    );
}

/// The cases ICS23 cannot prove: an empty key or value, or an empty
/// neighbour in a proof of absence.
fn ics23_cannot_carry(
    store: &crate::store::ChainStore,
    key: &[u8],
    height: u64,
    value: Option<&[u8]>,
) -> bool {
    use ics23::commitment_proof::Proof;
    if key.is_empty() || value.is_some_and(<[u8]>::is_empty) {
        return true;
    }
    let (_, cp) = store
        .prove_in(&store.view(), key, height)
        .expect("the store proves");
    let empty = |e: &Option<ics23::ExistenceProof>| e.as_ref().is_some_and(|e| e.value.is_empty());
    match cp.proof {
        Some(Proof::Nonexist(n)) => empty(&n.left) || empty(&n.right),
        _ => false,
    }
}

fn segment(u: &mut Unstructured<'_>) -> AResult<String> {
    Ok(match u.int_in_range(0..=7u8)? {
        0 => hex::encode(pubkey(*u.choose(&USERS)?)),
        1 => hex::encode(*u.choose(&[&b"k1"[..], b"set", b"z", b"name"])?),
        2 => u
            .choose(&["db", "roles", "token", "tuple", "models", "rules"])?
            .to_string(),
        3 => u.int_in_range(0..=5u32)?.to_string(),
        4 => hex::encode(u.bytes(32)?),
        5 => hex::encode(world::PID),
        _ => u.arbitrary::<String>()?,
    })
}

/// A state key near the world's: a user's account, kv or kvdb key (built
/// by the keyspaces' own functions), cut short or extended at random.
fn world_key(u: &mut Unstructured<'_>) -> AResult<Vec<u8>> {
    let user = pubkey(*u.choose(&USERS)?);
    let name = *u.choose(&[&b"k1"[..], b"set", b"z", b"name", b""])?;
    let mut k = match u.int_in_range(0..=2u8)? {
        0 => account_key(&user),
        1 => kv_key(&user, name),
        _ => kvdb_key(&user, u.choose(&["db", "roles", "default"])?, name),
    };
    match u.int_in_range(0..=2u8)? {
        0 => {}
        1 => k.truncate(u.choose_index(k.len() + 1)?),
        _ => {
            let n = u.int_in_range(0..=8)?;
            k.extend_from_slice(u.bytes(n)?);
        }
    }
    Ok(k)
}

fn shape(u: &mut Unstructured<'_>) -> AResult<request::Query> {
    let path = if u.ratio(1, 8)? {
        u.arbitrary::<String>()?
    } else {
        let mut p = format!("/{}", u.choose(&FIRST)?);
        for _ in 0..u.int_in_range(0..=4)? {
            p.push('/');
            p.push_str(&segment(u)?);
        }
        p
    };
    let data = if u.arbitrary()? {
        world_key(u)?
    } else {
        u.arbitrary::<Vec<u8>>()?
    };
    let height = u.int_in_range(0..=SETUP_BLOCKS + 2)?;
    Ok(request::Query {
        data: data.into(),
        path,
        height: u32::try_from(height).unwrap_or(0).into(),
        prove: u.arbitrary()?,
    })
}

/// Seeds: inputs that shape into each first segment, proven and not.
pub fn seeds() -> Vec<(String, Vec<u8>)> {
    (0..FIRST.len() as u8)
        .map(|i| {
            let mut bytes = vec![0x01, i, 3, 0, 0, 1, 0, 3, 2, 2, 1];
            bytes.extend((0..48u8).map(|j| j.wrapping_mul(i + 1)));
            (format!("path-{}", FIRST[usize::from(i)]), bytes)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz_fixtures::common::Noise;

    /// Seeds and noise reach answers of every kind, proven values among them.
    #[test]
    fn seeds_and_noise_reach_values_and_refusals() {
        let mut x = Noise::new(0x2545_f491_4f6c_dd1d);
        let noise = (0..3000).map(|_| x.bytes(80));
        let answers: Vec<_> = seeds()
            .into_iter()
            .map(|(_, b)| b)
            .chain(noise)
            .filter_map(|d| query_run(&d))
            .collect();
        for code in [Code::Ok, Code::InvalidArgument, Code::NotFound] {
            assert!(answers.iter().any(|(c, _)| *c == code), "no {code:?}");
        }
        assert!(answers.iter().any(|(_, p)| *p), "no proven existing value");
    }
}
