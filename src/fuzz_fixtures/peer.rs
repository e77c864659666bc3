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

use super::snapshot::Seed;
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

fn ctx(current: &BTreeSet<[u8; 32]>) -> Ctx<'_> {
    Ctx {
        chain_id: CHAIN,
        now_ms: NOW,
        horizon_ms: HORIZON,
        pow_base: 1,
        current,
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

/// A decoded entry state that converts: its domain entry round-trips.
fn round_trip_pb(s: Option<rpb::EntryState>) {
    if let Some(Ok(e)) = s.map(codec::entry_from_pb) {
        assert_eq!(
            codec::entry_from_pb(codec::entry_to_pb(&e)),
            Ok(e),
            "entry round trip"
        );
    }
}

/// 128 bytes of metadata round-trip; `newer_than` is a strict total order.
fn metadata_order(a: &[u8], b: &[u8]) {
    let (Ok(x), Ok(y)) = (
        Metadata::from_bytes(a),
        Metadata::from_bytes(b.get(..128).unwrap_or(b)),
    ) else {
        return;
    };
    assert_eq!(x.to_bytes().as_slice(), a, "metadata bytes round trip");
    let order = (x.newer_than(&y), y.newer_than(&x));
    assert!(
        if x == y {
            order == (false, false)
        } else {
            order.0 != order.1
        },
        "newer_than is not a strict total order"
    );
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

/// An entry by 0–8 ops stamped by `replicas`, at times up to `max_ms`.
fn entry(u: &mut Unstructured, replicas: &[[u8; 32]], max_ms: u64) -> AResult<Entry> {
    let mut e = Entry::default();
    for _ in 0..u.int_in_range(0..=8u8)? {
        let r = *u.choose(replicas)?;
        let s = Stamp::new(max_ms - u.int_in_range(0..=50)?, r);
        let k = take(u, 3)?;
        let _ = match u.int_in_range(0..=10u8)? {
            0 => {
                let at = u.arbitrary::<bool>()?.then_some(max_ms + 1);
                e.set(s, k, at);
                Ok(())
            }
            1 => {
                e.set_list(s, vec![k, take(u, 3)?]);
                Ok(())
            }
            2 => {
                e.del(s);
                Ok(())
            }
            3 => e.hset(s, k, take(u, 3)?),
            4 => e.hdel(s, &k).map(|_| ()),
            5 => e.sadd(s, &[k]).map(|_| ()),
            6 => e.srem(s, &[k]).map(|_| ()),
            7 => e.zadd(s, k, u.arbitrary()?),
            8 => e.zrem(s, &[k]).map(|_| ()),
            9 => e.incr_by(s, u.arbitrary()?).map(|_| ()),
            _ => {
                e.expire(s, Some(max_ms + 1));
                Ok(())
            }
        };
    }
    Ok(e)
}

fn record_value(u: &mut Unstructured) -> AResult<&'static str> {
    let owner = u.arbitrary()?;
    let db = u.choose(&DBS)?.to_string();
    let key = [vec![b'k'], take(u, 8)?].concat();
    let entry = entry(u, &[owner, [7; 32]], NOW)?;
    round_trip_pb(Some(codec::entry_to_pb(&entry)));
    let v = RecordValue {
        owner,
        db,
        key,
        entry,
    };
    let b = v.encode();
    assert_eq!(
        RecordValue::decode(&b),
        Ok(v.clone()),
        "a record value's encoding does not decode to it"
    );
    let (changed, got) = edited(u, &codec::entry_to_pb(&v.entry))?;
    round_trip_pb(got);
    let (_, pb) = edited(
        u,
        &rpb::RecordValue::decode(b.as_slice()).unwrap_or_default(),
    )?;
    let bytes = pb.map(|p| p.encode_to_vec()).unwrap_or_default();
    if let Ok(w) = RecordValue::decode(&bytes) {
        assert!(
            w.encode() == bytes,
            "RecordValue::decode accepts a non-canonical encoding"
        );
    }
    Ok(["record_value", "record_value_changed"][usize::from(changed)])
}

/// A record signed by its owner with its work done: the wire metadata, its
/// value and the value's bytes.
fn build_record(u: &mut Unstructured) -> AResult<(rpb::RecordMeta, RecordValue, Vec<u8>)> {
    let k = key(0x21);
    let owner = public(&k);
    let (db, key) = (
        u.choose(&DBS)?.to_string(),
        [vec![b'k'], take(u, 8)?].concat(),
    );
    let ts = NOW - u.int_in_range(0..=1_000)?;
    let v = RecordValue {
        owner,
        db,
        key,
        entry: entry(u, &[owner], ts)?,
    };
    let (value, datakey) = (v.encode(), v.datakey());
    let ttl = u.int_in_range(0..=1u32)?;
    let ttl_begin = if ttl == 0 {
        NOW + 1 + u.int_in_range(0..=1_000)?
    } else {
        ts
    };
    let hash = Sha256::digest(&value).into();
    let size = value.len() as u32;
    let mut md = Metadata {
        ts,
        flags: FLAG_PLAIN,
        size,
        hash,
        sig: [0; 64],
        ttl_begin,
        ttl,
        pow_nonce: 0,
    };
    md.sign(&k, CHAIN, &datakey);
    assert!(
        crate::replica::pow::solve(&mut md, 1, 0, 1 << 20),
        "no work found"
    );
    let meta = rpb::RecordMeta {
        owner: owner.to_vec(),
        datakey: datakey.to_vec(),
        metadata: md.to_bytes().to_vec(),
    };
    Ok((meta, v, value))
}

fn record(u: &mut Unstructured) -> AResult<&'static str> {
    let (meta, v, value) = build_record(u)?;
    let current = BTreeSet::from([public(&key(0x21)), public(&key(0x22))]);
    let c = match accept::check_meta(&meta, &ctx(&current)) {
        Ok(c) => c,
        Err(e) => panic!("a signed record is refused: {e}"),
    };
    assert_eq!(
        accept::check_value(&c, &value),
        Ok(v.clone()),
        "a signed record's value is refused"
    );
    let (changed, got) = edited(u, &meta)?;
    if let Some(m) = got {
        let r = accept::check_meta(&m, &ctx(&current));
        assert_eq!(
            r,
            accept::check_meta(&m, &ctx(&current)),
            "check_meta twice"
        );
        if let Ok(d) = r {
            let signed = |m: &Metadata| (m.ts, m.flags, m.size, m.hash);
            let same =
                d.owner == c.owner && d.datakey == c.datakey && signed(&d.md) == signed(&c.md);
            assert!(same, "changed metadata is accepted as another record");
        }
    }
    let (value_changed, w) = edited(
        u,
        &rpb::RecordValue::decode(value.as_slice()).unwrap_or_default(),
    )?;
    if let Some(w) = w.map(|w| w.encode_to_vec()) {
        let r = accept::check_value(&c, &w);
        assert!(
            r.is_err() || (w == value && r == Ok(v)),
            "a changed value is accepted"
        );
    }
    Ok(["record_intact", "record_changed"][usize::from(changed || value_changed)])
}

