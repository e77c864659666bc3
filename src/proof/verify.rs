//! Client side: check a `ReadProof` against an app hash, then replay the
//! query over what it proves.

use prost::Message;

use super::Proven;
use crate::proto::proof as pb;

/// Why a proven read was refused. Each names what failed and where.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error("the node sent no proof (was the read asked with prove = true?)")]
    NoProof,
    #[error("the proof is of height {proof}, the answer of height {answer}")]
    HeightMismatch { proof: u64, answer: u64 },
    #[error("key {key} appears twice in the proof")]
    Duplicate { key: String },
    #[error("the proof of key {key} does not decode: {reason}")]
    Decode { key: String, reason: String },
    #[error(
        "the proof of key {key} ({claim}) does not hold against app hash {app_hash} at height {height}"
    )]
    BadProof {
        key: String,
        claim: &'static str,
        app_hash: String,
        height: u64,
    },
    #[error("replaying the read over the proven values failed: {0}")]
    Replay(String),
    #[error("the node's answer differs from the answer the proven values give: {diff}")]
    Mismatch { diff: String },
    #[error("light client: {0}")]
    Light(String),
    #[error(
        "the read is of height {height}, whose block is {age_secs} s old; at most {max_age_secs} s \
         is accepted (a replayed answer?): read again, or pass a larger --max-age-secs"
    )]
    Stale {
        height: u64,
        age_secs: i64,
        max_age_secs: u64,
    },
}

/// The largest jmt proof a client decodes: 256 siblings of up to 33 bytes
/// and a leaf, with room to spare.
const MAX_JMT_PROOF_BYTES: usize = 256 * 40 + 256;

fn claim(e: &pb::ProvenEntry) -> &'static str {
    if e.exists {
        "exists with the value sent"
    } else {
        "does not exist"
    }
}

/// Checks every entry's proof (ICS23, or jmt's) against `app_hash` (the app hash of
/// `proof.height`, from the verified header at `height + 1`), and returns
/// the proven state to replay the read over. `block_time_ns` is the
/// verified time of block `height`, for reads that depend on it.
///
/// # Errors
/// The first entry that does not decode or whose proof does not hold, or a
/// key sent twice.
pub fn check_entries(
    proof: &pb::ReadProof,
    app_hash: &[u8],
    block_time_ns: Option<i64>,
) -> Result<Proven, VerifyError> {
    let mut seen = std::collections::BTreeSet::new();
    for e in &proof.entries {
        if !seen.insert(e.key.as_slice()) {
            return Err(VerifyError::Duplicate {
                key: hex::encode(&e.key),
            });
        }
        if !holds(e, app_hash)? {
            return Err(VerifyError::BadProof {
                key: hex::encode(&e.key),
                claim: claim(e),
                app_hash: hex::encode(app_hash),
                height: proof.height,
            });
        }
    }
    let mut rows = std::collections::BTreeSet::new();
    for r in &proof.index_rows {
        if !rows.insert(r.key.as_slice()) {
            return Err(VerifyError::Duplicate {
                key: hex::encode(&r.key),
            });
        }
    }
    Ok(Proven::new(proof, block_time_ns))
}

/// Whether `e`'s proof holds against `app_hash`: jmt's own proof when
/// the node sent one (ICS23 cannot carry an empty value, the key's or a
/// neighbour's), else ICS23 under jmt's spec. Both bind the same root.
fn holds(e: &pb::ProvenEntry, app_hash: &[u8]) -> Result<bool, VerifyError> {
    let decode = |reason: String| VerifyError::Decode {
        key: hex::encode(&e.key),
        reason,
    };
    if !e.jmt_proof.is_empty() {
        let value = e.exists.then_some(e.value.as_slice());
        return jmt_holds(&e.jmt_proof, &e.key, value, app_hash).map_err(decode);
    }
    let cp = ics23::CommitmentProof::decode(e.proof.as_slice())
        .map_err(|err| decode(err.to_string()))?;
    Ok(ics23_holds(
        &cp,
        &e.key,
        e.exists.then_some(e.value.as_slice()),
        app_hash,
    ))
}

/// Whether jmt's own proof (`SparseMerkleProof<Sha256>`, borsh) of `key`
/// (holding `value`, or absent) holds against `root`.
///
/// # Errors
/// A proof over [`MAX_JMT_PROOF_BYTES`] or one that does not decode.
pub fn jmt_holds(
    proof: &[u8],
    key: &[u8],
    value: Option<&[u8]>,
    root: &[u8],
) -> Result<bool, String> {
    // At most 256 siblings of 32 bytes plus a leaf: refuse more before
    // decoding what an untrusted node sent.
    if proof.len() > MAX_JMT_PROOF_BYTES {
        return Err(format!(
            "jmt proof of {} bytes, over {MAX_JMT_PROOF_BYTES}",
            proof.len()
        ));
    }
    let p: jmt::proof::SparseMerkleProof<sha2::Sha256> =
        borsh::from_slice(proof).map_err(|err| err.to_string())?;
    let Ok(root) = <[u8; 32]>::try_from(root) else {
        return Ok(false);
    };
    let key = jmt::KeyHash::with::<sha2::Sha256>(key);
    Ok(p.verify(jmt::RootHash(root), key, value).is_ok())
}

/// Whether an ICS23 proof of `key` (holding `value`, or absent) holds
/// against `root` under jmt's spec.
pub fn ics23_holds(
    cp: &ics23::CommitmentProof,
    key: &[u8],
    value: Option<&[u8]>,
    root: &[u8],
) -> bool {
    let (spec, root) = (jmt::ics23_spec(), root.to_vec());
    match value {
        Some(v) => {
            ics23::verify_membership::<ics23::HostFunctionsManager>(cp, &spec, &root, key, v)
        }
        None => ics23::verify_non_membership::<ics23::HostFunctionsManager>(cp, &spec, &root, key),
    }
}

/// Replays a read over `proven` and requires the node's `answer`, proof
/// field cleared, to equal it. `recompute` is the query the node ran.
///
/// # Errors
/// [`VerifyError::Replay`] when the replay fails (for example it reads a
/// key the proof does not cover); [`VerifyError::Mismatch`] when the
/// answers differ.
pub fn replay<T: PartialEq + std::fmt::Debug, E: std::fmt::Display>(
    answer: &T,
    proven: &Proven,
    recompute: impl FnOnce(&Proven) -> Result<T, E>,
) -> Result<(), VerifyError> {
    let again = recompute(proven).map_err(|e| VerifyError::Replay(e.to_string()))?;
    if &again == answer {
        return Ok(());
    }
    let (a, b) = (format!("{answer:?}"), format!("{again:?}"));
    let at = a
        .bytes()
        .zip(b.bytes())
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    let snip = |s: &str| {
        s.get(at.saturating_sub(40)..(at + 80).min(s.len()))
            .unwrap_or("")
            .to_string()
    };
    Err(VerifyError::Mismatch {
        diff: format!("node …{}… vs proven …{}…", snip(&a), snip(&b)),
    })
}
