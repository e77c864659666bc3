//! Decoding and authenticating the envelope `Tx { body_bytes, signature }`.
//!
//! # Invariants
//! - One encoding per tx: a body that does not re-encode to its exact bytes is refused.
//! - The tx id is `sha256(body_bytes)`, so re-wrapping the outer bytes changes nothing.
//! - Signatures are checked with ZIP-215 (`ed25519-consensus`), the rule CometBFT uses.

use prost::Message;
use sha2::{Digest, Sha256};

use super::{Action, TxError};
use crate::keyspaces::kv::token::TokenSig;
use crate::keyspaces::params::Params;
use crate::proto::tx as pb;

/// The domain tag the signature covers before the body bytes.
pub const SIGN_DOMAIN: &[u8] = b"stave/tx/v1";

/// The bytes an ed25519 signature covers: `"stave/tx/v1" || body_bytes`.
pub fn sign_bytes(body_bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(SIGN_DOMAIN.len() + body_bytes.len());
    out.extend_from_slice(SIGN_DOMAIN);
    out.extend_from_slice(body_bytes);
    out
}

/// A tx that decoded and passed every stateless check except the signature.
#[derive(Debug, Clone)]
pub struct DecodedTx {
    /// `sha256(body_bytes)`.
    pub id: [u8; 32],
    pub chain_id: String,
    pub signer: [u8; 32],
    pub nonce: u64,
    pub actions: Vec<Action>,
    pub memo: String,
    /// The most gas the tx may use, as declared in its body.
    pub gas_limit: u64,
    /// Its intrinsic gas: `tx_base`, its bytes, and the signatures and
    /// curve points decoding it checks (see `gas::intrinsic`).
    pub intrinsic_gas: u64,
    pub body_bytes: Vec<u8>,
    pub signature: [u8; 64],
    /// The envelope's proof-of-work nonce (outside the signature).
    pub pow_nonce: u64,
    pub verification_key: ed25519_consensus::VerificationKey,
}

impl DecodedTx {
    /// Decodes `raw` and runs the stateless checks: size, canonical body,
    /// signer key, action count, per-action limits and the signatures the
    /// actions carry (verified one by one).
    ///
    /// # Errors
    /// Each failed check has its own [`TxError`] variant and code.
    pub fn decode(raw: &[u8], params: &Params) -> Result<Self, TxError> {
        UnverifiedTx::decode(raw, params).verify_singly()
    }

    /// Checks the signature alone (ZIP-215).
    pub fn verify_signature(&self) -> Result<(), TxError> {
        let sig = ed25519_consensus::Signature::from(self.signature);
        self.verification_key
            .verify(&sig, &sign_bytes(&self.body_bytes))
            .map_err(|_| TxError::Signature {
                signer: hex::encode(self.signer),
            })
    }

    /// Checks the chain id.
    pub fn check_chain(&self, chain_id: &str) -> Result<(), TxError> {
        if self.chain_id != chain_id {
            return Err(TxError::WrongChain {
                expected: chain_id.to_string(),
                got: self.chain_id.clone(),
            });
        }
        Ok(())
    }

    pub fn signer_hex(&self) -> String {
        hex::encode(self.signer)
    }
}

/// A decoded tx whose embedded signatures (KV token signatures) are not
/// verified yet, so that the block can verify them in one batch with the tx
/// signatures. [`UnverifiedTx::resolve`] gives exactly what
/// [`DecodedTx::decode`] gives: decoding checks action by action (decode,
/// stateless checks, embedded signature), and the first failure wins.
#[derive(Debug)]
pub struct UnverifiedTx {
    /// The result if every embedded signature verifies.
    decoded: Result<DecodedTx, TxError>,
    /// The embedded signatures of the actions decoded before any failure,
    /// in action order, with their action's index.
    embedded: Vec<(usize, TokenSig)>,
}

/// The embedded signatures of a successful decode, held apart while the
/// decoded tx goes on alone, to rejoin it later ([`UnverifiedTx::rejoin`]).
#[derive(Debug, Clone)]
pub(crate) struct EmbeddedSigs(Vec<(usize, TokenSig)>);

