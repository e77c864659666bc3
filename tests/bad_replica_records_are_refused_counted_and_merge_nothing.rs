//! Issue 26's bad input, in process over real gRPC on loopback sockets:
//! each of these is refused, counted (`stave_replica_refused_total`), and
//! merges nothing — a bad signature, insufficient proof of work, a value
//! whose hash does not match, a record from a non-validator, a record
//! older than the horizon, an oversized value, inconsistent CRCs, a future
//! timestamp, and a peer flooding UPDATEs.

#[path = "common/replica.rs"]
mod replica;

use std::sync::Arc;

use prost::Message;
use replica::{cluster, cluster_with, config, local, metric, op, serve, Node};
use stave::local::peer_auth::now_ms;
use stave::local::peer_client::{signed_request, PeerTarget};
use stave::proto::peer::peer_request::Body;
use stave::proto::peer::replica_service_client::ReplicaServiceClient;
use stave::proto::peer::replica_service_server::ReplicaService;
use stave::proto::peer::SignedPeerRequest;
use stave::proto::replica as pb;
use stave::replica::codec::datakey;
use stave::replica::db::Op;
use stave::replica::md::{Metadata, DAY_MS};
use stave::replica::pow;
use stave::replica::store::{Held, Put};
use tonic::{Request, Response, Status};

const REFUSED: &str = "stave_replica_refused_total";

/// Held by the tests that count the same refusal reason: the counters are
/// the process's, and the tests of this file run in parallel.
static OVERSIZE: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A signed record of ("ops", "notice") by `key`.
fn record(
    key: &ed25519_dalek::SigningKey,
    chain: &str,
    ts: u64,
    base: u64,
) -> (pb::RecordMeta, Vec<u8>, [u8; 32]) {
    replica::signed_record(key, chain, ("ops", b"notice"), ts, base, true)
}

fn target(n: &Node, i: usize) -> PeerTarget {
    PeerTarget {
        operator: local::op_key(i),
        address: n.addr.to_string(),
    }
}

async fn update(
    from: usize,
    to: &Node,
    to_i: usize,
    records: Vec<pb::RecordMeta>,
) -> Result<pb::UpdateResponse, Status> {
    let chain = to.replica.chain_id().unwrap();
    let req = signed_request(
        &local::operator(from),
        &chain,
        &target(to, to_i),
        Body::ReplicaUpdate(pb::ReplicaUpdate { records }),
    );
    let mut c = ReplicaServiceClient::connect(format!("http://{}", to.addr))
        .await
        .unwrap();
    c.update(req).await.map(Response::into_inner)
}

#[tokio::test(flavor = "multi_thread")]
async fn forged_records_are_refused_counted_and_spread_nowhere() {
    let _counting = OVERSIZE.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let nodes = cluster(dir.path(), 3);
    let chain = nodes[1].replica.chain_id().unwrap();
    let now = now_ms();
    let v0 = local::operator(0);
    let stranger = ed25519_dalek::SigningKey::from_bytes(&[99; 32]);
    let horizon = replica::horizon_ms();

    let mut bad_sig = record(&v0, &chain, now, 1).0;
    bad_sig.metadata[50] ^= 1; // inside sig
    let other_chain = record(&v0, "another-chain", now, 1).0;
    let stranger_rec = record(&stranger, &chain, now, 1).0;
    let future = record(&v0, &chain, now + 6 * 60 * 1000, 1).0;
    let old = record(&v0, &chain, now - horizon - 1_000, 1).0;
    // Insufficient work: solved for base 1, but a nonce that fails is kept.
    let (mut weak, ..) = record(&v0, &chain, now, 1);
    let mut md = Metadata::from_bytes(&weak.metadata).unwrap();
    while pow::meets(&md, 1) {
        md.pow_nonce += 1;
    }
    weak.metadata = md.to_bytes().to_vec();
    let mut huge = record(&v0, &chain, now, 1).0;
    let mut md = Metadata::from_bytes(&huge.metadata).unwrap();
    md.size = 16 * 1024 * 1024 + 1;
    huge.metadata = md.to_bytes().to_vec();
    let mut expired = record(&v0, &chain, now, 1).0;
    let mut md = Metadata::from_bytes(&expired.metadata).unwrap();
    md.ttl_begin = now - 8 * DAY_MS;
    expired.metadata = md.to_bytes().to_vec();

    let cases = [
        ("signature", bad_sig),
        ("signature", other_chain),
        ("not_validator", stranger_rec),
        ("future", future),
        ("horizon", old),
        ("pow", weak),
        ("oversize", huge),
        ("expired", expired),
    ];
    for (why, rec) in cases {
        let before = metric(REFUSED, why);
        let r = update(0, &nodes[1], 1, vec![rec]).await.unwrap();
        assert_eq!((r.accepted, r.refused), (0, 1), "{why}");
        assert_eq!(metric(REFUSED, why), before + 1, "{why} is counted");
    }
    // Nothing was queued, kept, or passed on.
    nodes[1].step().await;
    nodes[2].round().await;
    for n in &nodes {
        assert!(n.replica.records.is_empty(), "a refused record was kept");
    }
    assert_eq!(
        nodes[1].replica.stats.snapshot()[&local::op_key(0)].refused,
        8
    );
}

