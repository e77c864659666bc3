//! The upload manifest the uploader signs, and the client-side builder.
//!
//! Sign bytes: `"stave/upload-manifest/v1"`, then every field in proto
//! order, each byte string or string as a 4-byte big-endian length and its
//! bytes, each repeated field as a 4-byte count and its items, numbers as
//! 8 bytes big-endian, and the recovery DEK's four fields after the group id
//! (before the uploader key and the DEK commitment), then the audio facts
//! (a presence byte, then each fact) and the image sizes (a count, then
//! each size). The encoding is injective, so no two
//! manifests share sign bytes, and it does not depend on protobuf encoding.

use ed25519_dalek::{Signer, SigningKey};

use crate::proto::rights as pb;

/// The domain tag the uploader's signature covers first.
pub const MANIFEST_DOMAIN: &[u8] = b"stave/upload-manifest/v1";

/// A 4-byte big-endian length, then `b`.
pub(crate) fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&u32::try_from(b.len()).unwrap_or(u32::MAX).to_be_bytes());
    out.extend_from_slice(b);
}

/// A 4-byte big-endian count, then each item as [`put_bytes`].
pub(crate) fn put_list(out: &mut Vec<u8>, items: &[Vec<u8>]) {
    out.extend_from_slice(&u32::try_from(items.len()).unwrap_or(u32::MAX).to_be_bytes());
    for i in items {
        put_bytes(out, i);
    }
}

/// The bytes the uploader signs.
pub fn manifest_sign_bytes(m: &pb::UploadManifest) -> Vec<u8> {
    let mut out = MANIFEST_DOMAIN.to_vec();
    put_bytes(&mut out, m.chain_id.as_bytes());
    put_bytes(&mut out, &m.flac_cid);
    put_bytes(&mut out, &m.encrypted_cid);
    put_list(&mut out, &m.image_cids);
    out.extend_from_slice(&m.encrypted_size.to_be_bytes());
    put_list(&mut out, &m.replication_set);
    put_list(&mut out, &m.dek_holder_set);
    put_bytes(&mut out, &m.processing_validator);
    put_bytes(&mut out, m.group_id.as_bytes());
    let dek = m.recovery_dek.clone().unwrap_or_default();
    out.push(u8::from(m.recovery_dek.is_some()));
    put_bytes(&mut out, &dek.cid);
    put_bytes(&mut out, &dek.wrapped_dek);
    put_bytes(&mut out, &dek.ephemeral_pubkey);
    put_bytes(&mut out, &dek.uploader_pubkey);
    put_bytes(&mut out, &m.uploader_pubkey);
    put_bytes(&mut out, &m.dek_commitment);
    put_facts(&mut out, m.facts.as_ref());
    out.extend_from_slice(
        &u32::try_from(m.image_sizes.len())
            .unwrap_or(u32::MAX)
            .to_be_bytes(),
    );
    for s in &m.image_sizes {
        out.extend_from_slice(&s.to_be_bytes());
    }
    out
}

/// A presence byte, then each field: numbers as 8 bytes big-endian, the
/// codec as [`put_bytes`], the flag as one byte.
fn put_facts(out: &mut Vec<u8>, f: Option<&pb::AudioFacts>) {
    out.push(u8::from(f.is_some()));
    let f = f.cloned().unwrap_or_default();
    for n in [
        u64::from(f.sample_rate),
        u64::from(f.channels),
        u64::from(f.bits_per_sample),
        f.frames,
        f.duration_ms,
    ] {
        out.extend_from_slice(&n.to_be_bytes());
    }
    put_bytes(out, f.source_codec.as_bytes());
    out.push(u8::from(f.lossless_source));
}