fn build_access(u: &mut Unstructured) -> AResult<(cpb::SignedAccessRequest, bool)> {
    let must_name_me = u.arbitrary()?;
    let mut context = Vec::new();
    for i in 0..u.int_in_range(0..=3u8)? {
        let (k, v) = (take(u, 3)?, take(u, 4)?);
        context.push(Condition {
            key: format!("{i}{}", hex::encode(k)),
            value: hex::encode(v),
        });
    }
    let req = cpb::AccessRequest {
        chain_id: CHAIN.into(),
        timestamp_ms: skew(u, WINDOW)?,
        nonce: u.bytes(16).map_or_else(|_| vec![0; 16], <[u8]>::to_vec),
        cid: [vec![1], take(u, 40)?].concat(),
        consumer_pubkey: Vec::new(),
        consumer_x25519: x25519(u)?,
        validator: if must_name_me || u.arbitrary()? {
            ME.to_vec()
        } else {
            Vec::new()
        },
        territory: u.choose(&TERRITORIES)?.to_string(),
        context,
        use_type: u.int_in_range(0..=6)?,
    };
    Ok((sign_request(&key(0x41), req), must_name_me))
}

fn access(u: &mut Unstructured) -> AResult<&'static str> {
    let (signed, must_name_me) = build_access(u)?;
    let rights = RightsParams::default();
    let at = access_at(&rights, must_name_me);
    let want = Request::verify(&signed, &at)
        .unwrap_or_else(|e| panic!("a signed access request is refused: {e}"));
    let bytes = signed.request.as_ref().map(sign_bytes).unwrap_or_default();
    let hash: [u8; 32] = Sha256::digest(bytes).into();
    assert!(
        want.consumer == public(&key(0x41)) && want.hash == hash,
        "an access request's signer or hash"
    );
    let (changed, got) = edited(u, &signed)?;
    if let Some(r) = got.map(|s| Request::verify(&s, &at)) {
        assert!(
            r.ok().is_none_or(|r| r == want),
            "a changed access request is accepted as another"
        );
    }
    Ok(["access_intact", "access_changed"][usize::from(changed)])
}

