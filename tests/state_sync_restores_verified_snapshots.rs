//! State sync, in process: a snapshot built from a busy chain restores to
//! the same app hash, flat state and index space byte for byte, with the
//! same Info and first CheckTx; two nodes cut byte-identical chunks (one
//! large, or many small); bytes that are not the chunk the metadata names
//! are refetched and the restore goes on, a chunk that proves its snapshot
//! bad rejects the snapshot and wipes it, and nothing partial is ever
//! visible; a restore cut short is wiped at open and completes when
//! offered again, and one no block followed may be replaced.

mod inproc;
use bytes::Bytes;
use inproc::rights::*;
use inproc::Node;
use stave::keyspaces::kv::KvdbOp;
use stave::proto::rights::Role;
use stave::snapshot::format::{chunk_hash, Chunk, Metadata};
use stave::store::{cf, ChainStore};
use tendermint::abci::{request, response, types::Snapshot};
use tendermint::v0_38::abci::{SnapshotRequest as Req, SnapshotResponse as Resp};

/// A chain with uploads, a release, entitlements, grants, KV tokens (one
/// replaced), kvdb sorted sets and hashes, and casbin rules.
async fn busy_world() -> World {
    let c = b"cid-1";
    let mut w = World::published(c).await;
    w.send(
        UPLOADER,
        vec![grant(c, CONSUMER, Role::Consumer, territories(&["GB"]))],
    )
    .await
    .ok();
    w.send(VALIDATORS[0], vec![record(c, CONSUMER, "GB")])
        .await
        .ok();
    let created = w
        .send(
            7,
            vec![inproc::kv::create(7, "k0", "v0", &["red", "big"], 1)],
        )
        .await;
    created.ok();
    let first = inproc::kv::live(&w.node, 7, "k0").unwrap().id;
    w.send(
        7,
        vec![inproc::kv::update(7, "k0", "v1", &["blue"], 2, first)],
    )
    .await
    .ok();
    w.send(8, vec![inproc::kv::create(8, "k1", "w", &["red"], 1)])
        .await
        .ok();
    for (m, s) in [("a", "1.5"), ("b", "-2"), ("c", "7")] {
        let op = KvdbOp::ZAdd {
            member: m.as_bytes().to_vec(),
            score: s.into(),
        };
        w.send(9, vec![inproc::kv::kvdb("scores", "z", op)])
            .await
            .ok();
    }
    let hset = KvdbOp::HSet {
        field: b"f".to_vec(),
        value: b"v".to_vec(),
    };
    w.send(9, vec![inproc::kv::kvdb("d", "h", hset)]).await.ok();
    let m = inproc::casbin::model_id(10, "rbac");
    w.send(
        10,
        vec![inproc::casbin::add_model(&m, inproc::casbin::RBAC)],
    )
    .await
    .ok();
    w.send(
        10,
        vec![inproc::casbin::add_rule(
            &m,
            0,
            "p",
            &["admin", "song", "access"],
        )],
    )
    .await
    .ok();
    w.send(
        10,
        vec![inproc::casbin::add_rule(&m, 1, "g", &["alice", "admin"])],
    )
    .await
    .ok();
    w
}

/// The snapshot of the node's latest height: metadata and chunk bytes.
fn snapshot_of(store: &ChainStore) -> (u64, Metadata, Vec<Vec<u8>>) {
    let h = store.commit_info().unwrap().height.unwrap();
    let mut chunks = Vec::new();
    let meta = stave::snapshot::build::build(store, h, |_, b| {
        chunks.push(b);
        Ok(())
    })
    .unwrap();
    (h, meta, chunks)
}

fn offer_req(h: u64, meta: &Metadata, chunks: u32, app_hash: &[u8]) -> Req {
    Req::OfferSnapshot(request::OfferSnapshot {
        snapshot: Snapshot {
            height: h.try_into().unwrap(),
            format: stave::snapshot::FORMAT,
            chunks,
            hash: meta.hash().to_vec().into(),
            metadata: meta.encode().into(),
        },
        app_hash: app_hash.to_vec().try_into().unwrap(),
    })
}

async fn offer(n: &mut Node, h: u64, meta: &Metadata, chunks: u32) -> response::OfferSnapshot {
    match n.snapshot(offer_req(h, meta, chunks, &meta.app_hash)).await {
        Resp::OfferSnapshot(r) => r,
        other => panic!("{other:?}"),
    }
}

