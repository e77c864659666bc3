//! Issue 21: an upload's artwork is on chain as raw sha2-256 CIDv1s with
//! their sizes, its audio facts with it. Each replica is charged the blob
//! and the images; an image may be shared by several uploads (an album's
//! cover) but never be another upload's audio or blob.

mod inproc;
use inproc::rights::*;
use stave::keyspaces::uploads::UploadsRead;
use stave::media::cid::raw_cid;
use stave::tx::Code;

fn with_cover(cid: &[u8], cover: &[u8], size: u64) -> stave::proto::rights::UploadManifest {
    let mut m = manifest(cid);
    m.image_cids = vec![raw_cid(cover).to_vec()];
    m.image_sizes = vec![size];
    m
}

#[tokio::test(flavor = "multi_thread")]
async fn images_are_recorded_charged_and_shared_but_never_another_uploads_blob() {
    let mut w = World::new().await;
    w.send(
        VALIDATORS[0],
        vec![upload_action(UPLOADER, with_cover(b"t-1", b"album", 1000))],
    )
    .await
    .ok();
    let state = w.node.store.committed();
    let u = state
        .upload(&label_cid(b"t-1"))
        .unwrap()
        .expect("registered");
    assert_eq!(u.image_cids, vec![raw_cid(b"album").to_vec()]);
    assert_eq!(u.image_sizes, vec![1000]);
    assert_eq!(u.facts, manifest(b"t-1").facts);
    // the replica pays the blob and the image
    assert_eq!(
        state.validator_replicated(&pk(VALIDATORS[0])).unwrap(),
        4096 + 1000
    );
    assert_eq!(state.content_pool_used("").unwrap(), 3 * (4096 + 1000));
    let first = state.upload_by_image(&raw_cid(b"album")).unwrap().unwrap();
    assert_eq!(first.flac_cid, label_cid(b"t-1"));

    // the second track shares the cover; the first upload keeps the index
    w.send(
        VALIDATORS[0],
        vec![upload_action(UPLOADER, with_cover(b"t-2", b"album", 1000))],
    )
    .await
    .ok();
    let state = w.node.store.committed();
    assert!(state.upload(&label_cid(b"t-2")).unwrap().is_some());
    let first = state.upload_by_image(&raw_cid(b"album")).unwrap().unwrap();
    assert_eq!(first.flac_cid, label_cid(b"t-1"));

    // the second upload pays for its copy too
    assert_eq!(
        state.validator_replicated(&pk(VALIDATORS[0])).unwrap(),
        2 * (4096 + 1000)
    );

    // the shared cover at another size
    w.refused(
        VALIDATORS[0],
        vec![upload_action(UPLOADER, with_cover(b"t-3", b"album", 999))],
        Code::Conflict,
    )
    .await;
    // an image that is another upload's blob or audio
    let mut raw = manifest(&raw_cid(b"audio-7"));
    raw.encrypted_cid = raw_cid(b"blob-7").to_vec();
    w.send(VALIDATORS[0], vec![upload_action(UPLOADER, raw)])
        .await
        .ok();
    for taken in [raw_cid(b"blob-7"), raw_cid(b"audio-7")] {
        let mut m = manifest(b"t-4");
        m.image_cids = vec![taken.to_vec()];
        m.image_sizes = vec![10];
        w.refused(
            VALIDATORS[0],
            vec![upload_action(UPLOADER, m)],
            Code::Conflict,
        )
        .await;
    }
    // a blob that is an image, and audio that is an image
    let mut m = manifest(b"t-5");
    m.encrypted_cid = raw_cid(b"album").to_vec();
    w.refused(
        VALIDATORS[0],
        vec![upload_action(UPLOADER, m)],
        Code::Conflict,
    )
    .await;
    w.refused(
        VALIDATORS[0],
        vec![upload_action(UPLOADER, manifest(&raw_cid(b"album")))],
        Code::Conflict,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn image_cids_sizes_and_facts_are_checked() {
    let mut w = World::new().await;
    type Edit = Box<dyn Fn(&mut stave::proto::rights::UploadManifest)>;
    let edits: Vec<(&str, Edit)> = vec![
        // each cid is the 36-byte binary form, nothing longer or shorter
        (
            "flac_cid",
            Box::new(|m| m.flac_cid = b"track-1.flac".to_vec()),
        ),
        (
            "encrypted_cid",
            Box::new(|m| m.encrypted_cid = [&m.encrypted_cid[..], &[0]].concat()),
        ),
        (
            "encrypted_cid",
            Box::new(|m| m.encrypted_cid[1] = 0x70), // dag-pb, not raw
        ),
        (
            "image cid",
            Box::new(|m| m.image_cids = vec![b"cover.png".to_vec()]),
        ),
        ("image_sizes", Box::new(|m| m.image_sizes.clear())),
        (
            "max_image_bytes",
            Box::new(|m| m.image_sizes = vec![(32 << 20) + 1]),
        ),
        ("audio facts", Box::new(|m| m.facts = None)),
        (
            "duration_ms",
            Box::new(|m| m.facts.as_mut().unwrap().duration_ms += 1),
        ),
        (
            "source_codec",
            Box::new(|m| m.facts.as_mut().unwrap().source_codec = "MP3!".into()),
        ),
    ];
    for (what, edit) in edits {
        let mut m = with_cover(b"t-9", b"cover", 500);
        edit(&mut m);
        let r = w
            .refused(
                VALIDATORS[0],
                vec![upload_action(UPLOADER, m)],
                Code::InvalidManifest,
            )
            .await;
        assert!(r.log.contains(what), "{what}: {}", r.log);
    }
    assert!(w
        .node
        .store
        .committed()
        .upload(&label_cid(b"t-9"))
        .unwrap()
        .is_none());
}
