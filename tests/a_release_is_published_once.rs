//! Release ids: the first publisher wins. The same message again is not
//! newer (STALE_RELEASE); a later one from the publisher replaces the
//! stored version and keeps the old one in release_versions/; a key that is
//! neither the publisher nor an OWNER of every track gets ALREADY_PUBLISHED;
//! a MessageCreatedDateTime far past the block time gets FUTURE_RELEASE; an
//! unknown cid gets UNKNOWN_CID. None changes the stored release.

mod inproc;
use inproc::rights::*;
use stave::ddex::build;
use stave::keyspaces::releases::ReleasesRead;
use stave::tx::Code;

fn newer(cid: &[u8], created: &str) -> stave::proto::ddex::NewReleaseMessage {
    let c = label_cid(cid);
    build::album_created(std::slice::from_ref(&c), &c, created)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_release_is_published_once() {
    let mut w = World::published(b"cid-1").await;
    let id = stave::ddex::ids::gtin14(&build::icpn_for(&label_cid(b"cid-1"))).unwrap();
    w.refused(UPLOADER, vec![publish(b"cid-1")], Code::StaleRelease)
        .await;
    w.refused(
        UPLOADER,
        vec![publish_msg(newer(b"cid-1", "2999-01-01T00:00:00Z"))],
        Code::FutureRelease,
    )
    .await;
    // a stranger holding nothing cannot take the id over
    w.refused(
        STRANGER,
        vec![publish_msg(newer(b"cid-1", "2021-01-01T00:00:00Z"))],
        Code::AlreadyPublished,
    )
    .await;
    w.refused(UPLOADER, vec![publish(b"cid-unknown")], Code::UnknownCid)
        .await;
    let stored = w.node.store.committed().release(&id).unwrap().unwrap();
    assert_eq!(stored.version, 0);

    // the publisher's later message replaces it; the old one is history
    w.send(
        UPLOADER,
        vec![publish_msg(newer(b"cid-1", "2021-01-01T00:00:00Z"))],
    )
    .await
    .ok();
    let state = w.node.store.committed();
    let now = state.release(&id).unwrap().unwrap();
    assert_eq!(now.version, 1);
    assert_eq!(state.release_version(&id, 0).unwrap().unwrap(), stored);
    assert_eq!(now.publisher, stored.publisher);
}
