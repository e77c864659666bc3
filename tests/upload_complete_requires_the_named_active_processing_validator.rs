//! Rule 1: the tx signer of `UploadComplete` must be the processing
//! validator the manifest names, and that validator must be active. The
//! upload starts as PROCESSING_COMPLETE with its recovery DEK.

mod inproc;
use inproc::governance_content::{grouped_in, GROUP};
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
    let u = state
        .upload(&label_cid(b"cid-1"))
        .unwrap()
        .expect("upload stored");
    assert_eq!(status_of(&u), pb::UploadStatus::ProcessingComplete);
    assert_eq!(u.uploader_pubkey, pk(UPLOADER).to_vec());
    assert_eq!(u.processing_validator, pk(VALIDATORS[0]).to_vec());
    assert_eq!(u.encrypted_size, 4096);
    let dek = state
        .recovery_dek(&label_cid(b"cid-1"))
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

/// Review M7: an ACTIVE group's uploads may make validators store at most
/// `group_content_budget` bytes (`encrypted_size × replicas`). A refused
/// upload charges nothing.
#[tokio::test(flavor = "multi_thread")]
async fn a_group_may_not_upload_past_its_content_budget() {
    // manifest(): 4096 bytes, three replicas = 12,288 per upload; two fit
    let w = World::with_params(serde_json::json!({"rights": {"group_content_budget": 2 * 12_288}}))
        .await;
    let mut w = grouped_in(w, b"g-1").await;
    assert!(w
        .node
        .store
        .committed()
        .upload(&label_cid(b"g-1"))
        .unwrap()
        .is_some());
    let mut m = manifest(b"g-2");
    m.group_id = GROUP.into();
    w.send(VALIDATORS[0], vec![upload_action(UPLOADER, m)])
        .await
        .ok();
    assert_eq!(
        w.node.store.committed().content_pool_used(GROUP).unwrap(),
        2 * 12_288
    );
    let mut m = manifest(b"g-3");
    m.group_id = GROUP.into();
    let r = w
        .refused(
            VALIDATORS[0],
            vec![upload_action(UPLOADER, m)],
            Code::RightsCapExceeded,
        )
        .await;
    assert!(r.log.contains("group_content_budget"), "{}", r.log);
    let state = w.node.store.committed();
    assert_eq!(state.content_pool_used(GROUP).unwrap(), 2 * 12_288);
    assert!(state.upload(&label_cid(b"g-3")).unwrap().is_none());
    // the same content with no group is charged to the ungrouped pool
    w.send(
        VALIDATORS[0],
        vec![upload_action(UPLOADER, manifest(b"g-3"))],
    )
    .await
    .ok();
    let state = w.node.store.committed();
    assert_eq!(state.content_pool_used(GROUP).unwrap(), 2 * 12_288);
    assert_eq!(state.content_pool_used("").unwrap(), 12_288);
}

/// Review M7: uploads without a group share one budget, so they alone
/// cannot fill the validators' quotas (a Byzantine processing validator
/// with fresh uploader keys).
#[tokio::test(flavor = "multi_thread")]
async fn ungrouped_uploads_share_one_content_budget() {
    let mut w =
        World::with_params(serde_json::json!({"rights": {"ungrouped_content_budget": 12_288}}))
            .await;
    w.send(
        VALIDATORS[0],
        vec![upload_action(UPLOADER, manifest(b"u-1"))],
    )
    .await
    .ok();
    // another uploader key changes nothing: the pool is shared
    let r = w
        .refused(
            VALIDATORS[0],
            vec![upload_action(STRANGER, manifest(b"u-2"))],
            Code::RightsCapExceeded,
        )
        .await;
    assert!(r.log.contains("ungrouped_content_budget"), "{}", r.log);
    let state = w.node.store.committed();
    assert_eq!(state.content_pool_used("").unwrap(), 12_288);
    assert_eq!(
        state.validator_replicated(&pk(VALIDATORS[0])).unwrap(),
        4096
    );
}

/// Review M7: a validator may be named to replicate at most
/// `validator_replication_quota` encrypted bytes, whoever uploads.
#[tokio::test(flavor = "multi_thread")]
async fn a_validator_may_not_be_named_past_its_replication_quota() {
    let mut w = World::with_params(
        serde_json::json!({"rights": {"validator_replication_quota": 2 * 4096}}),
    )
    .await;
    for cid in [&b"q-1"[..], b"q-2"] {
        w.send(VALIDATORS[0], vec![upload_action(UPLOADER, manifest(cid))])
            .await
            .ok();
    }
    let r = w
        .refused(
            VALIDATORS[0],
            vec![upload_action(UPLOADER, manifest(b"q-3"))],
            Code::RightsCapExceeded,
        )
        .await;
    assert!(r.log.contains("validator_replication_quota"), "{}", r.log);
    let state = w.node.store.committed();
    for v in &VALIDATORS[..3] {
        assert_eq!(state.validator_replicated(&pk(*v)).unwrap(), 2 * 4096);
    }
    assert_eq!(state.validator_replicated(&pk(VALIDATORS[3])).unwrap(), 0);
    // a replica with room left takes it
    let mut m = manifest(b"q-3");
    m.replication_set = vec![pk(VALIDATORS[3]).to_vec()];
    w.send(VALIDATORS[0], vec![upload_action(UPLOADER, m)])
        .await
        .ok();
    let state = w.node.store.committed();
    assert_eq!(
        state.validator_replicated(&pk(VALIDATORS[3])).unwrap(),
        4096
    );
}
