//! Rule 1: the tx signer of `UploadComplete` must be the processing
//! validator the manifest names, and that validator must be active. The
//! upload starts as PROCESSING_COMPLETE with its recovery DEK.

mod inproc;
use inproc::rights::*;
use stave::keyspaces::deks::DeksRead;
use stave::keyspaces::uploads::{status_of, UploadsRead};
use stave::proto::rights as pb;
use stave::tx::Code;

#[tokio::test(flavor = "multi_thread")]
async fn upload_complete_requires_the_named_active_processing_validator() {
    let mut w = World::new().await;
    // another validator than the one named: refused
    w.refused(
        VALIDATORS[1],
        vec![upload_action(UPLOADER, manifest(b"cid-1"))],
        Code::NotProcessingValidator,
    )
    .await;
    // a non-validator named as processor and signing: refused
    let mut m = manifest(b"cid-1");
    m.processing_validator = pk(STRANGER).to_vec();
    w.refused(
        STRANGER,
        vec![upload_action(UPLOADER, m)],
        Code::NotProcessingValidator,
    )
    .await;
    // a set member that is not a validator: refused
    let mut m = manifest(b"cid-1");
    m.dek_holder_set.push(pk(STRANGER).to_vec());
    w.refused(
        VALIDATORS[0],
        vec![upload_action(UPLOADER, m)],
        Code::InvalidManifest,
    )
    .await;
    // a manifest for another chain: refused
    let mut m = manifest(b"cid-1");
    m.chain_id = "other-chain".into();
    w.refused(
        VALIDATORS[0],
        vec![upload_action(UPLOADER, m)],
        Code::InvalidManifest,
    )
    .await;

    // the named, active validator: allowed
    w.send(
        VALIDATORS[0],
        vec![upload_action(UPLOADER, manifest(b"cid-1"))],
    )
    .await
    .ok();
    let state = w.node.store.committed();
    let u = state.upload(b"cid-1").unwrap().expect("upload stored");
    assert_eq!(status_of(&u), pb::UploadStatus::ProcessingComplete);
    assert_eq!(u.uploader_pubkey, pk(UPLOADER).to_vec());
    assert_eq!(u.processing_validator, pk(VALIDATORS[0]).to_vec());
    assert_eq!(u.encrypted_size, 4096);
    let dek = state
        .recovery_dek(b"cid-1")
        .unwrap()
        .expect("recovery dek stored");
    assert_eq!(dek.uploader_pubkey, pk(UPLOADER).to_vec());

    // the same cid again: refused
    w.refused(
        VALIDATORS[0],
        vec![upload_action(UPLOADER, manifest(b"cid-1"))],
        Code::UploadExists,
    )
    .await;
}

/// Review M7: an upload may not declare more encrypted bytes than the
/// genesis cap, since every replica and DEK holder must make room for them.
#[tokio::test(flavor = "multi_thread")]
async fn an_upload_may_not_declare_more_than_max_encrypted_bytes() {
    let mut w =
        World::with_params(serde_json::json!({"rights": {"max_encrypted_bytes": 4096}})).await;
    let mut m = manifest(b"cid-big");
    m.encrypted_size = 4097;
    let r = w
        .refused(
            VALIDATORS[0],
            vec![upload_action(UPLOADER, m)],
            Code::InvalidManifest,
        )
        .await;
    assert!(r.log.contains("max_encrypted_bytes"), "{}", r.log);
    // at the cap: allowed
    w.send(
        VALIDATORS[0],
        vec![upload_action(UPLOADER, manifest(b"cid-big"))],
    )
    .await
    .ok();
}
