//! Releases in state, in process: updates by an OWNER who is not the
//! publisher, the history cap, the per-cid release cap, storage charged and
//! refunded, and deals in the access decision (a TrackRelease-only deal, an
//! expired deal, a cid an update dropped, OWNER bypass, RecordGrant
//! re-deciding with the delivered use in FinalizeBlock).

mod inproc;
use inproc::rights::*;
use stave::ddex::{build, ids, time};
use stave::keyspaces::accounts::AccountsRead;
use stave::keyspaces::releases::ReleasesRead;
use stave::keyspaces::uploads::{status_of, UploadsRead};
use stave::media::cid::label_cid;
use stave::proto::ddex::{self as dpb, NewReleaseMessage, UseType};
use stave::proto::rights as pb;
use stave::tx::{Action, Code};

const STREAM: i32 = UseType::OnDemandStream as i32;
const DOWNLOAD: i32 = UseType::PermanentDownload as i32;

fn album(cids: &[&[u8]], seed: &[u8], created: &str) -> NewReleaseMessage {
    let cids: Vec<Vec<u8>> = cids.iter().map(|c| label_cid(c)).collect();
    build::album_created(&cids, seed, created)
}

fn id_of(seed: &[u8]) -> String {
    ids::gtin14(&build::icpn_for(seed)).unwrap()
}

fn stored_bytes(w: &World, who: u8) -> u64 {
    w.node
        .store
        .committed()
        .account(&pk(who))
        .unwrap()
        .map(|a| a.stored_bytes)
        .unwrap_or(0)
}

fn access(w: &World, cid: &[u8], who: u8, territory: &str, use_type: i32) -> (bool, u32) {
    let req = pb::CheckAccessRequest {
        cid: label_cid(cid),
        consumer_pubkey: pk(who).to_vec(),
        territory: territory.into(),
        context: Vec::new(),
        use_type,
    };
    let r = stave::grpc::rights::check_access(&w.node.store.view(), &req).unwrap();
    (r.allowed, r.code)
}