/// 1–3 distinct validator keys.
fn key_set(u: &mut Unstructured) -> AResult<Vec<Vec<u8>>> {
    Ok((1..=u.int_in_range(1..=3u8)?)
        .map(|i| vec![i; 32])
        .collect())
}

fn build_intent(u: &mut Unstructured) -> AResult<cpb::SignedIntent> {
    let i = cpb::UploadIntent {
        chain_id: CHAIN.into(),
        timestamp_ms: skew(u, WINDOW)?,
        nonce: u.bytes(16).map_or_else(|_| vec![0; 16], <[u8]>::to_vec),
        uploader_pubkey: Vec::new(),
        processing_validator: ME.to_vec(),
        replication_set: key_set(u)?,
        dek_holder_set: key_set(u)?,
        group_id: hex::encode(take(u, 4)?),
        recovery_x25519: x25519(u)?,
        audio_bytes: u.int_in_range(1..=u64::MAX)?,
        art_bytes: (0..u.int_in_range(0..=2u8)?)
            .map(|n| u64::from(n) + 1)
            .collect(),
    };
    Ok(sign_intent(&key(0x51), i))
}

fn intent(u: &mut Unstructured) -> AResult<&'static str> {
    let signed = build_intent(u)?;
    let want = Intent::verify(&signed, &intent_at())
        .unwrap_or_else(|e| panic!("a signed intent is refused: {e}"));
    let (changed, got) = edited(u, &signed)?;
    if let Some(r) = got.map(|s| Intent::verify(&s, &intent_at())) {
        assert!(
            r.ok().is_none_or(|r| r == want),
            "a changed intent is accepted as another"
        );
    }
    Ok(["intent_intact", "intent_changed"][usize::from(changed)])
}

/// A HasContent answer by key 5, the request it answers, its cid and size.
fn build_answer(
    u: &mut Unstructured,
) -> AResult<(
    ppb::HasContentResponse,
    ppb::SignedPeerRequest,
    Vec<u8>,
    Option<u64>,
)> {
    let cid = take(u, 40)?;
    let req = ppb::SignedPeerRequest {
        request: take(u, 40)?,
        signature: Vec::new(),
    };
    let size = if u.arbitrary()? {
        Some(u.arbitrary()?)
    } else {
        None
    };
    Ok((
        has_content::answer(&key(5), &req, &cid, size),
        req,
        cid,
        size,
    ))
}

fn answer(u: &mut Unstructured) -> AResult<&'static str> {
    let (a, req, cid, size) = build_answer(u)?;
    let (changed, got) = edited(u, &a)?;
    if let Some(r) = got.map(|a| has_content::verify(&public(&key(5)), &req, &cid, &a)) {
        assert!(
            r.as_ref().map_or(changed, |r| *r == size),
            "a HasContent answer: {r:?}"
        );
    }
    Ok(["answer_intact", "answer_changed"][usize::from(changed)])
}

/// What `edited` reads as flipping the bytes at `flips` of a `len`-byte
/// message.
fn flips(w: Seed, len: usize, flips: &[usize]) -> Seed {
    let mut w = w.int(flips.len() as u64, 0, 3);
    for &i in flips {
        w = w
            .int(i as u64, 0, len as u64)
            .int(0, 0, 3)
            .int(0x10, 1, 255);
    }
    w
}

