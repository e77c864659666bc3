//! Client side, end to end: a node's proven answer checked against a
//! light-client-verified header, then replayed.

use std::time::Duration;

use super::{check_entries, replay, VerifyError};
use crate::grpc::answers::{Answer, CarriesProof};
use crate::light::LightClient;

/// How long a read at the latest height waits for the next block's commit.
pub const WAIT_NEXT_COMMIT: Duration = Duration::from_secs(30);
/// The default bound on how old a verified read's block may be (the CLI's
/// `--max-age-secs`): a proxy could otherwise replay an old, once-true answer.
pub const DEFAULT_MAX_AGE: Duration = Duration::from_secs(60);

/// What a successful check established.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// The chain the trust root names.
    pub chain_id: String,
    pub height: u64,
    /// Block `height`'s verified time (Unix nanoseconds).
    pub block_time_ns: i64,
    /// Hex of the app hash at `height`, from the verified header at `height + 1`.
    pub app_hash: String,
    /// State keys the node proved (values and absences).
    pub proven_keys: usize,
}

/// Checks `answer` to `req`: its proof against the app hash in the header
/// at `height + 1`, verified by `light` from its trust root; that block
/// `height` is at most `max_age` old by the local clock; then replays `f`
/// (the node's query) over the proven values with block `height`'s
/// verified time, and requires the node's answer exactly.
///
/// # Errors
/// [`VerifyError::NoProof`] without a proof,
/// [`VerifyError::HeightMismatch`] with a proof of another height;
/// [`VerifyError::Stale`] for an answer older than `max_age`; [`VerifyError::Light`] when a header does not verify; the
/// errors of [`check_entries`] and [`replay`].
pub async fn verify_answer<Q, A>(
    light: &LightClient,
    req: &Q,
    answer: &A,
    f: Answer<Q, A>,
    max_age: Option<Duration>,
) -> Result<Verified, VerifyError>
where
    A: CarriesProof + Clone + PartialEq + std::fmt::Debug,
{
    let proof = answer.proof().ok_or(VerifyError::NoProof)?;
    let height = proof.height;
    if height != answer.height() || height == 0 {
        return Err(VerifyError::HeightMismatch {
            proof: height,
            answer: answer.height(),
        });
    }
    let light_err = |e: crate::light::LightError| VerifyError::Light(e.to_string());
    let next_height = height
        .checked_add(1)
        .ok_or_else(|| VerifyError::Light(format!("height {height} has no next height")))?;
    light
        .wait_for_height(next_height, WAIT_NEXT_COMMIT)
        .await
        .map_err(light_err)?;
    let (this, next) = light.verified_pair(height).await.map_err(light_err)?;
    let time_ns = i64::try_from(this.time.unix_timestamp_nanos()).ok();
    if let (Some(max), Some(t)) = (max_age, time_ns) {
        let now = tendermint::Time::now().unix_timestamp_nanos();
        let age_secs = i64::try_from((now - i128::from(t)) / 1_000_000_000).unwrap_or(i64::MAX);
        if age_secs > i64::try_from(max.as_secs()).unwrap_or(i64::MAX) {
            return Err(VerifyError::Stale {
                height,
                age_secs,
                max_age_secs: max.as_secs(),
            });
        }
    }
    let app_hash = next.app_hash.as_bytes().to_vec();
    let proven = check_entries(proof, &app_hash, time_ns)?;
    let mut expect = answer.clone();
    expect.set_proof(None);
    expect.clear_unproven();
    replay(&expect, &proven, |p| {
        f(p, req, height)
            .map(|mut a| {
                a.clear_unproven();
                a
            })
            .map_err(|s| s.message().to_string())
    })?;
    Ok(Verified {
        chain_id: light.root().chain_id.clone(),
        height,
        block_time_ns: time_ns.unwrap_or_default(),
        app_hash: hex::encode_upper(&app_hash),
        proven_keys: proof.entries.len(),
    })
}
