//! An `UploadComplete` for benches: one validator (`op`) replicates, holds
//! the DEK and processes; `owner` signs the manifest.

use ed25519_dalek::SigningKey;
use stave::keyspaces::uploads::sign_manifest;
use stave::proto::rights as pb;
use stave::tx::Action;

pub fn upload_complete(
    chain: &str,
    owner: &SigningKey,
    op: &SigningKey,
    flac_cid: Vec<u8>,
) -> Action {
    let vk = op.verifying_key().to_bytes().to_vec();
    let eph = x25519_dalek::PublicKey::from(&x25519_dalek::StaticSecret::from([9; 32]));
    let m = pb::UploadManifest {
        chain_id: chain.into(),
        encrypted_cid: stave::media::cid::raw_cid(&[b"enc-", flac_cid.as_slice()].concat())
            .to_vec(),
        flac_cid,
        encrypted_size: 1,
        replication_set: vec![vk.clone()],
        dek_holder_set: vec![vk.clone()],
        processing_validator: vk,
        recovery_dek: Some(pb::WrappedDek {
            wrapped_dek: vec![1; 48],
            ephemeral_pubkey: eph.as_bytes().to_vec(),
            ..Default::default()
        }),
        dek_commitment: vec![0x11; 32],
        facts: Some(pb::AudioFacts {
            sample_rate: 44_100,
            channels: 2,
            bits_per_sample: 16,
            frames: 44_100,
            duration_ms: 1000,
            source_codec: "flac".into(),
            lossless_source: true,
        }),
        ..Default::default()
    };
    Action::UploadComplete(sign_manifest(owner, m).try_into().expect("uc"))
}
