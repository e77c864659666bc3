//! The `peer` target: what other validators and consumers send to a
//! node's listeners, through the pure checks the gRPC handlers run.
//!
//! Input: a mode byte, then bytes read with [`Unstructured`].
//! - **0, raw.** A decoder chosen by a byte, then any bytes: a
//!   `SignedPeerRequest` into [`peer_auth::check`], a `RecordValue`, an
//!   `EntryState` into [`codec::entry_from_pb`], a `RecordMeta` into
//!   [`accept::check_meta`] (and its 128 bytes as [`Metadata`]), a
//!   `SignedAccessRequest` into [`Request::verify`], a `SignedIntent` into
//!   [`Intent::verify`], a `HasContentResponse` into [`has_content::verify`].
//! - **1, 3, 4, 5.** A peer request, a replica record (metadata and value),
//!   an access request, an upload intent or a HasContent answer, built
//!   valid from the input and signed with a fixed key, then its wire
//!   bytes changed by 0–3 edits (flip, cut, insert, delete) and decoded
//!   again. Mode 5 is the HasContent answer.
//! - **2, record values.** A CRDT entry built by 0–8 ops from two replicas,
//!   encoded, then edited.
//!
//! # The oracle
//! Nothing panics; every check gives the same verdict twice. An unchanged
//! signed message is accepted as what was signed; a changed one is refused
//! or accepted as exactly the same request (a record's metadata may differ
//! only outside the signature: TTL and work). Record values round-trip:
//! any domain value's encoding decodes to it, and whatever
//! `RecordValue::decode` accepts is canonical, so `encode` gives back the
//! very bytes (decode refuses any other encoding by design).
//!
//! Not driven: `replica::diff`'s answer checks are `pub(super)`.

use std::collections::BTreeSet;

use arbitrary::{Result as AResult, Unstructured};
use ed25519_dalek::SigningKey;
use prost::Message;
use sha2::{Digest, Sha256};

use super::common::Seed;
use crate::access::request::{sign_bytes, Check, Request};
use crate::access::sign_request;
use crate::content::{sign_intent, Intent, IntentCheck};
use crate::crdt::{Entry, Stamp};
use crate::keyspaces::rights::RightsParams;
use crate::local::{has_content, peer_auth};
use crate::proto::{content as cpb, peer as ppb, replica as rpb, rights::Condition};
use crate::replica::accept::{self, Ctx};
use crate::replica::codec::{self, RecordValue};
use crate::replica::md::{Metadata, FLAG_PLAIN};
use ppb::peer_request::Body;

mod content;
mod replica;
mod seeds;

use content::*;
use replica::*;
pub use seeds::seeds;

const CHAIN: &str = "stave-fuzz";
const NOW: u64 = 1_700_000_000_000;
const ME: [u8; 32] = [9; 32];
const WINDOW: u64 = 60_000;
const HORIZON: u64 = 7 * 86_400_000;
const DBS: [&str; 3] = ["inventory", "notes.v1", "a"];
const TERRITORIES: [&str; 4] = ["GB", "US", "DE", "JP"];

/// Runs the oracle of the mode `data[0]` selects.
pub fn peer_case(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let _ = run(mode, &mut Unstructured::new(rest));
}

/// The case; names the path it judged (the seeds' tests check it).
fn run(mode: u8, u: &mut Unstructured) -> AResult<&'static str> {
    match mode % 6 {
        0 => raw(u),
        1 => peer_request(u),
        2 => record_value(u),
        3 => record(u),
        4 if u.arbitrary()? => access(u),
        4 => intent(u),
        _ => answer(u),
    }
}

fn key(b: u8) -> SigningKey {
    SigningKey::from_bytes(&[b; 32])
}

fn public(k: &SigningKey) -> [u8; 32] {
    k.verifying_key().to_bytes()
}

fn take(u: &mut Unstructured, max: usize) -> AResult<Vec<u8>> {
    let n = u.int_in_range(0..=max)?.min(u.len());
    Ok(u.bytes(n)?.to_vec())
}

fn skew(u: &mut Unstructured, max: u64) -> AResult<u64> {
    Ok(NOW - max + u.int_in_range(0..=2 * max)?)
}

fn x25519(u: &mut Unstructured) -> AResult<Vec<u8>> {
    let s = x25519_dalek::StaticSecret::from(u.arbitrary::<[u8; 32]>()?);
    Ok(x25519_dalek::PublicKey::from(&s).to_bytes().to_vec())
}

/// `m`'s wire bytes after 0–3 edits, whether they changed, and what they
/// decode to.
fn edited<M: Message + Default>(u: &mut Unstructured, m: &M) -> AResult<(bool, Option<M>)> {
    let orig = m.encode_to_vec();
    let mut b = orig.clone();
    for _ in 0..u.int_in_range(0..=3u8)? {
        let i = u.choose_index(b.len() + 1)?;
        match u.int_in_range(0..=3u8)? {
            0 if i < b.len() => b[i] ^= u.int_in_range(1..=255u8)?,
            1 => b.truncate(i),
            2 => b.insert(i, u.arbitrary()?),
            _ if i < b.len() => {
                b.remove(i);
            }
            _ => {}
        }
    }
    Ok((b != orig, M::decode(b.as_slice()).ok()))
}

