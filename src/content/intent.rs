//! The upload intent: what an uploader asks one validator to do, signed
//! over its canonical bytes and bound to the chain id, a timestamp window
//! and a nonce.
//!
//! Sign bytes: `"stave/upload-intent/v1"`, then every field in proto
//! order, byte strings and strings as a 4-byte big-endian length and their
//! bytes, repeated fields as a 4-byte count and their items, numbers as 8
//! bytes big-endian (the encoding of the upload manifest's sign bytes).

use ed25519_dalek::{Signer, SigningKey};

use super::IngestError;
use crate::keyspaces::uploads::{put_bytes, put_list};
use crate::proto::content as pb;

/// The domain tag the uploader's signature covers first.
pub const INTENT_DOMAIN: &[u8] = b"stave/upload-intent/v1";

/// Bytes of an intent's nonce.
pub const NONCE_LEN: usize = 16;

/// The bytes the uploader signs.
pub fn intent_sign_bytes(i: &pb::UploadIntent) -> Vec<u8> {
    let mut out = INTENT_DOMAIN.to_vec();
    put_bytes(&mut out, i.chain_id.as_bytes());
    out.extend_from_slice(&i.timestamp_ms.to_be_bytes());
    put_bytes(&mut out, &i.nonce);
    put_bytes(&mut out, &i.uploader_pubkey);
    put_bytes(&mut out, &i.processing_validator);
    put_list(&mut out, &i.replication_set);
    put_list(&mut out, &i.dek_holder_set);
    put_bytes(&mut out, i.group_id.as_bytes());
    put_bytes(&mut out, &i.recovery_x25519);
    out.extend_from_slice(&i.audio_bytes.to_be_bytes());
    out.extend_from_slice(
        &u32::try_from(i.art_bytes.len())
            .unwrap_or(u32::MAX)
            .to_be_bytes(),
    );
    for n in &i.art_bytes {
        out.extend_from_slice(&n.to_be_bytes());
    }
    out
}

/// Signs `intent` with `uploader`, setting its `uploader_pubkey` first.
pub fn sign_intent(uploader: &SigningKey, mut intent: pb::UploadIntent) -> pb::SignedIntent {
    intent.uploader_pubkey = uploader.verifying_key().to_bytes().to_vec();
    let signature = uploader
        .sign(&intent_sign_bytes(&intent))
        .to_bytes()
        .to_vec();
    pb::SignedIntent {
        intent: Some(intent),
        signature,
    }
}

/// An intent whose form and signature were checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Intent {
    pub chain_id: String,
    pub timestamp_ms: u64,
    pub nonce: [u8; NONCE_LEN],
    pub uploader: [u8; 32],
    pub processing_validator: [u8; 32],
    pub replication_set: Vec<[u8; 32]>,
    pub dek_holder_set: Vec<[u8; 32]>,
    pub group_id: String,
    pub recovery_x25519: [u8; 32],
    pub audio_bytes: u64,
    /// The byte length of each artwork file after the audio.
    pub art_bytes: Vec<u64>,
}

/// Where an intent is accepted: this chain, within `window_ms` of `now_ms`.
#[derive(Debug, Clone, Copy)]
pub struct IntentCheck<'a> {
    pub chain_id: &'a str,
    pub now_ms: u64,
    pub window_ms: u64,
    /// The most keys either set may name.
    pub max_set_size: usize,
}

fn key32(field: &str, b: &[u8]) -> Result<[u8; 32], IngestError> {
    b.try_into()
        .map_err(|_| IngestError::BadIntent(format!("{field} is {} bytes, not 32", b.len())))
}

fn key_set(field: &str, set: &[Vec<u8>], max: usize) -> Result<Vec<[u8; 32]>, IngestError> {
    if set.is_empty() || set.len() > max {
        return Err(IngestError::BadIntent(format!(
            "{field} has {} keys, not 1..={max}",
            set.len()
        )));
    }
    let mut keys: Vec<[u8; 32]> = Vec::with_capacity(set.len());
    for k in set {
        let k = key32(field, k)?;
        if keys.contains(&k) {
            return Err(IngestError::BadIntent(format!(
                "{field} names {} twice",
                hex::encode(k)
            )));
        }
        keys.push(k);
    }
    Ok(keys)
}