async fn apply(n: &mut Node, index: u32, chunk: &[u8]) -> response::ApplySnapshotChunk {
    let req = Req::ApplySnapshotChunk(request::ApplySnapshotChunk {
        index,
        chunk: Bytes::copy_from_slice(chunk),
        sender: "peer-a".into(),
    });
    match n.snapshot(req).await {
        Resp::ApplySnapshotChunk(r) => r,
        other => panic!("{other:?}"),
    }
}

fn accepted(r: &response::ApplySnapshotChunk) -> bool {
    r.result == response::ApplySnapshotChunkResult::Accept
}

/// Refused with RETRY of `index`, naming the sender when `sender`.
fn assert_retry(r: &response::ApplySnapshotChunk, index: u32) {
    assert_eq!(r.result, response::ApplySnapshotChunkResult::Retry, "{r:?}");
    assert_eq!(r.refetch_chunks, vec![index]);
    assert_eq!(r.reject_senders, vec!["peer-a".to_string()], "{r:?}");
}

fn assert_rejected(r: &response::ApplySnapshotChunk) {
    use response::ApplySnapshotChunkResult as A;
    assert_eq!(r.result, A::RejectSnapshot, "{r:?}");
    assert_eq!(r.reject_senders, vec!["peer-a".to_string()], "{r:?}");
}

fn dump(store: &ChainStore, cf_name: &str) -> stave::store::Rows {
    let db = store.db();
    db.iterator_cf(db.cf_handle(cf_name).unwrap(), rocksdb::IteratorMode::Start)
        .map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap())
        .collect()
}

/// Nothing of a restore is visible: no height, no state rows.
fn nothing_visible(store: &ChainStore) {
    assert_eq!(store.commit_info().unwrap().height, None);
    assert!(dump(store, cf::STATE).is_empty(), "no flat state");
    assert!(dump(store, cf::INDEX).is_empty(), "no index rows");
}

/// The snapshot of height `h` built by the real builder with chunks cut
/// at `bytes` of encoded entries, so a small state has many chunks.
fn recut(store: &ChainStore, h: u64, bytes: usize) -> (Metadata, Vec<Vec<u8>>) {
    let mut chunks = Vec::new();
    let meta = stave::snapshot::build::build_with(store, h, bytes, |_, b| {
        chunks.push(b);
        Ok(())
    })
    .unwrap();
    (meta, chunks)
}

/// A chunk size that cuts the busy world's state into several chunks.
const SMALL: usize = 1500;

async fn fresh() -> (tempfile::TempDir, Node) {
    let dir = tempfile::tempdir().unwrap();
    let node = Node::open(dir.path());
    (dir, node)
}