impl UnverifiedTx {
    /// Decodes `raw` and runs every stateless check except signatures.
    pub fn decode(raw: &[u8], params: &Params) -> Self {
        let mut tx = Self::decode_unlimited(raw, params);
        if let Ok(d) = &tx.decoded {
            if let Err(e) = check_gas_limit(d, params) {
                tx.decoded = Err(e);
            }
        }
        tx
    }

    /// [`Self::decode`] without the check of the declared `gas_limit`
    /// against the intrinsic gas and `max_block_gas` (for simulation).
    pub fn decode_unlimited(raw: &[u8], params: &Params) -> Self {
        let mut embedded = Vec::new();
        let (decoded, crypto) =
            crate::gas::work::measure(|| decode_body(raw, params, &mut embedded));
        let mut crypto = crypto;
        // The tx's own signature and each embedded one are checked later,
        // in batches; they are part of the intrinsic cost all the same.
        crypto.signatures += 1 + embedded.len() as u64;
        let decoded = decoded.map(|mut d| {
            d.intrinsic_gas = crate::gas::intrinsic(&params.gas, raw.len(), crypto);
            d
        });
        UnverifiedTx { decoded, embedded }
    }

    /// A copy, when decoding succeeded (for the decode cache; a failure
    /// is not kept, and its error is not `Clone`).
    pub fn copy_decoded(&self) -> Option<Self> {
        let d = self.decoded.as_ref().ok()?.clone();
        Some(UnverifiedTx {
            decoded: Ok(d),
            embedded: self.embedded.clone(),
        })
    }

    /// A copy of the embedded signatures, if decoding succeeded.
    pub(crate) fn embedded_sigs(&self) -> Option<EmbeddedSigs> {
        self.decoded
            .is_ok()
            .then(|| EmbeddedSigs(self.embedded.clone()))
    }

    /// The decode that gave `tx` and `sigs`: `tx` must be what resolving
    /// that decode gave, unchanged.
    pub(crate) fn rejoin(tx: DecodedTx, sigs: EmbeddedSigs) -> Self {
        UnverifiedTx {
            decoded: Ok(tx),
            embedded: sigs.0,
        }
    }

    /// The decoded tx, if decoding succeeded up to the signatures.
    pub fn decoded(&self) -> Result<&DecodedTx, &TxError> {
        self.decoded.as_ref()
    }

    /// The embedded signatures to verify, in order.
    pub fn embedded(&self) -> impl Iterator<Item = &ed25519_consensus::batch::Item> {
        self.embedded.iter().map(|(_, s)| &s.item)
    }

    /// The decode result given the verdict on each embedded signature (in
    /// the order of [`Self::embedded`]; a missing verdict is a failure).
    pub fn resolve(self, ok: &[bool]) -> Result<DecodedTx, TxError> {
        for (n, (action, sig)) in self.embedded.into_iter().enumerate() {
            if !ok.get(n).copied().unwrap_or(false) {
                return Err(prefix_action(action, sig.forged.into()));
            }
        }
        self.decoded
    }

    /// The decode result for bytes whose embedded signatures verified
    /// before (a recheck: the tx id covers them).
    pub fn resolve_verified(self) -> Result<DecodedTx, TxError> {
        self.decoded
    }

    /// The decode result with every embedded signature verified on its own.
    pub fn verify_singly(self) -> Result<DecodedTx, TxError> {
        let ok: Vec<bool> = self
            .embedded
            .iter()
            .map(|(_, s)| s.verify().is_ok())
            .collect();
        self.resolve(&ok)
    }
}

