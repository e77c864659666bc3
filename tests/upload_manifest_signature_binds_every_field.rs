//! Rule 1: the uploader's domain-tagged signature covers the whole manifest,
//! so nobody can register content in someone else's name or swap any part.

mod inproc;
use inproc::key;
use inproc::rights::*;
use stave::keyspaces::uploads::{sign_manifest, UploadComplete};
use stave::tx::{Action, Code};

#[tokio::test(flavor = "multi_thread")]
async fn upload_manifest_signature_binds_every_field() {
    let mut w = World::new().await;
    // signed by the stranger, but naming UPLOADER as the uploader
    let mut forged = sign_manifest(&key(STRANGER), manifest(b"cid-1"));
    let m = forged.manifest.as_mut().unwrap();
    m.uploader_pubkey = pk(UPLOADER).to_vec();
    m.recovery_dek.as_mut().unwrap().uploader_pubkey = pk(UPLOADER).to_vec();
    let forged: UploadComplete = forged.try_into().unwrap();
    w.refused(
        VALIDATORS[0],
        vec![Action::UploadComplete(forged)],
        Code::ManifestSignature,
    )
    .await;

    // fields swapped after the uploader signed
    type Swap = Box<dyn Fn(&mut stave::proto::rights::UploadManifest)>;
    let swaps: Vec<Swap> = vec![
        Box::new(|m| m.encrypted_cid = label_cid(b"another-blob")),
        Box::new(|m| m.encrypted_size += 1),
        Box::new(|m| {
            m.image_cids
                .push(stave::media::cid::raw_cid(b"cover").to_vec());
            m.image_sizes.push(1000);
        }),
        Box::new(|m| m.facts.as_mut().unwrap().lossless_source ^= true),
        Box::new(|m| m.replication_set.truncate(1)),
        Box::new(|m| m.dek_holder_set.truncate(2)),
        Box::new(|m| m.recovery_dek.as_mut().unwrap().wrapped_dek[0] ^= 1),
        Box::new(|m| m.group_id = "g".into()),
    ];
    for swap in swaps {
        let mut uc = sign_manifest(&key(UPLOADER), manifest(b"cid-1"));
        swap(uc.manifest.as_mut().unwrap());
        let uc: UploadComplete = uc.try_into().unwrap();
        w.refused(
            VALIDATORS[0],
            vec![Action::UploadComplete(uc)],
            Code::ManifestSignature,
        )
        .await;
    }
    // intact: accepted
    w.send(
        VALIDATORS[0],
        vec![upload_action(UPLOADER, manifest(b"cid-1"))],
    )
    .await
    .ok();
}