async fn restore_all(n: &mut Node, h: u64, meta: &Metadata, chunks: &[Vec<u8>]) {
    assert_eq!(
        offer(n, h, meta, chunks.len() as u32).await,
        response::OfferSnapshot::Accept
    );
    for (i, c) in chunks.iter().enumerate() {
        let r = apply(n, i as u32, c).await;
        assert!(accepted(&r), "chunk {i}: {r:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_snapshot_restores_the_same_state_indexes_info_and_checktx() {
    let mut w = busy_world().await;
    let (h, meta, chunks) = snapshot_of(&w.node.store);
    assert_eq!(
        meta.app_hash.to_vec(),
        w.node.store.commit_info().unwrap().app_hash
    );
    let (_d, mut r) = fresh().await;
    restore_all(&mut r, h, &meta, &chunks).await;

    for name in [cf::STATE, cf::INDEX] {
        let (src, dst) = (dump(&w.node.store, name), dump(&r.store, name));
        assert!(!src.is_empty(), "{name} has rows");
        assert_eq!(src, dst, "column family {name} differs");
    }
    let ci = r.store.commit_info().unwrap();
    assert_eq!(ci.height, Some(h));
    assert_eq!(ci.earliest_version, h, "history starts at the snapshot");
    assert_eq!(ci.chain_id, inproc::CHAIN, "chain id from verifiable state");
    assert_eq!(
        ci.last_block_time_ns, None,
        "no block time until the next block"
    );
    assert_eq!(
        r.info().await,
        w.node.info().await,
        "Info matches the source"
    );
    assert_eq!(
        r.store.root_at(h).unwrap(),
        Some(meta.app_hash),
        "tree at H"
    );

    // The first CheckTx on each: same result for the same tx.
    let nonce = w.nonce(UPLOADER);
    let tx: Bytes = stave::tx::build::sign_tx(
        &inproc::key(UPLOADER),
        inproc::CHAIN,
        nonce,
        vec![inproc::set("after", "restore")],
        "",
    )
    .into();
    let (a, b) = (
        w.node.check_tx(tx.clone(), false).await,
        r.check_tx(tx.clone(), false).await,
    );
    assert_eq!(a.code, b.code, "{a:?} / {b:?}");
    assert!(a.code.is_ok(), "{a:?}");
    assert_eq!(a.gas_wanted, b.gas_wanted);

    // The next block applies on both to the same app hash.
    let next = h + 1;
    let (x, _) = w.node.block(next, vec![tx.clone()]).await;
    let (y, _) = r.block(next, vec![tx]).await;
    assert_eq!(x, y, "first block after the restore");
    assert!(r.store.commit_info().unwrap().last_block_time_ns.is_some());
}

#[tokio::test(flavor = "multi_thread")]
async fn two_nodes_cut_byte_identical_snapshots() {
    let a = busy_world().await;
    let b = busy_world().await;
    let (ha, ma, ca) = snapshot_of(&a.node.store);
    let (hb, mb, cb) = snapshot_of(&b.node.store);
    assert_eq!((ha, &ma, &ca), (hb, &mb, &cb));
    assert_eq!(ma.hash(), mb.hash());
    // and a second build of the same height is the same again
    let (_, again, chunks) = snapshot_of(&a.node.store);
    assert_eq!((again, chunks), (ma, ca));
    // and so are many small chunks
    let h = ha;
    let (small_a, small_b) = (
        recut(&a.node.store, h, SMALL),
        recut(&b.node.store, h, SMALL),
    );
    assert!(small_a.1.len() >= 3, "{} chunks", small_a.1.len());
    assert_eq!(small_a, small_b);
}

#[tokio::test(flavor = "multi_thread")]
async fn tampered_chunks_are_refused_and_the_restore_goes_on() {
    let w = busy_world().await;
    let h = w.node.store.commit_info().unwrap().height.unwrap();
    let (meta, chunks) = recut(&w.node.store, h, SMALL);
    assert!(chunks.len() >= 3, "{} chunks", chunks.len());
    let (_d, mut r) = fresh().await;
    let n = chunks.len() as u32;
    assert_eq!(
        offer(&mut r, h, &meta, n).await,
        response::OfferSnapshot::Accept
    );

    // a flipped byte: not the bytes the metadata names; refetch elsewhere
    let mut flipped = chunks[0].clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 1;
    assert_retry(&apply(&mut r, 0, &flipped).await, 0);
    nothing_visible(&r.store);
    assert!(accepted(&apply(&mut r, 0, &chunks[0]).await));
    // a chunk from another snapshot (an earlier height of the same chain)
    let (_, other) = recut(&w.node.store, h - 1, SMALL);
    assert_retry(&apply(&mut r, 1, &other[1]).await, 1);
    for (i, c) in chunks.iter().enumerate().skip(1) {
        assert!(accepted(&apply(&mut r, i as u32, c).await), "chunk {i}");
        if i + 1 < chunks.len() {
            nothing_visible(&r.store);
        }
    }
    assert_eq!(r.store.commit_info().unwrap().height, Some(h));
    assert_eq!(dump(&r.store, cf::STATE), dump(&w.node.store, cf::STATE));
    assert_eq!(dump(&r.store, cf::INDEX), dump(&w.node.store, cf::INDEX));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_chunk_out_of_order_restarts_the_snapshot() {
    let w = busy_world().await;
    let h = w.node.store.commit_info().unwrap().height.unwrap();
    let (meta, chunks) = recut(&w.node.store, h, SMALL);
    let (_d, mut r) = fresh().await;
    let n = chunks.len() as u32;
    assert_eq!(
        offer(&mut r, h, &meta, n).await,
        response::OfferSnapshot::Accept
    );
    assert!(accepted(&apply(&mut r, 0, &chunks[0]).await));
    let skipped = apply(&mut r, 2, &chunks[2]).await;
    use response::ApplySnapshotChunkResult as A;
    assert_eq!(skipped.result, A::RetrySnapshot, "{skipped:?}");
    nothing_visible(&r.store);
    assert!(dump(&r.store, cf::RESTORE).is_empty(), "staging wiped");
    restore_all(&mut r, h, &meta, &chunks).await;
    assert_eq!(dump(&r.store, cf::INDEX), dump(&w.node.store, cf::INDEX));
}

/// A metadata the attacker controls lists the hash of its own chunk, so the
/// chunk passes the hash check; the proof still ties it to the trusted
/// root, so the snapshot is rejected with its sender and nothing is kept.
#[tokio::test(flavor = "multi_thread")]
async fn keys_that_do_not_hash_to_their_leaves_are_refused() {
    let w = busy_world().await;
    let h = w.node.store.commit_info().unwrap().height.unwrap();
    let (meta, chunks) = recut(&w.node.store, h, SMALL);
    let n = chunks.len() as u32;
    for tamper in 0..4 {
        let mut c = Chunk::decode(&chunks[1]).unwrap();
        match tamper {
            0 => c.entries[0].0.push(b'x'), // a key that hashes elsewhere
            1 => c.entries[1].1.push(0),    // a changed value
            2 => {
                c.entries.remove(1); // a dropped row
            }
            _ => c.proof.left.clear(), // a proof without its left side
        }
        let bytes = c.encode();
        let mut lying = meta.clone();
        lying.chunk_hashes[1] = chunk_hash(&bytes);
        let (_d, mut r) = fresh().await;
        assert_eq!(
            offer(&mut r, h, &lying, n).await,
            response::OfferSnapshot::Accept
        );
        assert!(accepted(&apply(&mut r, 0, &chunks[0]).await));
        assert_rejected(&apply(&mut r, 1, &bytes).await);
        nothing_visible(&r.store);
        assert!(dump(&r.store, cf::RESTORE).is_empty(), "staging wiped");
        // the honest snapshot still restores
        restore_all(&mut r, h, &meta, &chunks).await;
    }
}

/// Metadata that lists another entry count than its chunks hold is caught
/// after the last chunk: the snapshot is rejected and the store wiped.
#[tokio::test(flavor = "multi_thread")]
async fn metadata_that_miscounts_its_entries_is_rejected() {
    let w = busy_world().await;
    let h = w.node.store.commit_info().unwrap().height.unwrap();
    let (mut meta, chunks) = recut(&w.node.store, h, SMALL);
    meta.entries -= 1;
    let (_d, mut r) = fresh().await;
    let n = chunks.len() as u32;
    assert_eq!(
        offer(&mut r, h, &meta, n).await,
        response::OfferSnapshot::Accept
    );
    let mut last = None;
    for (i, c) in chunks.iter().enumerate() {
        last = Some(apply(&mut r, i as u32, c).await);
    }
    let last = last.unwrap();
    use response::ApplySnapshotChunkResult as A;
    assert_eq!(last.result, A::RejectSnapshot, "{last:?}");
    nothing_visible(&r.store);
}

#[tokio::test(flavor = "multi_thread")]
async fn lying_snapshots_are_refused_at_offer() {
    let w = busy_world().await;
    let h = w.node.store.commit_info().unwrap().height.unwrap();
    let (meta, _) = recut(&w.node.store, h, SMALL);
    let n = meta.chunk_hashes.len() as u32;
    let (_d, mut r) = fresh().await;
    // a root that is not the trusted app hash
    let trusted = w.node.store.root_at(h - 1).unwrap().unwrap();
    let Resp::OfferSnapshot(x) = r.snapshot(offer_req(h, &meta, n, &trusted)).await else {
        panic!()
    };
    assert_eq!(x, response::OfferSnapshot::Reject);
    // metadata that lies about its chunk count
    assert_eq!(
        offer(&mut r, h, &meta, n + 1).await,
        response::OfferSnapshot::Reject
    );
    let mut short = meta.clone();
    short.chunk_hashes.pop();
    assert_eq!(
        offer(&mut r, h, &short, n).await,
        response::OfferSnapshot::Reject
    );
    // an unknown format
    let mut req = offer_req(h, &meta, n, &meta.app_hash);
    if let Req::OfferSnapshot(o) = &mut req {
        o.snapshot.format = 2;
    }
    let Resp::OfferSnapshot(x) = r.snapshot(req).await else {
        panic!()
    };
    assert_eq!(x, response::OfferSnapshot::RejectFormat);
    // undecodable metadata
    let mut req = offer_req(h, &meta, n, &meta.app_hash);
    if let Req::OfferSnapshot(o) = &mut req {
        o.snapshot.metadata = Bytes::from_static(&[0xff, 0xff]);
    }
    let Resp::OfferSnapshot(x) = r.snapshot(req).await else {
        panic!()
    };
    assert_eq!(x, response::OfferSnapshot::Reject);
    nothing_visible(&r.store);
    // a node with state refuses to be overwritten
    let mut busy = busy_world().await;
    let req = offer_req(h, &meta, n, &meta.app_hash);
    let Resp::OfferSnapshot(x) = busy.node.snapshot(req).await else {
        panic!()
    };
    assert_eq!(x, response::OfferSnapshot::Abort);
    assert_eq!(busy.node.store.commit_info().unwrap().height, Some(h));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_restore_cut_short_is_wiped_at_open_and_completes_when_offered_again() {
    let w = busy_world().await;
    let h = w.node.store.commit_info().unwrap().height.unwrap();
    let (meta, chunks) = recut(&w.node.store, h, SMALL);
    let n = chunks.len() as u32;
    let dir = tempfile::tempdir().unwrap();
    let mut r = Node::open(dir.path());
    assert_eq!(
        offer(&mut r, h, &meta, n).await,
        response::OfferSnapshot::Accept
    );
    assert!(accepted(&apply(&mut r, 0, &chunks[0]).await));
    assert!(accepted(&apply(&mut r, 1, &chunks[1]).await));
    assert!(!dump(&r.store, cf::RESTORE).is_empty(), "rows staged");
    let path = r.shutdown(); // the process dies here
    let mut r = Node::open(&path);
    nothing_visible(&r.store);
    assert_eq!(
        r.store.restoring().unwrap(),
        None,
        "the marker went with the wipe"
    );
    assert!(dump(&r.store, cf::RESTORE).is_empty(), "staging wiped");
    // CometBFT's restarted state sync offers again; a stray chunk first
    let stray = apply(&mut r, 2, &chunks[2]).await;
    use response::ApplySnapshotChunkResult as A;
    assert_eq!(stray.result, A::RetrySnapshot);
    restore_all(&mut r, h, &meta, &chunks).await;
    assert_eq!(dump(&r.store, cf::INDEX), dump(&w.node.store, cf::INDEX));
    assert_eq!(r.info().await.last_block_app_hash.as_bytes(), meta.app_hash);
}

/// A kill after the final write but before CometBFT recorded the restore:
/// CometBFT state-syncs again, and the unconfirmed restore is replaced. Once
/// a block is committed on top, the node has state and refuses offers.
#[tokio::test(flavor = "multi_thread")]
async fn a_restore_no_block_followed_may_be_replaced_and_then_not() {
    let mut w = busy_world().await;
    let h = w.node.store.commit_info().unwrap().height.unwrap();
    let (meta, chunks) = recut(&w.node.store, h, SMALL);
    let dir = tempfile::tempdir().unwrap();
    let mut r = Node::open(dir.path());
    restore_all(&mut r, h, &meta, &chunks).await;
    assert_eq!(r.store.restored_unconfirmed().unwrap(), Some(h));
    let path = r.shutdown();
    let mut r = Node::open(&path);
    restore_all(&mut r, h, &meta, &chunks).await;
    assert_eq!(dump(&r.store, cf::STATE), dump(&w.node.store, cf::STATE));
    let (x, _) = w.node.block(h + 1, vec![]).await;
    let (y, _) = r.block(h + 1, vec![]).await;
    assert_eq!(x, y);
    assert_eq!(
        r.store.restored_unconfirmed().unwrap(),
        None,
        "the Commit confirmed it"
    );
    let n = chunks.len() as u32;
    assert_eq!(
        offer(&mut r, h, &meta, n).await,
        response::OfferSnapshot::Abort
    );
}
