//! Issue 28, takedowns reach the disks, in process: two validators with
//! real peer gRPC services replicate two uploads (content and DEK on
//! both). One upload's takedown is then CONFIRMED on chain (retention 3
//! blocks in the test nodes):
//! - during the retention the data is retained and still served to
//!   validators; once it ends, peers refuse the blob and DEK
//!   (`TAKEDOWN_ACTIVE`), the other upload is still served;
//! - until the retention ends, the data stays and `status` lists the
//!   upload as awaiting its purge at the right height;
//! - at that height the reconciler deletes the blob, the DEK and their
//!   sync entries, records `local/purged/{cid}` and counts it; the other
//!   upload is untouched;
//! - a worker that had settled notices the takedown through the commit
//!   feed, without waiting for its next full round;
//! - a cover image both uploads share stays, still served and SEEDING;
//! - a file that comes back (a fetch that finished late) is deleted again
//!   by the next full round; the record names it once.

#[path = "common/local.rs"]
mod local;

use std::time::Duration;

use local::*;
use stave::keyspaces::takedowns::{TakedownStatus, TakedownsWrite};
use stave::local::deks::DeksExt;
use stave::local::node::LocalNode;
use stave::local::peer_client::{fetch_content_into, fetch_dek, BlobRequest, PeerTarget, IDLE};
use stave::local::purge::PurgedExt;
use stave::local::status::status;
use stave::local::sync::SyncExt;
use stave::proto::governance::Takedown;
use stave::store::{ChainStore, Overlay, PruneConfig};

/// Commits one height on `store` with `write` applied; returns it.
fn commit(
    store: &ChainStore,
    write: impl FnOnce(&mut Overlay<stave::store::CommittedState>),
) -> u64 {
    let mut o = Overlay::new(store.committed());
    write(&mut o);
    let next = store.commit_info().unwrap().height.map_or(1, |h| h + 1);
    let t = 1_700_000_000_000_000_000i64 + next as i64 * 1_000_000_000;
    let pending = store.prepare(next, t, o.into_changes()).unwrap();
    store.commit(pending, PruneConfig::default()).unwrap();
    next
}

/// The same height on every node's chain store.
fn commit_all(nodes: &[std::sync::Arc<LocalNode>], takedown: Option<&Takedown>) -> u64 {
    let heights: Vec<u64> = nodes
        .iter()
        .map(|n| {
            commit(&n.chain, |o| {
                if let Some(t) = takedown {
                    o.put_takedown(t);
                }
            })
        })
        .collect();
    assert!(heights.windows(2).all(|w| w[0] == w[1]), "{heights:?}");
    heights[0]
}

fn peer_addr(node: &LocalNode, i: usize) -> String {
    let view = node.chain.view();
    stave::local::node::active_validator(&view, &op_key(i))
        .unwrap()
        .unwrap()
        .address
}

fn holds(node: &LocalNode, u: &Upload) -> bool {
    node.content.path_of(&u.content_cid).exists() && node.local.dek(&u.dek_cid).unwrap().is_some()
}

