//! An upload's sets changing hands (an amendment, or EndBlock replacing a
//! validator that left):
//! 1. **start**: the serving sets (`replication_set`, `dek_holder_set`)
//!    become the union of the current and the target sets, so joining
//!    members fetch and leaving members keep serving; joining members are
//!    `unconfirmed`, charged to their replication quota, and the upload is
//!    listed in `under_replicated/`;
//! 2. **confirm**: each joining member says, with an operator-key tx, that
//!    it holds the hash-verified blob and a DEK matching `dek_commitment`;
//! 3. **finish**, when none is left unconfirmed: the serving sets become
//!    the target sets, leaving members' assignments are deleted and their
//!    quota released.
//!
//! `assignments/{validator}/{cid}` follows the serving sets at every step.

use std::collections::BTreeMap;

use prost::Message;

use super::keys::{assignment_key, under_replicated_key, upload_key, validator_usage_key};
use super::{UploadsRead, UploadsWrite};
use crate::keyspaces::rights::{hx, RightsError, RightsParams};
use crate::proto::rights as pb;
use crate::store::StateWrite;
use crate::tx::TxError;

/// Role bit: the validator stores and seeds the blob and images.
pub const REPLICA: u8 = 1;
/// Role bit: the validator holds a wrapped DEK.
pub const HOLDER: u8 = 2;

type Roles = BTreeMap<[u8; 32], u8>;

/// Each member's role bits in the two sets.
pub fn roles(replicas: &[Vec<u8>], holders: &[Vec<u8>]) -> Roles {
    let mut r = Roles::new();
    for (set, bit) in [(replicas, REPLICA), (holders, HOLDER)] {
        for k in set {
            if let Ok(k) = <[u8; 32]>::try_from(k.as_slice()) {
                *r.entry(k).or_insert(0) |= bit;
            }
        }
    }
    r
}

/// `a`, then the members of `b` not in it, in order.
fn union(a: &[Vec<u8>], b: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut out = a.to_vec();
    out.extend(b.iter().filter(|k| !a.contains(k)).cloned());
    out
}

/// The bytes a replica stores for the upload: the blob and the images.
pub fn stored(u: &pb::Upload) -> u64 {
    u.image_sizes
        .iter()
        .fold(u.encrypted_size, |a, s| a.saturating_add(*s))
}

fn put_record<S: StateWrite>(state: &mut S, u: &pb::Upload) {
    state.put_raw(upload_key(&u.flac_cid), u.encode_to_vec());
}

fn put_roles<S: StateWrite>(state: &mut S, cid: &[u8], before: &Roles, after: &Roles) {
    for (k, r) in after {
        if before.get(k) != Some(r) {
            state.put_raw(assignment_key(k, cid), vec![*r]);
        }
    }
    for k in before.keys().filter(|k| !after.contains_key(*k)) {
        state.delete_raw(assignment_key(k, cid));
    }
}

/// Records an upload's first sets (`UploadComplete`).
pub fn assign_new<S: StateWrite>(state: &mut S, u: &pb::Upload) {
    let now = roles(&u.replication_set, &u.dek_holder_set);
    put_roles(state, &u.flac_cid, &Roles::new(), &now);
}

/// Marks the upload under-replicated for `reason`.
pub fn flag<S: StateWrite>(state: &mut S, cid: &[u8], reason: String, height: u64) {
    let row = pb::UnderReplicated {
        cid: cid.to_vec(),
        reason,
        since_height: height,
    };
    state.put_raw(under_replicated_key(cid), row.encode_to_vec());
}

