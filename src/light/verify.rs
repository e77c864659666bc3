//! The verification steps, free of I/O: the current time is a parameter and
//! fetching is a closure, so tests can move time and feed tampered blocks.

use std::collections::HashMap;
use std::future::Future;

use tendermint::block::Header;
use tendermint::{Hash, Time};
use tendermint_light_client_verifier::errors::VerificationErrorDetail;
use tendermint_light_client_verifier::types::LightBlock;
use tendermint_light_client_verifier::{ProdVerifier, Verdict, Verifier};

use super::{LightError, LightOptions, TrustRoot, MAX_BACKWARD_STEPS, MAX_FORWARD_FETCHES};

/// Upper-case hex of a hash, as CometBFT prints it.
pub(crate) fn hash_hex(h: &[u8]) -> String {
    hex::encode_upper(h)
}

/// Checks the block fetched at the root's height against the root: chain
/// id, header hash, validator set hashes, and that `now` is within the
/// trusting period of the header's time.
pub fn check_root(
    root: &TrustRoot,
    block: &LightBlock,
    opts: &LightOptions,
    now: Time,
) -> Result<(), LightError> {
    let header = &block.signed_header.header;
    check_chain_id(&root.chain_id, header)?;
    let got = header.hash();
    if header.height.value() != root.height || got.as_bytes() != root.hash {
        return Err(LightError::TrustHashMismatch {
            height: root.height,
            expected: hash_hex(&root.hash),
            got: format!("{got} (height {})", header.height),
        });
    }
    check_valset(
        header.height.value(),
        "validators_hash",
        header.validators_hash,
        &block.validators,
    )?;
    let next = &block.next_validators;
    check_valset(
        header.height.value(),
        "next_validators_hash",
        header.next_validators_hash,
        next,
    )?;
    check_trusting_period(header.time, opts, now)
}

/// `Ok` while `header_time + trusting period > now`.
fn check_trusting_period(
    header_time: Time,
    opts: &LightOptions,
    now: Time,
) -> Result<(), LightError> {
    let outside = || LightError::OutsideTrustingPeriod {
        root_time: header_time,
        period: opts.trusting_period,
        now,
    };
    let expires = header_time
        .checked_add(opts.trusting_period)
        .ok_or_else(outside)?;
    if expires > now {
        Ok(())
    } else {
        Err(outside())
    }
}

fn check_chain_id(expected: &str, header: &Header) -> Result<(), LightError> {
    if header.chain_id.as_str() == expected {
        return Ok(());
    }
    Err(LightError::ChainIdMismatch {
        expected: expected.to_string(),
        got: header.chain_id.to_string(),
    })
}

fn check_valset(
    height: u64,
    field: &'static str,
    expected: Hash,
    set: &tendermint::validator::Set,
) -> Result<(), LightError> {
    let got = set.hash();
    if got == expected {
        return Ok(());
    }
    Err(LightError::ValidatorSetMismatch {
        height,
        field,
        expected: expected.to_string(),
        got: got.to_string(),
    })
}

/// One step of skipping verification: is `target` (above `trusted`)
/// trustworthy, given that `trusted` is? `trusted` must already be verified
/// (see [`check_root`]); its next validator set is checked against its
/// header here again, as the verifier crate leaves that to the caller.
pub fn verify_forward(
    trusted: &LightBlock,
    target: &LightBlock,
    opts: &LightOptions,
    now: Time,
) -> Result<(), LightError> {
    let trusted_header = &trusted.signed_header.header;
    check_valset(
        trusted_header.height.value(),
        "next_validators_hash",
        trusted_header.next_validators_hash,
        &trusted.next_validators,
    )?;
    check_chain_id(
        trusted_header.chain_id.as_str(),
        &target.signed_header.header,
    )?;
    let verdict = ProdVerifier::default().verify_update_header(
        target.as_untrusted_state(),
        trusted.as_trusted_state(),
        &opts.verifier_options(),
        now,
    );
    let (from, height) = (trusted.height().value(), target.height().value());
    match verdict {
        Verdict::Success => Ok(()),
        Verdict::NotEnoughTrust(tally) => Err(LightError::NotEnoughTrust {
            trusted: from,
            height,
            tally: tally.to_string(),
        }),
        Verdict::Invalid(VerificationErrorDetail::NotWithinTrustPeriod(_)) => {
            Err(LightError::OutsideTrustingPeriod {
                root_time: trusted.time(),
                period: opts.trusting_period,
                now,
            })
        }
        Verdict::Invalid(detail) => Err(LightError::Invalid {
            trusted: from,
            height,
            reason: detail.to_string(),
        }),
    }
}