/// A Byzantine validator serves a value whose hash is not its record's,
/// and a value naming another key than its datakey: the pulling node
/// refuses both, counts them, and keeps nothing.
#[tokio::test(flavor = "multi_thread")]
async fn values_that_do_not_match_their_metadata_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = cluster(dir.path(), 2);
    let chain = nodes[0].replica.chain_id().unwrap();
    let v0 = local::operator(0);
    let (meta, value, dk) = record(&v0, &chain, now_ms(), 1);
    let md = Metadata::from_bytes(&meta.metadata).unwrap();
    let held = Held {
        owner: local::op_key(0),
        md,
        db: "ops".into(),
        key: b"notice".to_vec(),
    };
    // Planted directly in node 0's store with other bytes under the hash.
    let mut other = value.clone();
    *other.last_mut().unwrap() ^= 1;
    nodes[0]
        .replica
        .records
        .put(vec![Put {
            datakey: dk,
            held,
            value: other,
        }])
        .unwrap();
    let before = metric(REFUSED, "hash");
    nodes[1].round().await;
    assert_eq!(metric(REFUSED, "hash"), before + 1);
    assert!(nodes[1].replica.records.is_empty());

    // A correctly hashed value whose key is not the datakey's.
    let (meta2, _, _) = record(&v0, &chain, now_ms(), 1);
    let md2 = Metadata::from_bytes(&meta2.metadata).unwrap();
    let wrong_dk = datakey(&local::op_key(0), "ops", b"elsewhere");
    let mut md3 = md2;
    md3.sign(&v0, &chain, &wrong_dk);
    let (_, value2, _) = record(&v0, &chain, md2.ts, 1);
    let held = Held {
        owner: local::op_key(0),
        md: md3,
        db: "ops".into(),
        key: b"elsewhere".to_vec(),
    };
    nodes[0].replica.records.remove(&[dk]).unwrap();
    nodes[0]
        .replica
        .records
        .put(vec![Put {
            datakey: wrong_dk,
            held,
            value: value2,
        }])
        .unwrap();
    let before = metric(REFUSED, "mismatch");
    nodes[1].round().await;
    assert_eq!(metric(REFUSED, "mismatch"), before + 1);
    assert!(nodes[1].replica.records.is_empty());
}

/// A peer that answers CRC_DIFF with children that do not XOR to its own
/// CRC: the round is refused and counted, and nothing is asked of it.
#[derive(Clone)]
struct LyingCrcs;