/// The seeds: each named after the path it reaches (checked by the tests).
pub fn seeds() -> Vec<(String, Vec<u8>)> {
    let of = |w: &Seed, skip: usize| w.0.get(skip..).unwrap_or_default().to_vec();
    let none = || Unstructured::new(&[]);
    let (_, p) = build_peer(&mut none()).expect("a default peer request");
    let (m, v, _) = build_record(&mut none()).expect("a default record");
    let (ac, _) = build_access(&mut none()).expect("a default access request");
    let it = build_intent(&mut none()).expect("a default intent");
    let (an, ..) = build_answer(&mut none()).expect("a default answer");
    let raw_seed = |which: u64, b: Vec<u8>| Seed::mode(0).int(which, 0, 6).raw(&b);
    let peer = Seed::mode(1)
        .bytes(b"bafy", 40)
        .int(1, 0, 4)
        .int(25_000, 0, 60_000);
    let plen = build_peer(&mut Unstructured::new(&of(&peer, 1))).map_or(0, |p| p.1.encoded_len());
    let ops = |w: Seed, two: bool| {
        let r = |w: Seed| if two { w.int(1, 0, 1) } else { w };
        let w = r(w.int(3, 0, 8))
            .int(5, 0, 50)
            .bytes(b"f", 3)
            .int(3, 0, 10)
            .bytes(b"v", 3);
        let w = r(w).int(3, 0, 50).bytes(b"m", 3).int(5, 0, 10);
        r(w).int(1, 0, 50)
            .bytes(b"", 3)
            .int(9, 0, 10)
            .raw(&5i64.to_le_bytes())
    };
    let rec = ops(
        Seed::mode(3).int(0, 0, 2).bytes(b"1", 8).int(10, 0, 1_000),
        false,
    )
    .int(0, 0, 1)
    .int(7, 0, 1_000);
    let built = build_record(&mut Unstructured::new(&of(&rec, 1))).expect("the seed record");
    let (mlen, vlen) = (built.0.encoded_len(), built.2.len());
    let val = ops(
        Seed::mode(2).raw(&[3; 32]).int(1, 0, 2).bytes(b"key", 8),
        true,
    );
    let acc = Seed::mode(4)
        .raw(&[1, 1])
        .int(2, 0, 3)
        .bytes(b"t", 3)
        .bytes(b"pre", 4)
        .bytes(b"u", 3)
        .bytes(b"", 4);
    let acc = acc
        .int(59_000, 0, 120_000)
        .raw(&[6; 16])
        .bytes(b"cid", 40)
        .raw(&[8; 32])
        .int(1, 0, 3)
        .int(4, 0, 6);
    let alen = build_access(&mut Unstructured::new(&of(&acc, 2))).map_or(0, |a| a.0.encoded_len());
    let int = Seed::mode(4)
        .raw(&[0])
        .int(61_000, 0, 120_000)
        .raw(&[6; 16])
        .int(2, 1, 3)
        .int(1, 1, 3)
        .bytes(b"g1", 4);
    let int = int.raw(&[8; 32]).int(1_000, 1, u64::MAX).int(2, 0, 2);
    let ilen = build_intent(&mut Unstructured::new(&of(&int, 2))).map_or(0, |i| i.encoded_len());
    let ans = Seed::mode(5)
        .bytes(b"bafy", 40)
        .bytes(b"req", 40)
        .raw(&[1])
        .raw(&77u64.to_le_bytes());
    let nlen = build_answer(&mut Unstructured::new(&of(&ans, 1))).map_or(0, |a| a.0.encoded_len());
    let out = vec![
        ("raw_peer_request", raw_seed(0, p.encode_to_vec())),
        ("raw_record_value", raw_seed(1, v.encode())),
        (
            "raw_entry_state",
            raw_seed(2, codec::entry_to_pb(&v.entry).encode_to_vec()),
        ),
        ("raw_record_meta", raw_seed(3, m.encode_to_vec())),
        ("raw_access_request", raw_seed(4, ac.encode_to_vec())),
        ("raw_intent", raw_seed(5, it.encode_to_vec())),
        ("raw_answer", raw_seed(6, an.encode_to_vec())),
        ("peer_request_intact", flips(peer.clone(), plen, &[])),
        (
            "peer_request_changed_signature",
            flips(peer.clone(), plen, &[plen - 1]),
        ),
        ("peer_request_changed_body", flips(peer, plen, &[plen / 2])),
        ("record_value", flips(flips(val, 0, &[]), 0, &[])),
        (
            "record_intact",
            flips(flips(rec.clone(), mlen, &[]), vlen, &[]),
        ),
        (
            "record_changed_pow_nonce",
            flips(flips(rec.clone(), mlen, &[mlen - 3]), vlen, &[]),
        ),
        (
            "record_changed_ts",
            flips(flips(rec.clone(), mlen, &[mlen - 123]), vlen, &[]),
        ),
        (
            "record_changed_value",
            flips(flips(rec, mlen, &[]), vlen, &[vlen / 2]),
        ),
        ("access_intact", flips(acc.clone(), alen, &[])),
        ("access_changed", flips(acc, alen, &[alen / 2])),
        ("intent_intact", flips(int.clone(), ilen, &[])),
        ("intent_changed", flips(int, ilen, &[ilen / 3, ilen - 1])),
        ("answer_intact", flips(ans.clone(), nlen, &[])),
        ("answer_changed", flips(ans, nlen, &[nlen - 1])),
    ];
    out.into_iter().map(|(n, s)| (n.to_string(), s.0)).collect()
}

#[cfg(test)]
mod tests {
    use super::super::snapshot::random_inputs;
    use super::*;

    #[test]
    fn seeds_reach_their_paths() {
        for (name, data) in seeds() {
            let got = run(data[0], &mut Unstructured::new(&data[1..]));
            assert!(
                matches!(got, Ok(p) if name.starts_with(p)),
                "seed {name} reached {got:?}"
            );
        }
    }

    #[test]
    fn random_inputs_hold() {
        for data in random_inputs(2_000, 600) {
            peer_case(&data);
        }
    }
}