/// Skipping verification from `trusted` up to `target`, bisecting at the
/// midpoint whenever a step lacks trust; `fetch` gives the (unverified)
/// light block at a height and is called at most [`MAX_FORWARD_FETCHES`]
/// times. Returns the verified block at `target`.
pub async fn bisect<F, Fut>(
    mut trusted: LightBlock,
    target: u64,
    opts: &LightOptions,
    now: Time,
    mut fetch: F,
) -> Result<LightBlock, LightError>
where
    F: FnMut(u64) -> Fut,
    Fut: Future<Output = Result<LightBlock, LightError>>,
{
    let start = trusted.height().value();
    let too_many = || LightError::TooManyFetches {
        trusted: start,
        target,
        limit: MAX_FORWARD_FETCHES,
    };
    let mut pending = vec![target];
    let mut fetched: HashMap<u64, LightBlock> = HashMap::new();
    let mut fetches = 0usize;
    while let Some(&height) = pending.last() {
        let block = match fetched.remove(&height) {
            Some(b) => b,
            None if fetches >= MAX_FORWARD_FETCHES => return Err(too_many()),
            None => {
                fetches = fetches.saturating_add(1);
                fetched_at(&mut fetch, height).await?
            }
        };
        match verify_forward(&trusted, &block, opts, now) {
            Ok(()) => {
                pending.pop();
                trusted = block;
            }
            Err(LightError::NotEnoughTrust { trusted: from, .. }) => {
                let pivot = from.saturating_add(height.saturating_sub(from) / 2);
                if pivot <= from {
                    return Err(too_many());
                }
                fetched.insert(height, block);
                pending.push(pivot);
            }
            Err(e) => return Err(e),
        }
    }
    Ok(trusted)
}

/// `fetch(height)`, refusing a block of another height.
async fn fetched_at<F, Fut>(fetch: &mut F, height: u64) -> Result<LightBlock, LightError>
where
    F: FnMut(u64) -> Fut,
    Fut: Future<Output = Result<LightBlock, LightError>>,
{
    let block = fetch(height).await?;
    let got = block.height().value();
    if got != height {
        return Err(LightError::WrongHeight {
            url: "(bisection fetch)".into(),
            expected: height,
            got,
        });
    }
    Ok(block)
}

/// Checks that `parent` is the header right below the verified `child`:
/// same chain, height one less, and its hash is `child.last_block_id.hash`.
pub fn check_hash_link(child: &Header, parent: &Header) -> Result<(), LightError> {
    check_chain_id(child.chain_id.as_str(), parent)?;
    let height = child.height.value().saturating_sub(1);
    let expected = child.last_block_id.map(|id| id.hash);
    let got = parent.hash();
    if parent.height.value() == height && expected == Some(got) {
        return Ok(());
    }
    Err(LightError::HashChainBroken {
        height,
        expected: expected.map_or_else(|| "nothing".to_string(), |h| h.to_string()),
        got: format!("{got} (height {})", parent.height),
    })
}

/// Walks the hash chain down from the verified `top` to `target`, at most
/// [`MAX_BACKWARD_STEPS`] steps; `fetch` gives the (unverified) header at a
/// height. Returns the verified header at `target`.
pub async fn walk_back<F, Fut>(top: Header, target: u64, mut fetch: F) -> Result<Header, LightError>
where
    F: FnMut(u64) -> Fut,
    Fut: Future<Output = Result<Header, LightError>>,
{
    let top_height = top.height.value();
    let min = top_height.saturating_sub(MAX_BACKWARD_STEPS).max(1);
    if target < min {
        return Err(LightError::BelowBounds {
            height: target,
            min,
        });
    }
    if target > top_height {
        return Err(LightError::AboveBounds {
            height: target,
            max: top_height,
        });
    }
    let mut child = top;
    while child.height.value() > target {
        let parent = fetch(child.height.value().saturating_sub(1)).await?;
        check_hash_link(&child, &parent)?;
        child = parent;
    }
    Ok(child)
}