/// No rotated operator keys: every owner signs its own records.
static SIGNERS: std::collections::BTreeMap<[u8; 32], [u8; 32]> = std::collections::BTreeMap::new();

fn ctx(current: &BTreeSet<[u8; 32]>) -> Ctx<'_> {
    Ctx {
        chain_id: CHAIN,
        now_ms: NOW,
        horizon_ms: HORIZON,
        pow_base: 1,
        current,
        signers: &SIGNERS,
    }
}

fn access_at(rights: &RightsParams, must_name_me: bool) -> Check<'_> {
    Check {
        chain_id: CHAIN,
        me: ME,
        now_ms: NOW,
        window_ms: WINDOW,
        rights,
        must_name_me,
    }
}

fn intent_at() -> IntentCheck<'static> {
    IntentCheck {
        chain_id: CHAIN,
        now_ms: NOW,
        window_ms: WINDOW,
        max_set_size: 8,
    }
}

/// Decodes `b` as `M`; `f` gives the same verdict twice on it.
fn twice<M: Message + Default, T: PartialEq + std::fmt::Debug>(b: &[u8], f: impl Fn(&M) -> T) {
    if let Ok(m) = M::decode(b) {
        assert_eq!(f(&m), f(&m), "the same check twice, another verdict");
    }
}

fn raw(u: &mut Unstructured) -> AResult<&'static str> {
    let which = u.int_in_range(0..=6u8)?;
    let b = u.bytes(u.len())?;
    let current = BTreeSet::from([public(&key(0x21))]);
    let rights = RightsParams::default();
    let text = |e: &dyn std::fmt::Display| e.to_string();
    match which {
        0 => twice(b, |s: &ppb::SignedPeerRequest| {
            peer_auth::check(s, CHAIN, &ME, NOW).map_err(|e| text(&e))
        }),
        1 => {
            if let Ok(v) = RecordValue::decode(b) {
                assert!(
                    v.encode() == b,
                    "RecordValue::decode accepts a non-canonical encoding"
                );
            }
        }
        2 => round_trip_pb(rpb::EntryState::decode(b).ok()),
        3 => twice(b, |m: &rpb::RecordMeta| {
            metadata_order(&m.metadata, b);
            accept::check_meta(m, &ctx(&current))
        }),
        4 => twice(b, |s: &cpb::SignedAccessRequest| {
            Request::verify(s, &access_at(&rights, false)).map_err(|e| text(&e))
        }),
        5 => twice(b, |s: &cpb::SignedIntent| {
            Intent::verify(s, &intent_at()).map_err(|e| text(&e))
        }),
        _ => twice(b, |a: &ppb::HasContentResponse| {
            let req = ppb::SignedPeerRequest::default();
            has_content::verify(&public(&key(5)), &req, b"cid", a).map_err(|e| text(&e))
        }),
    }
    Ok("raw")
}

fn build_peer(u: &mut Unstructured) -> AResult<(ppb::PeerRequest, ppb::SignedPeerRequest)> {
    let cid = take(u, 40)?;
    let body = match u.int_in_range(0..=4u8)? {
        0 => Body::FetchWrappedDek(ppb::FetchWrappedDek { cid }),
        1 => Body::FetchContent(ppb::FetchContent { cid }),
        2 => Body::HasContent(ppb::HasContent { cid }),
        3 => Body::ReplicaCrcDiff(rpb::ReplicaCrcDiff::default()),
        _ => Body::ReplicaSync(rpb::ReplicaSync::default()),
    };
    let req = ppb::PeerRequest {
        chain_id: CHAIN.into(),
        requester: public(&key(0x31)).to_vec(),
        responder: ME.to_vec(),
        timestamp_ms: skew(u, peer_auth::MAX_SKEW_MS)?,
        body: Some(body),
    };
    let signed = peer_auth::sign(&key(0x31), &req);
    Ok((req, signed))
}

fn peer_request(u: &mut Unstructured) -> AResult<&'static str> {
    let (req, signed) = build_peer(u)?;
    let (changed, got) = edited(u, &signed)?;
    let Some(s) = got else {
        return Ok("peer_request_undecodable");
    };
    let r = peer_auth::check(&s, CHAIN, &ME, NOW);
    let again = peer_auth::check(&s, CHAIN, &ME, NOW);
    assert_eq!(
        r.as_ref().ok(),
        again.as_ref().ok(),
        "peer_auth::check twice"
    );
    match r {
        Ok(ok) => assert!(
            ok == (req, public(&key(0x31))),
            "a changed peer request is accepted as another"
        ),
        Err(e) => assert!(changed, "a signed peer request is refused: {e}"),
    }
    Ok(["peer_request_intact", "peer_request_changed"][usize::from(changed)])
}
