//! The uploader's side of `ContentService`, for the CLI and for programs:
//! choose the sets, sign the intent, stream the file, follow the job,
//! check the manifest it produced and sign it.
//!
//! The recovery key is derived from the uploader's identity key
//! ([`recovery_secret`]), so the same keyring key can unwrap the recovery
//! copy of every DEK it uploaded.

use std::path::Path;

use anyhow::Context;
use ed25519_dalek::{Signer, SigningKey};
use hkdf::Hkdf;
use sha2::{Digest, Sha256};
use tokio::io::AsyncReadExt;
use x25519_dalek::{PublicKey, StaticSecret};

use super::intent::sign_intent;
use crate::client::StaveClient;
use crate::proto::content as pb;
use crate::proto::content::upload_request::Part;
use crate::proto::rights::UploadManifest;

/// Bytes of audio per `Upload` message.
pub const CHUNK: usize = 256 * 1024;

/// The uploader's X25519 recovery key: HKDF-SHA256 of the identity key's
/// seed, info `"stave/recovery-x25519/v1"`.
pub fn recovery_secret(key: &SigningKey) -> StaticSecret {
    let hk = Hkdf::<Sha256>::new(None, key.as_bytes());
    let mut okm = zeroize::Zeroizing::new([0u8; 32]);
    // 32 bytes is always a valid HKDF-SHA256 output length
    let _ = hk.expand(b"stave/recovery-x25519/v1", okm.as_mut());
    StaticSecret::from(*okm)
}

/// Who processes, stores and holds the key of an upload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub processing_validator: [u8; 32],
    pub replication_set: Vec<[u8; 32]>,
    pub dek_holder_set: Vec<[u8; 32]>,
    pub group_id: String,
}

/// The default set of `n` validators: `me` first, then the other ACTIVE
/// validators ranked by sha256(validator ‖ uploader), so one uploader's
/// files spread the same way every time and different uploaders' differ.
pub fn default_set(
    me: &[u8; 32],
    active: &[[u8; 32]],
    uploader: &[u8; 32],
    n: usize,
) -> Vec<[u8; 32]> {
    let mut others: Vec<([u8; 32], [u8; 32])> = active
        .iter()
        .filter(|k| *k != me)
        .map(|k| {
            (
                Sha256::new()
                    .chain_update(k)
                    .chain_update(uploader)
                    .finalize()
                    .into(),
                *k,
            )
        })
        .collect();
    others.sort();
    std::iter::once(*me)
        .chain(others.into_iter().map(|(_, k)| k))
        .take(n.max(1))
        .collect()
}

/// The operator keys of every ACTIVE validator.
pub async fn active_validators(c: &mut StaveClient) -> anyhow::Result<Vec<[u8; 32]>> {
    use crate::proto::governance::ValidatorsRequest;
    let mut out = Vec::new();
    let mut after = Vec::new();
    loop {
        let r = c
            .governance
            .validators(ValidatorsRequest {
                start_after: after.clone(),
                limit: 0,
            })
            .await?
            .into_inner();
        for v in &r.validators {
            let key = v.record.as_ref().and_then(|r| r.validator.as_ref());
            if let (Some(k), "ACTIVE") = (key, v.status.as_str()) {
                if let Ok(k) = <[u8; 32]>::try_from(k.operator_key.as_slice()) {
                    out.push(k);
                }
            }
        }
        if r.next.is_empty() {
            return Ok(out);
        }
        after = r.next;
    }
}

async fn size_of(file: &Path) -> anyhow::Result<u64> {
    Ok(tokio::fs::metadata(file)
        .await
        .with_context(|| format!("{}", file.display()))?
        .len())
}

