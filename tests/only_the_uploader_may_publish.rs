//! Rule 2: only the uploader may publish an upload; publishing moves it to
//! PUBLISHED (never back), stores the release and creates the OWNER.

mod inproc;
use inproc::rights::*;
use stave::keyspaces::releases::ReleasesRead;
use stave::keyspaces::uploads::{status_of, UploadsRead};
use stave::proto::rights as pb;
use stave::tx::Code;

#[tokio::test(flavor = "multi_thread")]
async fn only_the_uploader_may_publish() {
    let mut w = World::new().await;
    w.send(
        VALIDATORS[0],
        vec![upload_action(UPLOADER, manifest(b"cid-1"))],
    )
    .await
    .ok();
    w.refused(STRANGER, vec![publish(b"cid-1")], Code::NotUploader)
        .await;
    w.refused(VALIDATORS[0], vec![publish(b"cid-1")], Code::NotUploader)
        .await;
    assert_eq!(w.role(b"cid-1", STRANGER), None);

    w.send(UPLOADER, vec![publish(b"cid-1")]).await.ok();
    let state = w.node.store.committed();
    assert_eq!(
        status_of(&state.upload(&label_cid(b"cid-1")).unwrap().unwrap()),
        pb::UploadStatus::Published
    );
    let id = stave::ddex::ids::gtin14(&stave::ddex::build::icpn_for(&label_cid(b"cid-1"))).unwrap();
    let r = state.release(&id).unwrap().expect("release");
    assert_eq!(r.publisher, pk(UPLOADER).to_vec());
    assert_eq!(r.signer, pk(UPLOADER).to_vec());
    assert_eq!(r.message.as_ref(), Some(&release_of(b"cid-1")));
    assert_eq!(r.tracks.len(), 1);
    assert_eq!((r.tracks[0].disc, r.tracks[0].track), (1, 1));
    assert_eq!(w.role(b"cid-1", UPLOADER), Some(pb::Role::Owner));

    // the ABCI query paths serve the records, with proofs
    let q = w.node.query(&format!("/releases/{id}"), b"", 0, true).await;
    assert!(q.code.is_ok(), "{}", q.log);
    assert_eq!(
        <stave::proto::ddex::ReleaseRecord as prost::Message>::decode(q.value.as_ref()).unwrap(),
        r
    );
    assert!(q.proof.is_some());
    let path = format!(
        "/entitlements/{}/{}",
        hex::encode(label_cid(b"cid-1")),
        hex::encode(pk(UPLOADER))
    );
    let q = w.node.query(&path, b"", 0, false).await;
    let e = <pb::Entitlement as prost::Message>::decode(q.value.as_ref()).unwrap();
    assert_eq!(e.role, pb::Role::Owner as i32);
    let q = w.node.query("/entitlements/zz", b"", 0, false).await;
    assert!(q.code.is_err());
}