/// Starts (or re-aims) a handover of `u` to the target sets, and finishes
/// it at once when no member joins.
///
/// # Errors
/// `ContentBudget` when a joining replica's quota has no room.
pub fn start<S: StateWrite>(
    state: &mut S,
    u: &mut pb::Upload,
    target: (Vec<Vec<u8>>, Vec<Vec<u8>>),
    height: u64,
    p: &RightsParams,
) -> Result<(), TxError> {
    let serving = roles(&u.replication_set, &u.dek_holder_set);
    let want = roles(&target.0, &target.1);
    let pending: Vec<Vec<u8>> = u.handover.take().map(|h| h.unconfirmed).unwrap_or_default();
    let mut unconfirmed = Vec::new();
    for (k, r) in &want {
        let has = serving.get(k).copied().unwrap_or(0);
        let was_pending = pending.iter().any(|x| x.as_slice() == k);
        if r & !has != 0 || was_pending {
            unconfirmed.push(k.to_vec());
        }
        if r & REPLICA != 0 && has & REPLICA == 0 {
            charge_replica(state, k, stored(u), p)?;
        }
    }
    u.replication_set = union(&u.replication_set, &target.0);
    u.dek_holder_set = union(&u.dek_holder_set, &target.1);
    let now = roles(&u.replication_set, &u.dek_holder_set);
    put_roles(state, &u.flac_cid, &serving, &now);
    u.handover = Some(pb::Handover {
        replication_set: target.0,
        dek_holder_set: target.1,
        unconfirmed,
        since_height: height,
    });
    if u.handover
        .as_ref()
        .is_some_and(|h| h.unconfirmed.is_empty())
    {
        return finish(state, u);
    }
    let n = u.handover.as_ref().map_or(0, |h| h.unconfirmed.len());
    flag(
        state,
        &u.flac_cid,
        format!("handover: {n} joining member(s) to confirm"),
        height,
    );
    put_record(state, u);
    Ok(())
}

fn charge_replica<S: StateWrite>(
    state: &mut S,
    k: &[u8; 32],
    size: u64,
    p: &RightsParams,
) -> Result<(), TxError> {
    let used = state.validator_replicated(k)?;
    let total = used.saturating_add(size);
    if total > p.validator_replication_quota {
        return Err(RightsError::ContentBudget {
            who: format!("validator {}", hx(k)),
            budget: "rights.validator_replication_quota",
            used,
            adding: size,
            max: p.validator_replication_quota,
        }
        .into());
    }
    state.put_usage(&validator_usage_key(k), total);
    Ok(())
}

/// Whether `k` has quota room for the upload as a replica.
pub fn has_room<S: UploadsRead + ?Sized>(
    state: &S,
    k: &[u8; 32],
    u: &pb::Upload,
    p: &RightsParams,
) -> Result<bool, TxError> {
    let used = state.validator_replicated(k)?;
    Ok(used.saturating_add(stored(u)) <= p.validator_replication_quota)
}

/// The serving sets become the target sets; leaving members' assignments
/// go and their quota is released.
fn finish<S: StateWrite>(state: &mut S, u: &mut pb::Upload) -> Result<(), TxError> {
    let Some(h) = u.handover.take() else {
        return Ok(());
    };
    let serving = roles(&u.replication_set, &u.dek_holder_set);
    let after = roles(&h.replication_set, &h.dek_holder_set);
    for (k, r) in &serving {
        let kept = after.get(k).copied().unwrap_or(0);
        if r & REPLICA != 0 && kept & REPLICA == 0 {
            let used = state.validator_replicated(k)?;
            state.put_usage(&validator_usage_key(k), used.saturating_sub(stored(u)));
        }
    }
    put_roles(state, &u.flac_cid, &serving, &after);
    u.replication_set = h.replication_set;
    u.dek_holder_set = h.dek_holder_set;
    state.delete_raw(under_replicated_key(&u.flac_cid));
    put_record(state, u);
    Ok(())
}

/// `signer` confirms it holds what it joined for; the last confirmation
/// finishes the handover.
///
/// # Errors
/// `Conflict` when no handover awaits the signer's confirmation.
pub fn confirm<S: StateWrite>(
    state: &mut S,
    u: &mut pb::Upload,
    signer: &[u8; 32],
) -> Result<usize, TxError> {
    let waiting = u
        .handover
        .as_mut()
        .filter(|h| h.unconfirmed.iter().any(|k| k.as_slice() == signer));
    let Some(h) = waiting else {
        return Err(TxError::Conflict(format!(
            "upload {} awaits no confirmation from {}",
            hx(&u.flac_cid),
            hx(signer)
        )));
    };
    h.unconfirmed.retain(|k| k.as_slice() != signer);
    let left = h.unconfirmed.len();
    if left == 0 {
        finish(state, u)?;
    } else {
        put_record(state, u);
    }
    Ok(left)
}

#[cfg(test)]
mod tests;
