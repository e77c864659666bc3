//! A release carries its publisher's signature over (chain id, recording
//! cids, sha256 of the message), by the tx's signer; a signature by another
//! key, over another chain or over other content is refused with
//! RELEASE_SIGNATURE, and the stored record verifies on its own
//! (`releases::sign::verify_record`), failing once its content changes.

mod inproc;
use inproc::rights::*;
use inproc::{key, CHAIN};
use stave::keyspaces::releases::{sign, PublishRelease, ReleasesRead};
use stave::tx::{Action, Code};

fn signed_by(seed: u8, chain: &str, m: stave::proto::ddex::NewReleaseMessage) -> Action {
    Action::PublishRelease(PublishRelease::signed(&key(seed), chain, m))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_release_keeps_a_publisher_signature_anyone_can_check() {
    let mut w = World::new().await;
    w.send(
        VALIDATORS[0],
        vec![upload_action(UPLOADER, manifest(b"cid-1"))],
    )
    .await
    .ok();
    let m = release_of(b"cid-1");
    // CheckTx refuses a bad signature before the mempool takes the tx.
    let raw = inproc::signed(UPLOADER, 0, vec![signed_by(STRANGER, CHAIN, m.clone())]);
    let r = w.node.check_tx(raw, false).await;
    assert_eq!(r.code.value(), Code::ReleaseSignature.value(), "{}", r.log);
    let raw = inproc::signed(UPLOADER, 0, vec![signed_by(UPLOADER, CHAIN, m.clone())]);
    let r = w.node.check_tx(raw, false).await;
    assert!(r.code.is_ok(), "{}", r.log);
    w.refused(
        UPLOADER,
        vec![signed_by(STRANGER, CHAIN, m.clone())],
        Code::ReleaseSignature,
    )
    .await;
    w.refused(
        UPLOADER,
        vec![signed_by(UPLOADER, "another-chain", m.clone())],
        Code::ReleaseSignature,
    )
    .await;
    let mut other = signed_by(UPLOADER, CHAIN, m.clone());
    if let Action::PublishRelease(p) = &mut other {
        p.message.language_and_script_code = "fr".into();
    }
    w.refused(UPLOADER, vec![other], Code::ReleaseSignature)
        .await;

    w.send(UPLOADER, vec![signed_by(UPLOADER, CHAIN, m.clone())])
        .await
        .ok();
    let id = stave::ddex::ids::gtin14(&stave::ddex::build::icpn_for(&label_cid(b"cid-1"))).unwrap();
    let r = w
        .node
        .store
        .committed()
        .release(&id)
        .unwrap()
        .expect("release");
    assert_eq!(
        r.publisher_signature,
        sign::sign(&key(UPLOADER), CHAIN, &m).to_vec()
    );
    sign::verify_record(CHAIN, &r).expect("the stored record verifies");
    let e = sign::verify_record("another-chain", &r).unwrap_err();
    assert_eq!(e.code(), Code::ReleaseSignature, "{e}");
    let mut changed = r.clone();
    if let Some(msg) = changed.message.as_mut() {
        msg.avs_version_id.push('x');
    }
    assert!(sign::verify_record(CHAIN, &changed).is_err());
    let mut other_signer = r.clone();
    other_signer.signer = pk(STRANGER).to_vec();
    assert!(sign::verify_record(CHAIN, &other_signer).is_err());
    let mut cut = r;
    cut.publisher_signature.truncate(63);
    assert!(sign::verify_record(CHAIN, &cut).is_err());
}
