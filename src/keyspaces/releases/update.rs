//! Updates: ERN 4 has no UpdateIndicator, so an update is another
//! `NewReleaseMessage` for the same release id, and replaces everything
//! (metadata, track list, every deal).
//!
//! - The signer is the publisher, or holds `OWNER` on every track of both
//!   the stored and the new version; anyone else gets `ALREADY_PUBLISHED`.
//! - It is accepted only if its `MessageCreatedDateTime` is strictly later
//!   than the stored version's (`STALE_RELEASE`); every version is at most
//!   `rights.max_message_clock_skew_secs` past the block time
//!   (`FUTURE_RELEASE`).
//! - The stored version moves to `release_versions/{id}/{version}`; its
//!   record stays charged to its signer (it was charged at its history
//!   key's size), and its `releases_by_cid/` and `releases_by_party/` rows
//!   are deleted and refunded to that signer. The history keeps the latest
//!   `rights.max_release_versions`: the oldest beyond them is deleted and
//!   refunded to its signer, so a label can keep updating its deals.

use crate::ddex::validate::Validated;
use crate::keyspaces::entitlements::EntitlementsRead;
use crate::keyspaces::rights::{hx, RightsError};
use crate::keyspaces::TxContext;
use crate::proto::ddex as pb;
use crate::proto::rights::Role;
use crate::store::StateWrite;
use crate::tx::TxError;

use super::{record_bytes, ReleasesRead, ReleasesWrite};

fn created(m: &pb::NewReleaseMessage) -> (u64, String) {
    m.message_header
        .as_ref()
        .map(|h| (h.message_created_ms, h.message_created_date_time.clone()))
        .unwrap_or_default()
}

/// `MessageCreatedDateTime` at most the skew past the block time.
pub fn check_clock(id: &str, m: &pb::NewReleaseMessage, ctx: &TxContext) -> Result<(), TxError> {
    let (ms, text) = created(m);
    let skew = ctx.params.rights.max_message_clock_skew_secs;
    let block_ms = u64::try_from(ctx.time_ns / 1_000_000).unwrap_or(0);
    if ms > block_ms.saturating_add(skew.saturating_mul(1000)) {
        return Err(RightsError::FutureRelease {
            id: id.to_string(),
            got: text,
            block: block_ms / 1000,
            skew_secs: skew,
        }
        .into());
    }
    Ok(())
}

/// Whether the signer may replace `old` with the validated `new`.
pub fn check<S: StateWrite>(
    state: &S,
    ctx: &TxContext,
    old: &pb::ReleaseRecord,
    new: &Validated,
    msg: &pb::NewReleaseMessage,
) -> Result<(), TxError> {
    if old.publisher != ctx.signer && !owns_all(state, ctx, old, new)? {
        return Err(RightsError::AlreadyPublished(
            old.release_id.clone(),
            format!(
                "first published by {}; signer {} is neither its publisher nor an OWNER of every track of both versions",
                hx(&old.publisher),
                hx(&ctx.signer)
            ),
        )
        .into());
    }
    let (got_ms, got) = created(msg);
    let (old_ms, stored) = old.message.as_ref().map(created).unwrap_or_default();
    if got_ms <= old_ms {
        return Err(RightsError::StaleRelease {
            id: old.release_id.clone(),
            got,
            stored,
        }
        .into());
    }
    Ok(())
}

fn owns_all<S: StateWrite>(
    state: &S,
    ctx: &TxContext,
    old: &pb::ReleaseRecord,
    new: &Validated,
) -> Result<bool, TxError> {
    for t in old.tracks.iter().chain(new.tracks.iter()) {
        if state.role_of(&t.cid, &ctx.signer)? != Some(Role::Owner) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Moves `old` to its history key and deletes its rows, refunding them to
/// the signer of `old`.
pub fn retire<S: StateWrite>(
    state: &mut S,
    ctx: &TxContext,
    old: &pb::ReleaseRecord,
) -> Result<(), TxError> {
    state.put_release_version(old);
    prune(state, ctx, old)?;
    let mut freed = 0u64;
    for t in &old.tracks {
        freed = freed.saturating_add(state.delete_cid_deals(&t.cid, &old.release_id)?);
    }
    for p in &old.parties {
        freed = freed.saturating_add(state.delete_party_row(p, &old.release_id));
    }
    if let Ok(signer) = <[u8; 32]>::try_from(old.signer.as_slice()) {
        crate::keyspaces::accounts::storage::release(state, &signer, freed)?;
    }
    Ok(())
}

/// Deletes the history entry that falls out of the latest
/// `max_release_versions`, refunding it to its signer. One per update is
/// enough: params are fixed at genesis (BRIEF §8: a change is a new
/// chain), so the cap never shrinks under a history.
fn prune<S: StateWrite>(
    state: &mut S,
    ctx: &TxContext,
    old: &pb::ReleaseRecord,
) -> Result<(), TxError> {
    let max = ctx.params.rights.max_release_versions;
    let Some(drop) = old.version.checked_sub(max) else {
        return Ok(());
    };
    let Some(gone) = state.release_version(&old.release_id, drop)? else {
        return Ok(());
    };
    state.delete_release_version(&old.release_id, drop);
    if let Ok(signer) = <[u8; 32]>::try_from(gone.signer.as_slice()) {
        crate::keyspaces::accounts::storage::release(state, &signer, record_bytes(&gone))?;
    }
    Ok(())
}