/// Builds and signs an `UploadComplete` for `manifest`. Sets the manifest's
/// `uploader_pubkey` and its recovery DEK's `uploader_pubkey` and `cid` from
/// the key and `flac_cid`, so a caller cannot get them inconsistent.
///
/// # Examples
/// ```
/// use stave::keyspaces::uploads::{sign_manifest, manifest_sign_bytes};
/// use stave::proto::rights as pb;
/// let uploader = ed25519_dalek::SigningKey::from_bytes(&[7; 32]);
/// let m = pb::UploadManifest { chain_id: "c".into(), flac_cid: b"cid".to_vec(), ..Default::default() };
/// let uc = sign_manifest(&uploader, m);
/// let m = uc.manifest.as_ref().unwrap();
/// assert_eq!(m.uploader_pubkey, uploader.verifying_key().to_bytes().to_vec());
/// assert_eq!(m.recovery_dek.as_ref().unwrap().cid, b"cid".to_vec());
/// assert_eq!(uc.uploader_signature.len(), 64);
/// # let _ = manifest_sign_bytes(m);
/// ```
pub fn sign_manifest(
    uploader: &SigningKey,
    mut manifest: pb::UploadManifest,
) -> pb::UploadComplete {
    let pk = uploader.verifying_key().to_bytes().to_vec();
    manifest.uploader_pubkey = pk.clone();
    let mut dek = manifest.recovery_dek.take().unwrap_or_default();
    dek.uploader_pubkey = pk;
    dek.cid = manifest.flac_cid.clone();
    manifest.recovery_dek = Some(dek);
    let sig = uploader.sign(&manifest_sign_bytes(&manifest));
    pb::UploadComplete {
        manifest: Some(manifest),
        uploader_signature: sig.to_bytes().to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_changes_the_sign_bytes() {
        let base = pb::UploadManifest {
            chain_id: "c".into(),
            flac_cid: b"f".to_vec(),
            encrypted_cid: b"e".to_vec(),
            image_cids: vec![b"i".to_vec()],
            encrypted_size: 9,
            replication_set: vec![vec![1; 32]],
            dek_holder_set: vec![vec![2; 32]],
            processing_validator: vec![3; 32],
            group_id: "g".into(),
            recovery_dek: Some(pb::WrappedDek {
                cid: b"f".to_vec(),
                wrapped_dek: vec![4; 48],
                ephemeral_pubkey: vec![5; 32],
                uploader_pubkey: vec![6; 32],
            }),
            uploader_pubkey: vec![6; 32],
            dek_commitment: vec![8; 32],
            facts: Some(pb::AudioFacts {
                sample_rate: 44_100,
                channels: 2,
                bits_per_sample: 16,
                frames: 44_100,
                duration_ms: 1000,
                source_codec: "pcm_s16le".into(),
                lossless_source: true,
            }),
            image_sizes: vec![10],
        };
        let b0 = manifest_sign_bytes(&base);
        type Swap = Box<dyn Fn(&mut pb::UploadManifest)>;
        let variants: Vec<Swap> = vec![
            Box::new(|m| m.chain_id.push('x')),
            Box::new(|m| m.flac_cid.push(0)),
            Box::new(|m| m.encrypted_cid.push(0)),
            Box::new(|m| m.image_cids.push(vec![])),
            Box::new(|m| m.encrypted_size += 1),
            Box::new(|m| m.replication_set[0][0] ^= 1),
            Box::new(|m| m.dek_holder_set.clear()),
            Box::new(|m| m.processing_validator[0] ^= 1),
            Box::new(|m| m.group_id.clear()),
            Box::new(|m| m.recovery_dek.as_mut().unwrap().wrapped_dek[0] ^= 1),
            Box::new(|m| m.recovery_dek.as_mut().unwrap().ephemeral_pubkey[0] ^= 1),
            Box::new(|m| m.recovery_dek = None),
            Box::new(|m| m.uploader_pubkey[0] ^= 1),
            Box::new(|m| m.dek_commitment[0] ^= 1),
            Box::new(|m| m.facts = None),
            Box::new(|m| m.facts.as_mut().unwrap().sample_rate += 1),
            Box::new(|m| m.facts.as_mut().unwrap().channels += 1),
            Box::new(|m| m.facts.as_mut().unwrap().bits_per_sample += 1),
            Box::new(|m| m.facts.as_mut().unwrap().frames += 1),
            Box::new(|m| m.facts.as_mut().unwrap().duration_ms += 1),
            Box::new(|m| m.facts.as_mut().unwrap().source_codec.push('x')),
            Box::new(|m| m.facts.as_mut().unwrap().lossless_source ^= true),
            Box::new(|m| m.image_sizes[0] += 1),
            Box::new(|m| m.image_sizes.push(1)),
            // moving a byte between adjacent fields
            Box::new(|m| {
                m.flac_cid = b"fe".to_vec();
                m.encrypted_cid.clear();
            }),
        ];
        for (i, v) in variants.iter().enumerate() {
            let mut m = base.clone();
            v(&mut m);
            assert_ne!(manifest_sign_bytes(&m), b0, "variant {i}");
        }
    }
}