async fn uploaded(w: &mut World, cids: &[&[u8]]) {
    for c in cids {
        w.send(VALIDATORS[0], vec![upload_action(UPLOADER, manifest(c))])
            .await
            .ok();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_owner_of_every_track_updates_and_storage_follows() {
    let (c1, c2) = (b"rel-1".as_slice(), b"rel-2".as_slice());
    let mut w = World::new().await;
    uploaded(&mut w, &[c1, c2]).await;
    let seed = b"album-a";
    w.send(
        UPLOADER,
        vec![publish_msg(album(&[c1, c2], seed, "2021-01-01T00:00:00Z"))],
    )
    .await
    .ok();
    // the first release made UPLOADER an OWNER; it shares that with OWNER2
    w.send(
        UPLOADER,
        vec![
            grant(c1, OWNER2, pb::Role::Owner, None),
            grant(c2, OWNER2, pb::Role::Owner, None),
        ],
    )
    .await
    .ok();
    w.send(
        UPLOADER,
        vec![
            grant(c1, CONSUMER, pb::Role::Consumer, None),
            grant(c2, CONSUMER, pb::Role::Consumer, None),
        ],
    )
    .await
    .ok();
    assert_eq!(access(&w, c2, CONSUMER, "GB", STREAM), (true, 0));

    // a stranger is told the id exists, whatever its message's date
    let stale = album(&[c1], seed, "2020-01-01T00:00:00Z");
    w.refused(
        STRANGER,
        vec![publish_msg(stale.clone())],
        Code::AlreadyPublished,
    )
    .await;
    w.refused(OWNER2, vec![publish_msg(stale)], Code::StaleRelease)
        .await;

    // OWNER2 holds nothing on a third track: it may not add it
    let c3 = b"rel-2b".as_slice();
    uploaded(&mut w, &[c3]).await;
    w.refused(
        OWNER2,
        vec![publish_msg(album(
            &[c1, c2, c3],
            seed,
            "2022-01-01T00:00:00Z",
        ))],
        Code::AlreadyPublished,
    )
    .await;

    // OWNER2 holds OWNER on both tracks: it may replace the release, here
    // dropping c2
    let (uploader_before, owner2_before) = (stored_bytes(&w, UPLOADER), stored_bytes(&w, OWNER2));
    w.send(
        OWNER2,
        vec![publish_msg(album(&[c1], seed, "2022-01-01T00:00:00Z"))],
    )
    .await
    .ok();
    let state = w.node.store.committed();
    let r = state.release(&id_of(seed)).unwrap().unwrap();
    assert_eq!((r.version, r.tracks.len()), (1, 1));
    assert_eq!(r.publisher, pk(UPLOADER).to_vec());
    assert_eq!(r.signer, pk(OWNER2).to_vec());
    assert!(
        stored_bytes(&w, UPLOADER) < uploader_before,
        "the first version's rows are refunded to its signer"
    );
    assert!(
        stored_bytes(&w, OWNER2) > owner2_before,
        "the new version is charged to its signer"
    );

    // c2 stays PUBLISHED but is in no release: unpublished for access
    let u2 = state.upload(&label_cid(c2)).unwrap().unwrap();
    assert_eq!(status_of(&u2), pb::UploadStatus::Published);
    assert_eq!(
        access(&w, c2, CONSUMER, "GB", STREAM),
        (false, Code::AccessDenied.value())
    );
    assert_eq!(access(&w, c1, CONSUMER, "GB", STREAM), (true, 0));
    // an OWNER is not held to deals
    assert_eq!(access(&w, c2, UPLOADER, "GB", STREAM), (true, 0));
}

/// `album(c)` whose main deal streams in FR only, plus a TrackRelease
/// download deal in GB that ends at `gb_end` (unix seconds).
fn with_track_deal(cid: &[u8], seed: &[u8], gb_end: u64) -> NewReleaseMessage {
    let mut m = album(&[cid], seed, "2021-01-01T00:00:00Z");
    let terms = m.release_deal[0].deal[0].deal_terms.as_mut().unwrap();
    terms.territory_code = vec!["FR".into()];
    terms.use_type = vec!["Stream".into()];
    m.track_release.push(dpb::TrackRelease {
        release_reference: "R1".into(),
        release_resource_reference: "A1".into(),
        ..Default::default()
    });
    let end = time::format_date_time(gb_end);
    m.release_deal.push(dpb::ReleaseDeal {
        deal_release_reference: vec!["R1".into()],
        deal: vec![dpb::Deal {
            deal_terms: Some(dpb::DealTerms {
                territory_code: vec!["GB".into()],
                commercial_model_type: vec!["PayAsYouGoModel".into()],
                use_type: vec!["PermanentDownload".into()],
                validity_period: vec![dpb::ValidityPeriod {
                    end_secs: time::date_time_secs(&end).unwrap(),
                    end_date_time: end,
                    ..Default::default()
                }],
                ..Default::default()
            }),
        }],
    });
    m
}

fn record_use(cid: &[u8], consumer: u8, territory: &str, use_type: i32) -> Action {
    Action::RecordGrant(stave::keyspaces::grants::RecordGrant {
        cid: label_cid(cid),
        consumer_pubkey: pk(consumer).to_vec(),
        territory: territory.into(),
        context: Vec::new(),
        count: 0,
        use_type,
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn deals_decide_by_territory_use_and_time() {
    let c = b"rel-3".as_slice();
    let mut w = World::new().await;
    uploaded(&mut w, &[c]).await;
    // block time is 1_700_000_000 + height: the GB deal ends 6 blocks on
    let gb_end = 1_700_000_000 + w.height + 6;
    w.send(
        UPLOADER,
        vec![publish_msg(with_track_deal(c, b"album-b", gb_end))],
    )
    .await
    .ok();
    w.send(UPLOADER, vec![grant(c, CONSUMER, pb::Role::Consumer, None)])
        .await
        .ok();
    assert_eq!(access(&w, c, CONSUMER, "FR", STREAM), (true, 0));
    assert_eq!(
        access(&w, c, CONSUMER, "GB", DOWNLOAD),
        (true, 0),
        "the TrackRelease deal"
    );
    assert_eq!(
        access(&w, c, CONSUMER, "FR", DOWNLOAD),
        (false, Code::NoDeal.value())
    );
    assert_eq!(
        access(&w, c, CONSUMER, "GB", STREAM),
        (false, Code::NoDeal.value())
    );
    assert_eq!(
        access(&w, c, CONSUMER, "GB", 0),
        (false, Code::NoDeal.value()),
        "unspecified = stream"
    );
    // FinalizeBlock decides again with the delivered use
    w.refused(
        VALIDATORS[0],
        vec![record_use(c, CONSUMER, "FR", DOWNLOAD)],
        Code::NoDeal,
    )
    .await;
    w.send(VALIDATORS[0], vec![record_use(c, CONSUMER, "GB", DOWNLOAD)])
        .await
        .ok();
    // the GB deal ends at gb_end
    while 1_700_000_000 + w.height < gb_end {
        w.send(STRANGER, vec![]).await;
    }
    assert_eq!(
        access(&w, c, CONSUMER, "GB", DOWNLOAD),
        (false, Code::NoDeal.value()),
        "expired"
    );
    assert_eq!(
        access(&w, c, UPLOADER, "GB", DOWNLOAD),
        (true, 0),
        "OWNER bypasses deals"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn history_and_per_cid_caps() {
    let mut w = World::with_params(serde_json::json!({
        "rights": {"max_release_versions": 2, "max_releases_per_cid": 1}
    }))
    .await;
    let c = b"rel-4".as_slice();
    uploaded(&mut w, &[c]).await;
    let seed = b"album-c";
    w.send(
        UPLOADER,
        vec![publish_msg(album(&[c], seed, "2021-01-01T00:00:00Z"))],
    )
    .await
    .ok();
    w.refused(
        UPLOADER,
        vec![publish_msg(album(&[c], b"album-d", "2021-01-01T00:00:00Z"))],
        Code::RightsCapExceeded,
    )
    .await;
    // block time is in November 2023
    for created in [
        "2022-01-01T00:00:00Z",
        "2022-06-01T00:00:00Z",
        "2023-01-01T00:00:00Z",
    ] {
        w.send(UPLOADER, vec![publish_msg(album(&[c], seed, created))])
            .await
            .ok();
    }
    let state = w.node.store.committed();
    let id = id_of(seed);
    assert_eq!(state.release(&id).unwrap().unwrap().version, 3);
    drop(state);
    // one more: version 1 falls out, and its bytes go back to its signer
    let v1 = w
        .node
        .store
        .committed()
        .release_version(&id, 1)
        .unwrap()
        .unwrap();
    let before = stored_bytes(&w, UPLOADER);
    // the old version moves and stays charged; its deal and party rows are
    // refunded and written again at the same size
    let newest = album(&[c], seed, "2023-06-01T00:00:00Z");
    w.send(UPLOADER, vec![publish_msg(newest)]).await.ok();
    let state = w.node.store.committed();
    assert!(state.release_version(&id, 1).unwrap().is_none());
    let v4 = state.release(&id).unwrap().unwrap();
    let after = stored_bytes(&w, UPLOADER);
    assert_eq!(
        after + stave::keyspaces::releases::record_bytes(&v1),
        before + stave::keyspaces::releases::record_bytes(&v4),
        "the pruned version is refunded; the new record is charged"
    );
    drop(state);
    let state = w.node.store.committed();
    for (v, kept) in [(0, false), (1, false), (2, true), (3, true)] {
        let got = state.release_version(&id, v).unwrap().is_some();
        assert_eq!(got, kept, "version {v}: only the latest two are kept");
    }
}