fn decode_body(
    raw: &[u8],
    params: &Params,
    embedded: &mut Vec<(usize, TokenSig)>,
) -> Result<DecodedTx, TxError> {
    if raw.len() as u64 > params.max_tx_bytes {
        return Err(TxError::TxTooLarge {
            size: raw.len(),
            max: params.max_tx_bytes,
        });
    }
    let tx = pb::Tx::decode(raw).map_err(|e| TxError::Decode(format!("Tx: {e}")))?;
    let signature: [u8; 64] = tx.signature.as_slice().try_into().map_err(|_| {
        TxError::Decode(format!("signature is {} bytes, not 64", tx.signature.len()))
    })?;
    let body = pb::TxBody::decode(tx.body_bytes.as_slice())
        .map_err(|e| TxError::Decode(format!("TxBody: {e}")))?;
    let reencoded = body.encoded_len();
    if reencoded != tx.body_bytes.len() || body.encode_to_vec() != tx.body_bytes {
        return Err(TxError::NonCanonical {
            len: tx.body_bytes.len(),
            reencoded,
        });
    }
    let (signer, verification_key) = identity_key(&body.signer)?;
    if body.memo.len() > params.max_memo_bytes as usize {
        return Err(TxError::MemoTooLarge {
            size: body.memo.len(),
            max: params.max_memo_bytes,
        });
    }
    let count = body.actions.len();
    if count == 0 || count > params.max_actions_per_tx as usize {
        return Err(TxError::ActionCount {
            count,
            max: params.max_actions_per_tx,
        });
    }
    let mut actions = Vec::with_capacity(count);
    for (i, a) in body.actions.into_iter().enumerate() {
        let action =
            Action::try_from(a).map_err(|e| TxError::Decode(format!("action {i}: {e}")))?;
        action
            .check_stateless(params)
            .map_err(|e| prefix_action(i, e))?;
        if let Some(sig) = action
            .embedded_sig(&body.chain_id)
            .map_err(|e| prefix_action(i, e))?
        {
            embedded.push((i, sig));
        }
        check_keys_so_far(i, params)?;
        actions.push(action);
    }
    Ok(DecodedTx {
        id: Sha256::digest(&tx.body_bytes).into(),
        chain_id: body.chain_id,
        signer,
        nonce: body.nonce,
        actions,
        memo: body.memo,
        gas_limit: body.gas_limit,
        intrinsic_gas: 0,
        body_bytes: tx.body_bytes,
        signature,
        pow_nonce: tx.pow_nonce,
        verification_key,
    })
}

/// Decoding stops once the keys parsed so far (the signer's included) pass
/// `max_keys_per_tx`: a tx refused while decoding costs its sender nothing,
/// so the work one may cause is bounded here (review M2).
fn check_keys_so_far(action: usize, params: &Params) -> Result<(), TxError> {
    let keys = crate::gas::work::so_far().points;
    let max = u64::from(params.max_keys_per_tx);
    if keys > max {
        return Err(TxError::InvalidArgument(format!(
            "the tx parses {keys} keys by action {action}; allowed {max} (max_keys_per_tx)"
        )));
    }
    Ok(())
}

/// The declared limit must cover the intrinsic gas and fit one block.
fn check_gas_limit(tx: &DecodedTx, params: &Params) -> Result<(), TxError> {
    let max = params.gas.max_block_gas;
    if tx.gas_limit < tx.intrinsic_gas || tx.gas_limit > max {
        return Err(TxError::GasLimit {
            limit: tx.gas_limit,
            intrinsic: tx.intrinsic_gas,
            max,
        });
    }
    Ok(())
}

fn prefix_action(i: usize, e: TxError) -> TxError {
    match e {
        TxError::InvalidArgument(m) => TxError::InvalidArgument(format!("action {i}: {m}")),
        other => other,
    }
}

/// Accepts `bytes` as an identity key: a canonical, valid ed25519 point that is
/// not of small order. ZIP-215 accepts signatures by weak keys, and anyone can
/// produce those, so a weak key must never name an account.
pub fn identity_key(
    bytes: &[u8],
) -> Result<([u8; 32], ed25519_consensus::VerificationKey), TxError> {
    // A cache hit is charged as the decompression it saves.
    crate::gas::work::count(crate::gas::work::Kind::Point);
    if let Ok(arr) = <[u8; 32]>::try_from(bytes) {
        if let Some(vk) = key_cache::get(&arr) {
            return Ok((arr, vk));
        }
    }
    let (arr, vk) = parse_uncounted(bytes)?;
    key_cache::put(arr, vk);
    Ok((arr, vk))
}

/// Forgets every key [`identity_key`] has accepted, as a restart would.
/// For tests that show gas does not depend on this cache.
pub fn clear_identity_key_cache() {
    key_cache::clear();
}