#[tonic::async_trait]
impl ReplicaService for LyingCrcs {
    async fn update(
        &self,
        _: Request<SignedPeerRequest>,
    ) -> Result<Response<pb::UpdateResponse>, Status> {
        Err(Status::unimplemented("liar"))
    }
    async fn crc_diff(
        &self,
        r: Request<SignedPeerRequest>,
    ) -> Result<Response<pb::CrcDiffResponse>, Status> {
        let req =
            stave::proto::peer::PeerRequest::decode(r.into_inner().request.as_slice()).unwrap();
        let Some(Body::ReplicaCrcDiff(q)) = req.body else {
            panic!("not a CRC_DIFF")
        };
        let answers = q
            .queries
            .into_iter()
            .map(|q| pb::CrcAnswer {
                prefix: q.prefix,
                crc: 0xdead_beef,
                count: 100,
                child_index: vec![1, 2],
                child_crc: vec![1, 2],
                child_count: vec![50, 50],
            })
            .collect();
        Ok(Response::new(pb::CrcDiffResponse { answers }))
    }
    async fn sync(
        &self,
        _: Request<SignedPeerRequest>,
    ) -> Result<Response<pb::SyncResponse>, Status> {
        panic!("a refused peer is not asked to SYNC")
    }
    type GetValuesStream = tokio_stream::Empty<Result<pb::ValueChunk, Status>>;
    async fn get_values(
        &self,
        _: Request<SignedPeerRequest>,
    ) -> Result<Response<Self::GetValuesStream>, Status> {
        Err(Status::unimplemented("liar"))
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_peer_whose_crcs_do_not_add_up_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (nodes, spare) = cluster_with(dir.path(), 2, |i| i == 0, |_| config());
    for (_, l) in spare {
        serve(l, LyingCrcs);
    }
    // Few records (SYNC next) and many (split next): refused both ways.
    nodes[0].write(&[op("ops", "k", Op::Set(b"v".to_vec(), None))]);
    let (c, v) = nodes[0].ctx();
    let before = metric(REFUSED, "crc");
    assert!(nodes[0].syncer.round(&c, &v, &v.peers[0]).await.is_err());
    assert_eq!(metric(REFUSED, "crc"), before + 1);
    let ops: Vec<_> = (0..80)
        .map(|k| op("ops", &format!("k{k}"), Op::Set(b"v".to_vec(), None)))
        .collect();
    nodes[0].write(&ops);
    let before = metric(REFUSED, "crc");
    let err = nodes[0]
        .syncer
        .round(&c, &v, &v.peers[0])
        .await
        .unwrap_err();
    assert!(err.to_string().contains("CRC"), "{err}");
    assert_eq!(metric(REFUSED, "crc"), before + 1);
    assert_eq!(nodes[0].replica.records.len(), 81, "its own records only");
}

/// A peer that serves its records honestly but streams their values in
/// pieces that overrun: more bytes than the piece's declared size, or a
/// declared size over 16 MiB.
struct Overrun {
    inner: stave::grpc::replica::ReplicaServiceImpl,
    huge: Arc<std::sync::atomic::AtomicBool>,
    value: Vec<u8>,
    hash: Vec<u8>,
}

#[tonic::async_trait]
impl ReplicaService for Overrun {
    async fn update(
        &self,
        r: Request<SignedPeerRequest>,
    ) -> Result<Response<pb::UpdateResponse>, Status> {
        self.inner.update(r).await
    }
    async fn crc_diff(
        &self,
        r: Request<SignedPeerRequest>,
    ) -> Result<Response<pb::CrcDiffResponse>, Status> {
        self.inner.crc_diff(r).await
    }
    async fn sync(
        &self,
        r: Request<SignedPeerRequest>,
    ) -> Result<Response<pb::SyncResponse>, Status> {
        self.inner.sync(r).await
    }
    type GetValuesStream = tokio_stream::Iter<std::vec::IntoIter<Result<pb::ValueChunk, Status>>>;
    async fn get_values(
        &self,
        _: Request<SignedPeerRequest>,
    ) -> Result<Response<Self::GetValuesStream>, Status> {
        let huge = self.huge.load(std::sync::atomic::Ordering::SeqCst);
        let mut data = self.value.clone();
        let size = if huge {
            16 * 1024 * 1024 + 1
        } else {
            data.push(0); // one byte past the declared size
            self.value.len() as u32
        };
        let piece = pb::ValueChunk {
            hash: self.hash.clone(),
            offset: 0,
            size,
            data,
        };
        Ok(Response::new(tokio_stream::iter(vec![Ok(piece)])))
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn streamed_values_that_overrun_their_size_are_refused() {
    let _counting = OVERSIZE.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let (nodes, mut spare) = cluster_with(dir.path(), 2, |i| i == 0, |_| config());
    let chain = nodes[1].replica.chain_id().unwrap();
    let (meta, value, _) = record(&local::operator(1), &chain, now_ms(), 1);
    plant(&nodes[1], &meta, b"notice", value.clone());
    let huge = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (_, l) = spare.pop().unwrap();
    serve(
        l,
        Overrun {
            inner: stave::grpc::replica::ReplicaServiceImpl::new(nodes[1].replica.clone()),
            huge: huge.clone(),
            hash: Metadata::from_bytes(&meta.metadata).unwrap().hash.to_vec(),
            value,
        },
    );
    for declared_huge in [false, true] {
        huge.store(declared_huge, std::sync::atomic::Ordering::SeqCst);
        let before = metric(REFUSED, "oversize");
        nodes[0].round().await;
        assert_eq!(
            metric(REFUSED, "oversize"),
            before + 1,
            "huge: {declared_huge}"
        );
        assert!(nodes[0].replica.records.is_empty(), "nothing kept");
        let (view, _) = nodes[0].replica.read("ops", b"notice", now_ms()).unwrap();
        assert!(view.is_none());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_peer_flooding_updates_is_rate_limited() {
    let dir = tempfile::tempdir().unwrap();
    let strict = |i: usize| stave::replica::ReplicaConfig {
        update_per_sec: 1,
        update_burst: if i == 1 { 3 } else { 40 },
        ..config()
    };
    let (nodes, _) = cluster_with(dir.path(), 2, |_| true, strict);
    let before = metric(REFUSED, "rate");
    let mut limited = 0;
    for _ in 0..10 {
        if let Err(s) = update(0, &nodes[1], 1, vec![]).await {
            assert_eq!(s.code(), tonic::Code::ResourceExhausted);
            limited += 1;
        }
    }
    assert!(limited >= 6, "{limited} of 10 limited with a burst of 3");
    assert_eq!(metric(REFUSED, "rate"), before + limited);
}

/// Records of an owner that is not a current validator never merge into
/// reads, and the sweep purges them; an old own record is re-signed.
#[tokio::test(flavor = "multi_thread")]
async fn the_sweep_purges_what_may_not_merge_and_refreshes_own_records() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = cluster(dir.path(), 2);
    let n = &nodes[0];
    let chain = n.replica.chain_id().unwrap();
    let stranger = ed25519_dalek::SigningKey::from_bytes(&[99; 32]);
    let (meta, value, dk) = record(&stranger, &chain, now_ms(), 1);
    plant(n, &meta, b"notice", value);
    let (view, owners) = n.replica.read("ops", b"notice", now_ms()).unwrap();
    assert!(
        view.is_none() && owners.is_empty(),
        "a non-validator's record does not merge"
    );

    // An own record signed long ago (a third of the horizon): due.
    let v0 = local::operator(0);
    let then = now_ms() - replica::horizon_ms() / 3;
    let (meta, value, own_dk) = record(&v0, &chain, then, 1);
    plant(n, &meta, b"notice", value);

    // No round with a peer yet: the stranger goes, the own record waits
    // (a node cut off lets its records age out rather than refresh them).
    let swept = n.replica.sweep().unwrap();
    assert_eq!((swept.purged, swept.refreshed, swept.held_back), (1, 0, 1));
    assert!(n.replica.records.get(&dk).unwrap().is_none());
    assert_eq!(n.replica.records.get(&own_dk).unwrap().unwrap().md.ts, then);

    n.round().await;
    let swept = n.replica.sweep().unwrap();
    assert_eq!((swept.purged, swept.refreshed, swept.held_back), (0, 1, 0));
    let fresh = n.replica.records.get(&own_dk).unwrap().unwrap();
    assert!(fresh.md.ts > then + 1_000, "re-signed now");
    let (view, _) = n.replica.read("ops", b"notice", now_ms()).unwrap();
    assert_eq!(
        view.map(|v| v.value),
        Some(stave::crdt::Visible::Value(b"forged".to_vec()))
    );
    // The refreshed record travels like any other.
    nodes[1].round().await;
    assert_eq!(nodes[1].replica.records.len(), 1);
    let _ = Arc::clone(&n.replica);
}

/// Plants `entry` as node 0's own record of ops/`key`, stamped `ts`.
fn plant_own(n: &Node, key: &[u8], entry: stave::crdt::Entry, ts: u64) -> [u8; 32] {
    let chain = n.replica.chain_id().unwrap();
    let (meta, value, dk) = replica::signed_entry(
        &local::operator(0),
        &chain,
        ("ops", key),
        entry,
        ts,
        1,
        true,
    );
    plant(n, &meta, key, value);
    dk
}

/// Puts the record of `meta` for ops/`key` with `value` straight into
/// `n`'s store, unchecked.
fn plant(n: &Node, meta: &pb::RecordMeta, key: &[u8], value: Vec<u8>) {
    let held = Held {
        owner: meta.owner.as_slice().try_into().unwrap(),
        md: Metadata::from_bytes(&meta.metadata).unwrap(),
        db: "ops".into(),
        key: key.to_vec(),
    };
    let datakey = meta.datakey.as_slice().try_into().unwrap();
    n.replica
        .records
        .put(vec![Put {
            datakey,
            held,
            value,
        }])
        .unwrap();
}

/// Own records past a quarter horizon that show nothing: one whose
/// removal is still inside the horizon is left to age out (re-signing it
/// would keep nothing alive); one whose removal is older than the horizon
/// is re-signed empty, never deleted, so the older copies peers hold
/// cannot come back to this node.
#[tokio::test(flavor = "multi_thread")]
async fn own_records_that_show_nothing_age_out_or_are_stored_empty() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = cluster(dir.path(), 2);
    let n = &nodes[0];
    let h = replica::horizon_ms();
    let now = now_ms();
    let me = local::op_key(0);
    let then = now - h / 3;
    let tombstone = |at: u64| {
        let mut e = stave::crdt::Entry::default();
        e.set(stave::crdt::Stamp::new(at - 1, me), b"x".to_vec(), None);
        e.del(stave::crdt::Stamp::new(at, me));
        e
    };
    let recent = plant_own(n, b"recent", tombstone(then), then);
    let ancient = plant_own(n, b"ancient", tombstone(now - h - 60_000), then);
    n.round().await;
    assert!(
        n.replica.last_round_ms() > 0,
        "a round with the peer succeeded"
    );

    let swept = n.replica.sweep().unwrap();
    assert_eq!((swept.purged, swept.refreshed), (0, 1));
    let r = n.replica.records.get(&recent).unwrap().unwrap();
    assert_eq!(
        r.md.ts, then,
        "a live removal showing nothing is not re-signed"
    );
    let a = n.replica.records.get(&ancient).unwrap().unwrap();
    assert!(a.md.ts > then + 1_000, "re-signed now");
    let raw = n.replica.records.value(&a.md.hash).unwrap().unwrap();
    let v = stave::replica::codec::RecordValue::decode(&raw).unwrap();
    assert_eq!(v.entry, stave::crdt::Entry::default(), "stored empty");
    for key in [&b"recent"[..], b"ancient"] {
        assert!(n.replica.read("ops", key, now_ms()).unwrap().0.is_none());
    }
    // The empty record replaces the older copy at the peer too.
    nodes[1].round().await;
    let at_peer = nodes[1].replica.records.get(&ancient).unwrap().unwrap();
    assert_eq!(at_peer.md, a.md);
}

/// More due own records that show nothing than one sweep re-signs
/// ([`stave::replica::own::MAX_REFRESH`]) sit before a live one in datakey order: they do
/// not use up the sweep, and the live record is re-signed before it
/// could age out.
#[tokio::test(flavor = "multi_thread")]
async fn skipped_own_records_do_not_keep_a_live_one_from_its_refresh() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = cluster(dir.path(), 2);
    let n = &nodes[0];
    let then = now_ms() - replica::horizon_ms() / 3;
    let me = local::op_key(0);
    let mut keys: Vec<Vec<u8>> = (0..stave::replica::own::MAX_REFRESH + 45)
        .map(|i| format!("k{i}").into_bytes())
        .collect();
    keys.sort_by_key(|k| datakey(&me, "ops", k));
    let (live_key, skipped) = keys.split_last().unwrap();
    for key in skipped {
        let mut e = stave::crdt::Entry::default();
        e.set(stave::crdt::Stamp::new(then - 1, me), b"x".to_vec(), None);
        e.del(stave::crdt::Stamp::new(then, me));
        plant_own(n, key, e, then);
    }
    let mut e = stave::crdt::Entry::default();
    e.set(stave::crdt::Stamp::new(then, me), b"live".to_vec(), None);
    let live = plant_own(n, live_key, e, then);
    n.round().await;

    let swept = n.replica.sweep().unwrap();
    assert_eq!((swept.purged, swept.refreshed), (0, 1));
    let r = n.replica.records.get(&live).unwrap().unwrap();
    assert!(
        r.md.ts > then + 1_000,
        "the live record, last in order, is re-signed"
    );
    let first = datakey(&me, "ops", &skipped[0]);
    assert_eq!(n.replica.records.get(&first).unwrap().unwrap().md.ts, then);
}

/// A record whose value holds a stamp later than its `ts` (it would
/// outlive the horizon through what it carries), or a counter column
/// of another replica (an owner speaking for another), is refused,
/// counted, and merges nothing.
#[tokio::test(flavor = "multi_thread")]
async fn values_holding_late_stamps_or_others_counters_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = cluster(dir.path(), 2);
    let now = now_ms();
    let late = {
        let mut e = stave::crdt::Entry::default();
        let s = stave::crdt::Stamp::new(now + 60_000, local::op_key(0));
        e.sadd(s, &[b"m".to_vec()]).unwrap();
        e
    };
    let forged_counter = {
        let mut e = stave::crdt::Entry::default();
        e.incr_by(stave::crdt::Stamp::new(now - 10, local::op_key(1)), 1_000)
            .unwrap();
        e
    };
    for (key, entry) in [(&b"late"[..], late), (b"counter", forged_counter)] {
        let dk = plant_own(&nodes[0], key, entry, now);
        let before = metric(REFUSED, "content");
        nodes[1].round().await;
        assert_eq!(metric(REFUSED, "content"), before + 1, "{key:?}");
        assert!(nodes[1].replica.records.is_empty());
        let (view, _) = nodes[1].replica.read("ops", key, now_ms()).unwrap();
        assert!(view.is_none());
        nodes[0].replica.records.remove(&[dk]).unwrap();
    }
}
