//! Bad input: a double publish gets ALREADY_PUBLISHED and changes nothing;
//! publishing an unknown cid gets UNKNOWN_CID.

mod inproc;
use inproc::rights::*;
use stave::tx::Code;

#[tokio::test(flavor = "multi_thread")]
async fn a_release_is_published_once() {
    let mut w = World::published(b"cid-1").await;
    let mut other = ern();
    other.title = "Another title".into();
    w.refused(
        UPLOADER,
        vec![publish(b"cid-1", other)],
        Code::AlreadyPublished,
    )
    .await;
    w.refused(
        UPLOADER,
        vec![publish(b"cid-unknown", ern())],
        Code::UnknownCid,
    )
    .await;
}