/// Streams `file`, then each `art` file, to the node under a fresh intent
/// for `plan`; `progress` hears the bytes sent so far. Answers once the
/// node has every byte.
pub async fn send(
    c: &mut StaveClient,
    key: &SigningKey,
    plan: &Plan,
    file: &Path,
    art: &[std::path::PathBuf],
    mut progress: impl FnMut(u64) + Send + 'static,
) -> anyhow::Result<pb::UploadResponse> {
    let node = c.content.node(pb::NodeRequest {}).await?.into_inner();
    let size = size_of(file).await?;
    let mut art_bytes = Vec::with_capacity(art.len());
    for a in art {
        art_bytes.push(size_of(a).await?);
    }
    let intent = pb::UploadIntent {
        chain_id: node.chain_id,
        timestamp_ms: super::now_ms(),
        nonce: rand::random::<[u8; 16]>().to_vec(),
        uploader_pubkey: vec![],
        processing_validator: plan.processing_validator.to_vec(),
        replication_set: plan.replication_set.iter().map(|k| k.to_vec()).collect(),
        dek_holder_set: plan.dek_holder_set.iter().map(|k| k.to_vec()).collect(),
        group_id: plan.group_id.clone(),
        recovery_x25519: PublicKey::from(&recovery_secret(key)).to_bytes().to_vec(),
        audio_bytes: size,
        art_bytes,
    };
    let first = pb::UploadRequest {
        part: Some(Part::Intent(sign_intent(key, intent))),
    };
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    let mut files = Vec::with_capacity(1 + art.len());
    for (i, path) in std::iter::once(file)
        .chain(art.iter().map(|a| a.as_path()))
        .enumerate()
    {
        let f = tokio::fs::File::open(path)
            .await
            .with_context(|| format!("{}", path.display()))?;
        files.push((i > 0, f));
    }
    tokio::spawn(async move {
        if tx.send(first).await.is_err() {
            return;
        }
        let mut sent = 0u64;
        for (is_art, mut f) in files {
            loop {
                let mut buf = vec![0u8; CHUNK];
                let n = match f.read(&mut buf).await {
                    Ok(0) => break,
                    // the node sees a short stream (SIZE_MISMATCH)
                    Err(_) => return,
                    Ok(n) => n,
                };
                buf.truncate(n);
                let part = if is_art {
                    Part::Art(buf)
                } else {
                    Part::Audio(buf)
                };
                if tx
                    .send(pb::UploadRequest { part: Some(part) })
                    .await
                    .is_err()
                {
                    return;
                }
                sent += n as u64;
                progress(sent);
            }
        }
    });
    let r = c
        .content
        .upload(tokio_stream::wrappers::ReceiverStream::new(rx))
        .await?;
    Ok(r.into_inner())
}

/// Follows the job until `stop` holds for its state (or it ends);
/// `each` hears every state.
pub async fn follow(
    c: &mut StaveClient,
    job_id: &[u8],
    mut each: impl FnMut(&pb::JobState),
    stop: impl Fn(&pb::JobState) -> bool,
) -> anyhow::Result<pb::JobState> {
    let mut s = c
        .content
        .status(pb::StatusRequest {
            job_id: job_id.to_vec(),
        })
        .await?
        .into_inner();
    let mut last = None;
    while let Some(state) = s.message().await? {
        each(&state);
        let end = stop(&state) || matches!(state.status.as_str(), "COMPLETE" | "FAILED");
        last = Some(state);
        if end {
            break;
        }
    }
    last.ok_or_else(|| anyhow::anyhow!("the status stream ended before any state"))
}

/// Whether the job waits for its manifest signature.
pub fn awaiting_signature(s: &pb::JobState) -> bool {
    s.manifest.is_some() && !s.signed
}

/// Checks the manifest the node prepared before the uploader signs it:
/// its chain, one image per artwork file sent, audio facts, the sets,
/// group and keys are the plan's, and the recovery copy of the DEK unwraps
/// with the uploader's recovery key to the DEK the `dek_commitment` names.
pub fn check_manifest(
    m: &UploadManifest,
    plan: &Plan,
    key: &SigningKey,
    chain_id: &str,
    images: usize,
) -> anyhow::Result<()> {
    anyhow::ensure!(
        m.chain_id == chain_id,
        "the manifest names chain {:?}, the node is on {chain_id:?}",
        m.chain_id
    );
    anyhow::ensure!(
        m.image_cids.len() == images && m.image_sizes.len() == images,
        "the manifest names {} images; this upload sent {images}",
        m.image_cids.len()
    );
    anyhow::ensure!(m.facts.is_some(), "the manifest has no audio facts");
    let cids = [&m.flac_cid, &m.encrypted_cid]
        .into_iter()
        .chain(&m.image_cids);
    for c in cids {
        anyhow::ensure!(
            crate::media::cid::is_raw_cid(c),
            "the manifest names {}, not a raw sha2-256 CIDv1",
            hex::encode(c)
        );
    }
    let keys = |s: &[[u8; 32]]| s.iter().map(|k| k.to_vec()).collect::<Vec<_>>();
    anyhow::ensure!(
        m.processing_validator == plan.processing_validator
            && m.replication_set == keys(&plan.replication_set)
            && m.dek_holder_set == keys(&plan.dek_holder_set)
            && m.group_id == plan.group_id
            && m.uploader_pubkey == key.verifying_key().to_bytes(),
        "the manifest does not match the upload's plan"
    );
    let rec = m
        .recovery_dek
        .as_ref()
        .ok_or_else(|| anyhow::anyhow!("the manifest has no recovery DEK"))?;
    let wrapped = crate::crypto::wrap::WrappedDek {
        ephemeral_pubkey: rec
            .ephemeral_pubkey
            .as_slice()
            .try_into()
            .map_err(|_| anyhow::anyhow!("recovery ephemeral key is not 32 bytes"))?,
        ciphertext: rec.wrapped_dek.clone(),
    };
    let dek = crate::crypto::wrap::unwrap_dek(&recovery_secret(key), &wrapped, &m.flac_cid)
        .context("the recovery DEK does not unwrap with this key")?;
    anyhow::ensure!(
        crate::crypto::dek_commitment(&dek, &m.encrypted_cid).as_slice() == m.dek_commitment,
        "the recovery DEK is not the one dek_commitment names"
    );
    Ok(())
}