impl Intent {
    /// Checks the form, the chain, the window and the signature (ZIP-215).
    ///
    /// # Errors
    /// `BadIntent`, `WrongChain`, `Stale`, `BadSignature`.
    pub fn verify(signed: &pb::SignedIntent, at: &IntentCheck<'_>) -> Result<Intent, IngestError> {
        let i = signed
            .intent
            .as_ref()
            .ok_or_else(|| IngestError::BadIntent("the signed intent has no intent".into()))?;
        if i.chain_id != at.chain_id {
            return Err(IngestError::WrongChain {
                got: i.chain_id.clone(),
                want: at.chain_id.to_string(),
            });
        }
        if i.timestamp_ms.abs_diff(at.now_ms) > at.window_ms {
            return Err(IngestError::Stale {
                timestamp_ms: i.timestamp_ms,
                now_ms: at.now_ms,
                window_ms: at.window_ms,
            });
        }
        let uploader = key32("uploader_pubkey", &i.uploader_pubkey)?;
        let sig: [u8; 64] = signed.signature.as_slice().try_into().map_err(|_| {
            IngestError::BadIntent(format!(
                "signature is {} bytes, not 64",
                signed.signature.len()
            ))
        })?;
        // the same strict parse as a tx signer: a small-order key would let
        // (R = identity, s = 0) verify any intent under ZIP-215
        let (_, vk) = crate::tx::parse_identity_key(&uploader)
            .map_err(|e| IngestError::BadIntent(format!("uploader_pubkey: {e}")))?;
        vk.verify(
            &ed25519_consensus::Signature::from(sig),
            &intent_sign_bytes(i),
        )
        .map_err(|_| IngestError::BadSignature(hex::encode(uploader)))?;
        Self::from_signed(i, uploader, at.max_set_size)
    }

    fn from_signed(
        i: &pb::UploadIntent,
        uploader: [u8; 32],
        max_set: usize,
    ) -> Result<Intent, IngestError> {
        let nonce = i.nonce.as_slice().try_into().map_err(|_| {
            IngestError::BadIntent(format!("nonce is {} bytes, not {NONCE_LEN}", i.nonce.len()))
        })?;
        let recovery_x25519 = key32("recovery_x25519", &i.recovery_x25519)?;
        crate::crypto::check_x25519_public(&recovery_x25519)
            .map_err(|e| IngestError::BadIntent(format!("recovery_x25519: {e}")))?;
        if i.audio_bytes == 0 || i.art_bytes.contains(&0) {
            return Err(IngestError::Empty);
        }
        Ok(Intent {
            chain_id: i.chain_id.clone(),
            timestamp_ms: i.timestamp_ms,
            nonce,
            uploader,
            processing_validator: key32("processing_validator", &i.processing_validator)?,
            replication_set: key_set("replication_set", &i.replication_set, max_set)?,
            dek_holder_set: key_set("dek_holder_set", &i.dek_holder_set, max_set)?,
            group_id: i.group_id.clone(),
            recovery_x25519,
            audio_bytes: i.audio_bytes,
            art_bytes: i.art_bytes.clone(),
        })
    }

    /// Bytes of all the artwork files.
    pub fn art_total(&self) -> u64 {
        self.art_bytes
            .iter()
            .fold(0u64, |a, n| a.saturating_add(*n))
    }

    /// The replay key: the signer and its nonce.
    pub fn replay_key(&self) -> [u8; 32 + NONCE_LEN] {
        let mut k = [0u8; 32 + NONCE_LEN];
        k[..32].copy_from_slice(&self.uploader);
        k[32..].copy_from_slice(&self.nonce);
        k
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn intent() -> pb::UploadIntent {
        pb::UploadIntent {
            chain_id: "c".into(),
            timestamp_ms: 1_000_000,
            nonce: vec![1; 16],
            uploader_pubkey: vec![],
            processing_validator: vec![2; 32],
            replication_set: vec![vec![2; 32], vec![3; 32]],
            dek_holder_set: vec![vec![2; 32]],
            group_id: "g".into(),
            recovery_x25519: x25519_dalek::PublicKey::from(&x25519_dalek::StaticSecret::from(
                [9; 32],
            ))
            .to_bytes()
            .to_vec(),
            audio_bytes: 100,
            art_bytes: vec![10, 20],
        }
    }

    fn at() -> IntentCheck<'static> {
        IntentCheck {
            chain_id: "c",
            now_ms: 1_000_500,
            window_ms: 1000,
            max_set_size: 8,
        }
    }

    fn key() -> SigningKey {
        SigningKey::from_bytes(&[7; 32])
    }