fn holds_nothing_of(node: &LocalNode, u: &Upload) -> bool {
    !node.content.path_of(&u.content_cid).exists()
        && node.local.dek(&u.dek_cid).unwrap().is_none()
        && node.local.content_sync(&u.content_cid).unwrap().is_none()
        && node.local.dek_sync(&u.dek_cid).unwrap().is_none()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn taken_down_data_is_kept_for_the_retention_then_refused_and_purged() {
    let dir = tempfile::tempdir().unwrap();
    let (gone, kept) = (upload(150_000, 3), upload(120_000, 5));
    // one cover shared by both uploads
    let cover = vec![0x5a; 4_000];
    let cover_cid = stave::media::cid::raw_cid(&cover).to_vec();
    let with_cover = |mut a: stave::local::assignments::Assignment| {
        a.images = vec![(cover_cid.clone(), cover.len() as u64)];
        a
    };
    let asg = vec![
        with_cover(gone.assignment(&[0, 1], &[0, 1])),
        with_cover(kept.assignment(&[0, 1], &[0, 1])),
    ];
    let nodes = cluster(dir.path(), 2, asg).await;
    seed(&nodes[0], 0, &gone);
    seed(&nodes[0], 0, &kept);
    nodes[0]
        .content
        .put_reader(&cover_cid, cover.len() as u64, &cover[..])
        .unwrap();
    let node = &nodes[1];
    let (feed_tx, feed) = tokio::sync::watch::channel(0u64);
    let w = worker(node.clone()).with_takedowns(feed);
    let ok = reconcile_until(&w, Duration::from_secs(30), || {
        holds(node, &gone) && holds(node, &kept) && node.content.path_of(&cover_cid).exists()
    })
    .await;
    assert!(ok, "node 1 did not converge: {:?}", status(node).unwrap());
    w.round().await.unwrap(); // a settled round: nothing changed

    let takedown = Takedown {
        cid: gone.dek_cid.clone(),
        status: TakedownStatus::Confirmed as u32,
        group_id: "label".into(),
        requested_at: 1,
        ..Default::default()
    };
    let h = nodes[0].chain.commit_info().unwrap().height.unwrap_or(0) + 1;
    let confirmed = commit_all(
        &nodes,
        Some(&Takedown {
            resolved_at: h,
            ..takedown
        }),
    );
    assert_eq!(confirmed, h);
    feed_tx.send_replace(confirmed);

    // during the retention the data is retained: peers still serve it to
    // validators (a handover still completes)
    let target0 = PeerTarget {
        operator: op_key(0),
        address: peer_addr(&nodes[0], 0),
    };
    fn req<'a>(t: &'a PeerTarget, u: &'a Upload) -> BlobRequest<'a> {
        BlobRequest {
            chain_id: CHAIN,
            target: t,
            cid: &u.content_cid,
            size: u.blob.len() as u64,
            idle: IDLE,
        }
    }
    let scratch = tempfile::tempdir().unwrap();
    let store = stave::local::content::ContentStore::open(scratch.path()).unwrap();
    fetch_dek(node.requester(), CHAIN, &target0, &gone.dek_cid)
        .await
        .expect("served during the retention");
    fetch_content_into(node, &store, &req(&target0, &gone))
        .await
        .expect("served during the retention");

    // held until the retention (3 blocks) ends, and reported as such
    let retention = node.takedown_retention_blocks;
    w.round().await.unwrap();
    assert!(holds(node, &gone), "kept during the retention");
    let s = status(node).unwrap();
    assert_eq!(s.awaiting_purge.len(), 1, "{s:?}");
    assert_eq!(s.awaiting_purge[0].cid, gone.dek_cid);
    assert_eq!(s.awaiting_purge[0].purge_height, confirmed + retention);
    assert!(s.purged.is_empty());
    assert!(
        !s.unassigned_content.contains(&gone.content_cid),
        "awaiting, not unassigned: {s:?}"
    );
    let purges = stave::metrics::metrics().takedown.purges.get();
    for _ in 1..retention {
        let at = commit_all(&nodes, None);
        w.round().await.unwrap();
        assert!(holds(node, &gone), "still held at {at}");
    }
    let at = commit_all(&nodes, None);
    assert_eq!(at, confirmed + retention);
    w.round().await.unwrap();
    // past the retention peers refuse the blob and the DEK at once (node 0
    // has not run its purge yet); the other upload and the shared cover
    // are still served
    let err = fetch_dek(node.requester(), CHAIN, &target0, &gone.dek_cid)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("TAKEDOWN_ACTIVE"), "{err}");
    let err = fetch_content_into(node, &store, &req(&target0, &gone))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("TAKEDOWN_ACTIVE"), "{err}");
    fetch_content_into(node, &store, &req(&target0, &kept))
        .await
        .unwrap();
    let cover_req = BlobRequest {
        cid: &cover_cid,
        size: cover.len() as u64,
        ..req(&target0, &kept)
    };
    fetch_content_into(node, &store, &cover_req)
        .await
        .expect("a shared cover is still served");
    assert!(holds_nothing_of(node, &gone), "{:?}", status(node).unwrap());
    assert!(holds(node, &kept), "the other upload is untouched");
    assert!(
        node.content.verify(&cover_cid).unwrap(),
        "the shared cover stays"
    );
    let cover_sync = node
        .local
        .content_sync(&cover_cid)
        .unwrap()
        .expect("cover entry");
    assert_eq!(
        cover_sync.status(),
        stave::proto::local::SyncStatus::Seeding
    );
    let rec = node.local.purged(&gone.dek_cid).unwrap().expect("record");
    assert_eq!(rec.takedown_height, confirmed);
    assert_eq!(rec.purged_height, at);
    assert_eq!(rec.files, vec![gone.content_cid.clone()]);
    assert!(rec.dek_removed && rec.dek_scrubbed && rec.done, "{rec:?}");
    assert_eq!(rec.bytes_freed, gone.blob.len() as u64);
    assert!(stave::metrics::metrics().takedown.purges.get() > purges);
    let s = status(node).unwrap();
    assert_eq!(s.purged, vec![rec.clone()]);
    assert!(s.awaiting_purge.is_empty());

    // a late copy is deleted again by the next full round (a fresh worker
    // starts with one, as after a restart), and nothing is fetched back
    node.content
        .put_reader(&gone.content_cid, gone.blob.len() as u64, &gone.blob[..])
        .unwrap();
    let fresh = worker(node.clone());
    let r = fresh.round().await.unwrap();
    assert_eq!(r.started, 0, "nothing to fetch");
    assert!(holds_nothing_of(node, &gone));
    let again = node.local.purged(&gone.dek_cid).unwrap().unwrap();
    assert_eq!(again.files, rec.files, "each file named once");
    assert_eq!(again.bytes_freed, rec.bytes_freed);
    assert_eq!(again.purged_height, at, "the first purge height stays");
    // node 0 purges too once its own worker runs
    let w0 = worker(nodes[0].clone());
    w0.round().await.unwrap();
    assert!(holds_nothing_of(&nodes[0], &gone));
    assert!(holds(&nodes[0], &kept));
}

/// The pure split of taken-down uploads at a height.
#[test]
fn split_sorts_due_and_awaiting_by_the_retention() {
    use stave::local::purge::{split, TakenDown};
    let t = |seed: u8, height: u64| TakenDown {
        upload: upload(10, seed).assignment(&[0], &[0]),
        height,
    };
    let taken = vec![t(1, 10), t(2, 20), t(3, 5)];
    let s = split(&taken, 25, 10);
    let due: Vec<u64> = s.due.iter().map(|t| t.height).collect();
    assert_eq!(due, vec![10, 5]);
    assert_eq!(s.awaiting.len(), 1);
    assert_eq!(s.awaiting[0].purge_height, 30);
    assert_eq!(s.next_due(), Some(30));
    // retention 0: due at the confirming height itself
    assert_eq!(split(&taken, 20, 0).due.len(), 3);
    // no overflow at the top of the range
    let far = split(&[t(4, u64::MAX - 1)], u64::MAX - 1, 10);
    assert_eq!(far.awaiting[0].purge_height, u64::MAX);
}