/// Signs the checked manifest and sends `Complete`.
pub async fn complete(
    c: &mut StaveClient,
    key: &SigningKey,
    job_id: &[u8],
    m: &UploadManifest,
) -> anyhow::Result<()> {
    let sig = key.sign(&crate::keyspaces::uploads::manifest_sign_bytes(m));
    c.content
        .complete(pb::CompleteRequest {
            job_id: job_id.to_vec(),
            signature: sig.to_bytes().to_vec(),
        })
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_set_starts_with_me_and_is_stable_per_uploader() {
        let vals: Vec<[u8; 32]> = (1..=6u8).map(|i| [i; 32]).collect();
        let a = default_set(&[3; 32], &vals, &[9; 32], 3);
        assert_eq!(a.len(), 3);
        assert_eq!(a[0], [3; 32]);
        assert_eq!(a, default_set(&[3; 32], &vals, &[9; 32], 3));
        assert!(!a[1..].contains(&[3; 32]));
        let all = default_set(&[3; 32], &vals, &[9; 32], 10);
        assert_eq!(all.len(), 6, "never more than the validators");
        let spread: std::collections::BTreeSet<_> = (0..20u8)
            .map(|u| default_set(&[3; 32], &vals, &[u; 32], 2)[1])
            .collect();
        assert!(spread.len() > 1, "uploaders spread over validators");
    }

    #[test]
    fn the_recovery_key_is_stable_and_per_identity() {
        let a = SigningKey::from_bytes(&[1; 32]);
        let b = SigningKey::from_bytes(&[2; 32]);
        let pk = |k: &SigningKey| PublicKey::from(&recovery_secret(k)).to_bytes();
        assert_eq!(pk(&a), pk(&a));
        assert_ne!(pk(&a), pk(&b));
    }

    /// A manifest the node could have prepared for `plan`, and its key.
    fn prepared(key: &SigningKey, plan: &Plan) -> UploadManifest {
        let dek = crate::crypto::generate_dek();
        let flac_cid = crate::media::cid::raw_cid(b"flac").to_vec();
        let encrypted_cid = crate::media::cid::raw_cid(b"blob").to_vec();
        let to = PublicKey::from(&recovery_secret(key)).to_bytes();
        let w = crate::crypto::wrap::wrap_dek(&dek, &to, &flac_cid).unwrap();
        UploadManifest {
            chain_id: "c".into(),
            dek_commitment: crate::crypto::dek_commitment(&dek, &encrypted_cid).to_vec(),
            flac_cid,
            encrypted_cid,
            image_cids: vec![crate::media::cid::raw_cid(b"png").to_vec()],
            image_sizes: vec![100],
            facts: Some(Default::default()),
            processing_validator: plan.processing_validator.to_vec(),
            replication_set: vec![plan.processing_validator.to_vec()],
            dek_holder_set: vec![plan.processing_validator.to_vec()],
            group_id: plan.group_id.clone(),
            uploader_pubkey: key.verifying_key().to_bytes().to_vec(),
            recovery_dek: Some(crate::proto::rights::WrappedDek {
                wrapped_dek: w.ciphertext,
                ephemeral_pubkey: w.ephemeral_pubkey.to_vec(),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn the_uploader_signs_only_the_manifest_of_its_plan_with_raw_cids() {
        let key = SigningKey::from_bytes(&[7; 32]);
        let plan = Plan {
            processing_validator: [3; 32],
            replication_set: vec![[3; 32]],
            dek_holder_set: vec![[3; 32]],
            group_id: "label".into(),
        };
        let good = prepared(&key, &plan);
        check_manifest(&good, &plan, &key, "c", 1).unwrap();
        type Edit = fn(&mut UploadManifest);
        let edits: [(&str, Edit); 8] = [
            ("chain", |m| m.chain_id = "other".into()),
            ("images", |m| m.image_sizes.clear()),
            ("facts", |m| m.facts = None),
            ("CIDv1", |m| m.flac_cid.truncate(32)),
            ("CIDv1", |m| m.encrypted_cid[1] = 0x70),
            ("CIDv1", |m| m.image_cids[0] = b"cover.png".to_vec()),
            ("plan", |m| m.group_id = "squatter".into()),
            ("dek_commitment", |m| m.dek_commitment[0] ^= 1),
        ];
        for (what, edit) in edits {
            let mut m = good.clone();
            edit(&mut m);
            let e = check_manifest(&m, &plan, &key, "c", 1).unwrap_err();
            assert!(format!("{e:#}").contains(what), "{what}: {e:#}");
        }
        let e = check_manifest(&good, &plan, &key, "c", 2).unwrap_err();
        assert!(e.to_string().contains("images"), "{e}");
    }
}