/// Keys that passed [`parse_identity_key`]. The check is a pure function of
/// the bytes, so a hit gives the same answer; it saves two point
/// decompressions per tx for accounts that send often.
mod key_cache {
    use std::collections::HashMap;
    use std::sync::OnceLock;

    use parking_lot::Mutex;

    const CAPACITY: usize = 100_000;

    fn cache() -> &'static Mutex<HashMap<[u8; 32], ed25519_consensus::VerificationKey>> {
        static C: OnceLock<Mutex<HashMap<[u8; 32], ed25519_consensus::VerificationKey>>> =
            OnceLock::new();
        C.get_or_init(|| Mutex::new(HashMap::new()))
    }

    pub fn clear() {
        cache().lock().clear();
    }

    pub fn get(k: &[u8; 32]) -> Option<ed25519_consensus::VerificationKey> {
        cache().lock().get(k).copied()
    }

    pub fn put(k: [u8; 32], vk: ed25519_consensus::VerificationKey) {
        let mut c = cache().lock();
        if c.len() >= CAPACITY {
            c.clear();
        }
        c.insert(k, vk);
    }
}

/// Whether a point encoding that decompressed to a point of large order
/// re-compresses to itself: exactly when its y coordinate (the low 255 bits)
/// is below p = 2^255 - 19. (Its x is not 0, since the points with x = 0
/// are of small order, so the sign bit survives.) Saves the field inversion
/// of a re-compression.
fn canonical_y(b: &[u8; 32]) -> bool {
    // y >= p iff the top 250 bits of y are all ones and the low byte >= 0xed.
    let top_all_ones = b[31] & 0x7f == 0x7f && b[1..31].iter().all(|&x| x == 0xff);
    !(top_all_ones && b[0] >= 0xed)
}

/// [`identity_key`] without the cache: for keys from requests not yet
/// authenticated, which must not fill the cache.
pub fn parse_identity_key(
    bytes: &[u8],
) -> Result<([u8; 32], ed25519_consensus::VerificationKey), TxError> {
    crate::gas::work::count(crate::gas::work::Kind::Point);
    parse_uncounted(bytes)
}

fn parse_uncounted(
    bytes: &[u8],
) -> Result<([u8; 32], ed25519_consensus::VerificationKey), TxError> {
    let invalid = |reason: &str| TxError::InvalidSigner {
        key: hex::encode(bytes),
        reason: reason.to_string(),
    };
    let arr: [u8; 32] = bytes.try_into().map_err(|_| invalid("not 32 bytes"))?;
    let dalek = ed25519_dalek::VerifyingKey::from_bytes(&arr)
        .map_err(|_| invalid("not a valid curve point"))?;
    if dalek.is_weak() {
        return Err(invalid("small-order (weak) key"));
    }
    if !canonical_y(&arr) {
        return Err(invalid("non-canonical encoding"));
    }
    let vk = ed25519_consensus::VerificationKey::try_from(arr)
        .map_err(|_| invalid("rejected by ed25519-consensus"))?;
    Ok((arr, vk))
}

#[cfg(test)]
mod canonical_tests {
    use super::canonical_y;
    use rand::{Rng, SeedableRng};

    /// The byte test agrees with decompress-then-compress on every valid,
    /// non-weak point tried: random encodings and the non-canonical y + p.
    #[test]
    fn canonical_y_agrees_with_recompression() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(215);
        let mut cases: Vec<[u8; 32]> = (0..4000).map(|_| rng.gen()).collect();
        for k in 0u8..19 {
            for sign in [0u8, 0x80] {
                let mut b = [0xff; 32];
                b[0] = 0xed + k;
                b[31] = 0x7f | sign;
                cases.push(b);
                let mut small = [0u8; 32];
                small[0] = k;
                small[31] = sign;
                cases.push(small);
            }
        }
        let mut checked = 0;
        for b in cases {
            let Ok(p) = ed25519_dalek::VerifyingKey::from_bytes(&b) else {
                continue;
            };
            if p.is_weak() {
                continue;
            }
            checked += 1;
            assert_eq!(
                canonical_y(&b),
                p.to_edwards().compress().to_bytes() == b,
                "{b:?}"
            );
        }
        assert!(checked > 1000, "only {checked} valid points");
    }
}