    #[test]
    fn a_signed_intent_verifies_and_keeps_its_fields() {
        let s = sign_intent(&key(), intent());
        let i = Intent::verify(&s, &at()).expect("valid");
        assert_eq!(i.uploader, key().verifying_key().to_bytes());
        assert_eq!(i.replication_set, vec![[2; 32], [3; 32]]);
        assert_eq!(i.audio_bytes, 100);
        assert_eq!(&i.replay_key()[32..], &[1; 16]);
    }

    #[test]
    fn every_field_is_signed() {
        let base = sign_intent(&key(), intent());
        type Edit = Box<dyn Fn(&mut pb::UploadIntent)>;
        let edits: Vec<Edit> = vec![
            Box::new(|i| i.timestamp_ms += 1),
            Box::new(|i| i.nonce[0] ^= 1),
            Box::new(|i| i.processing_validator[0] ^= 1),
            Box::new(|i| i.replication_set.pop().map(|_| ()).unwrap_or(())),
            Box::new(|i| i.dek_holder_set.push(vec![3; 32])),
            Box::new(|i| i.group_id.push('x')),
            Box::new(|i| i.recovery_x25519[0] ^= 1),
            Box::new(|i| i.audio_bytes += 1),
            Box::new(|i| i.art_bytes[1] += 1),
            Box::new(|i| i.art_bytes.push(1)),
        ];
        for (n, e) in edits.iter().enumerate() {
            let mut s = base.clone();
            e(s.intent.as_mut().expect("intent"));
            let err = Intent::verify(&s, &at()).expect_err("tampered");
            assert_eq!(err.code(), "BAD_SIGNATURE", "edit {n}: {err}");
        }
    }

    /// Under ZIP-215 a small-order key verifies (R = identity, s = 0) over
    /// any message: the intent must refuse such a key before checking.
    #[test]
    fn a_small_order_uploader_cannot_forge_an_intent() {
        let mut identity = [0u8; 32];
        identity[0] = 1; // the neutral point, y = 1
        let mut forged_sig = [0u8; 64];
        forged_sig[..32].copy_from_slice(&identity);
        let vk = ed25519_consensus::VerificationKey::try_from(identity).expect("decodes");
        let mut i = intent();
        i.uploader_pubkey = identity.to_vec();
        let probe = ed25519_consensus::Signature::from(forged_sig);
        assert!(
            vk.verify(&probe, &intent_sign_bytes(&i)).is_ok(),
            "the forgery holds for a lax parse, so the test can fail"
        );
        let s = pb::SignedIntent {
            intent: Some(i),
            signature: forged_sig.to_vec(),
        };
        let err = Intent::verify(&s, &at()).expect_err("a weak key is refused");
        assert_eq!(err.code(), "BAD_INTENT", "{err}");
        assert!(err.to_string().contains("small-order"), "{err}");
    }

    #[test]
    fn refusals_have_their_codes() {
        let s = sign_intent(&key(), intent());
        let other_chain = IntentCheck {
            chain_id: "d",
            ..at()
        };
        assert_eq!(
            Intent::verify(&s, &other_chain).unwrap_err().code(),
            "WRONG_CHAIN"
        );
        let late = IntentCheck {
            now_ms: 1_002_001,
            ..at()
        };
        assert_eq!(
            Intent::verify(&s, &late).unwrap_err().code(),
            "STALE_INTENT"
        );
        let mut empty = intent();
        empty.audio_bytes = 0;
        let s = sign_intent(&key(), empty);
        assert_eq!(Intent::verify(&s, &at()).unwrap_err().code(), "EMPTY");
        let mut empty_art = intent();
        empty_art.art_bytes.push(0);
        let s = sign_intent(&key(), empty_art);
        assert_eq!(Intent::verify(&s, &at()).unwrap_err().code(), "EMPTY");
        let mut dup = intent();
        dup.replication_set.push(vec![2; 32]);
        let s = sign_intent(&key(), dup);
        assert_eq!(Intent::verify(&s, &at()).unwrap_err().code(), "BAD_INTENT");
        let mut low = intent();
        low.recovery_x25519 = vec![0; 32];
        let s = sign_intent(&key(), low);
        assert_eq!(Intent::verify(&s, &at()).unwrap_err().code(), "BAD_INTENT");
        let mut short = sign_intent(&key(), intent());
        short.signature.pop();
        assert_eq!(
            Intent::verify(&short, &at()).unwrap_err().code(),
            "BAD_INTENT"
        );
    }
}
