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

use super::keys::{
    assignment_epoch_key, assignment_key, content_pool_key, under_replicated_key, upload_key,
    validator_usage_key,
};
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

/// Writes the rows that changed from `before` to `after`, and the
/// changed validators' `assignment_epoch/` (`height`).
fn put_roles<S: StateWrite>(state: &mut S, cid: &[u8], change: (&Roles, &Roles), height: u64) {
    let (before, after) = change;
    let epoch = |state: &mut S, k: &[u8; 32]| {
        state.put_raw(assignment_epoch_key(k), height.to_be_bytes().to_vec());
    };
    for (k, r) in after {
        if before.get(k) != Some(r) {
            state.put_raw(assignment_key(k, cid), vec![*r]);
            epoch(state, k);
        }
    }
    for k in before.keys().filter(|k| !after.contains_key(*k)) {
        state.delete_raw(assignment_key(k, cid));
        epoch(state, k);
    }
}

/// Records an upload's first sets (`UploadComplete` at `height`).
pub fn assign_new<S: StateWrite>(state: &mut S, u: &pb::Upload, height: u64) {
    let now = roles(&u.replication_set, &u.dek_holder_set);
    put_roles(state, &u.flac_cid, (&Roles::new(), &now), height);
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
/// it at once when no member joins. A re-aim first undoes the joins not
/// yet confirmed (their roles and charges), so every joiner of the new
/// target confirms against the sets as they were confirmed.
///
/// # Errors
/// `ContentBudget` when a joining replica's quota, or the upload's content
/// pool, has no room.
pub fn start<S: StateWrite>(
    state: &mut S,
    u: &mut pb::Upload,
    target: (Vec<Vec<u8>>, Vec<Vec<u8>>),
    height: u64,
    p: &RightsParams,
) -> Result<(), TxError> {
    let serving = roles(&u.replication_set, &u.dek_holder_set);
    let before = undo_joins(state, u)?;
    let confirmed = roles(&u.replication_set, &u.dek_holder_set);
    let replicas_before = before.unwrap_or(u.replication_set.len() as u32);
    let want = roles(&target.0, &target.1);
    let mut unconfirmed = Vec::new();
    for (k, r) in &want {
        let gained = r & !confirmed.get(k).copied().unwrap_or(0);
        if gained == 0 {
            continue;
        }
        if gained & REPLICA != 0 {
            charge(state, &quota(k, p), stored(u))?;
        }
        unconfirmed.push(pb::Joining {
            validator: k.to_vec(),
            roles: u32::from(gained),
        });
    }
    // the pool pays for more replicas than there were, not for a swap
    let grow = (target.0.len() as u64).saturating_sub(u64::from(replicas_before));
    let pool_charged = grow.saturating_mul(stored(u));
    charge(state, &pool(u, p), pool_charged)?;
    u.replication_set = union(&u.replication_set, &target.0);
    u.dek_holder_set = union(&u.dek_holder_set, &target.1);
    let now = roles(&u.replication_set, &u.dek_holder_set);
    put_roles(state, &u.flac_cid, (&serving, &now), height);
    let n = unconfirmed.len();
    u.handover = Some(pb::Handover {
        replication_set: target.0,
        dek_holder_set: target.1,
        unconfirmed,
        since_height: height,
        replicas_before,
        pool_charged,
    });
    if n == 0 {
        return finish(state, u, height);
    }
    flag(
        state,
        &u.flac_cid,
        format!("handover: {n} joining member(s) to confirm"),
        height,
    );
    put_record(state, u);
    Ok(())
}

/// Takes the roles the unconfirmed joiners of a running handover gained
/// out of the serving sets again, releasing what they and the handover
/// were charged. Returns the replica count the handover started from.
fn undo_joins<S: StateWrite>(state: &mut S, u: &mut pb::Upload) -> Result<Option<u32>, TxError> {
    let Some(h) = u.handover.take() else {
        return Ok(None);
    };
    for j in &h.unconfirmed {
        let Ok(k) = <[u8; 32]>::try_from(j.validator.as_slice()) else {
            continue;
        };
        let gained = u8::try_from(j.roles).unwrap_or(0);
        if gained & REPLICA != 0 {
            release(state, &validator_usage_key(&k), stored(u))?;
            u.replication_set.retain(|x| x.as_slice() != k);
        }
        if gained & HOLDER != 0 {
            u.dek_holder_set.retain(|x| x.as_slice() != k);
        }
    }
    release(state, &content_pool_key(&u.group_id), h.pool_charged)?;
    Ok(Some(h.replicas_before))
}

/// A budget: its counter key, who pays (for the message), the param and
/// its value.
struct Budget {
    key: Vec<u8>,
    who: String,
    param: &'static str,
    max: u64,
}

/// The pool an upload's replicas are charged to: its group's, or the one
/// all ungrouped uploads share.
fn pool(u: &pb::Upload, p: &RightsParams) -> Budget {
    let (param, max) = if u.group_id.is_empty() {
        (
            "rights.ungrouped_content_budget",
            p.ungrouped_content_budget,
        )
    } else {
        ("rights.group_content_budget", p.group_content_budget)
    };
    Budget {
        key: content_pool_key(&u.group_id),
        who: format!("the content pool of group {:?}", u.group_id),
        param,
        max,
    }
}

/// `k`'s replication quota.
fn quota(k: &[u8; 32], p: &RightsParams) -> Budget {
    Budget {
        key: validator_usage_key(k),
        who: format!("validator {}", hx(k)),
        param: "rights.validator_replication_quota",
        max: p.validator_replication_quota,
    }
}

/// Adds `size` to the budget's counter, refused past its max.
fn charge<S: StateWrite>(state: &mut S, b: &Budget, size: u64) -> Result<(), TxError> {
    if size == 0 {
        return Ok(());
    }
    let used = state.usage(&b.key)?;
    let total = used.saturating_add(size);
    if total > b.max {
        return Err(RightsError::ContentBudget {
            who: b.who.clone(),
            budget: b.param,
            used,
            adding: size,
            max: b.max,
        }
        .into());
    }
    state.put_usage(&b.key, total);
    Ok(())
}

/// Takes `size` off the counter at `key`.
fn release<S: StateWrite>(state: &mut S, key: &[u8], size: u64) -> Result<(), TxError> {
    if size == 0 {
        return Ok(());
    }
    let used = state.usage(key)?;
    state.put_usage(key, used.saturating_sub(size));
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
/// go and their charges are released. The upload stays listed in
/// `under_replicated/` while a member of its sets is not ACTIVE.
fn finish<S: StateWrite>(state: &mut S, u: &mut pb::Upload, height: u64) -> Result<(), TxError> {
    let Some(h) = u.handover.take() else {
        return Ok(());
    };
    let serving = roles(&u.replication_set, &u.dek_holder_set);
    let after = roles(&h.replication_set, &h.dek_holder_set);
    for (k, r) in &serving {
        let kept = after.get(k).copied().unwrap_or(0);
        if r & REPLICA != 0 && kept & REPLICA == 0 {
            release(state, &validator_usage_key(k), stored(u))?;
        }
    }
    // fewer replicas than before: the pool gets the difference back
    let shrink = u64::from(h.replicas_before).saturating_sub(h.replication_set.len() as u64);
    release(
        state,
        &content_pool_key(&u.group_id),
        shrink.saturating_mul(stored(u)),
    )?;
    put_roles(state, &u.flac_cid, (&serving, &after), height);
    u.replication_set = h.replication_set;
    u.dek_holder_set = h.dek_holder_set;
    match inactive_member(state, &after)? {
        Some(k) => flag(
            state,
            &u.flac_cid,
            format!("member {} is not ACTIVE", hx(&k)),
            height,
        ),
        None => state.delete_raw(under_replicated_key(&u.flac_cid)),
    }
    put_record(state, u);
    Ok(())
}

/// A member of `set` that is not an ACTIVE validator, if any.
fn inactive_member<S: StateWrite>(state: &S, set: &Roles) -> Result<Option<[u8; 32]>, TxError> {
    use crate::keyspaces::validators::ValidatorsRead;
    for k in set.keys() {
        if !state.is_active_validator(k)? {
            return Ok(Some(*k));
        }
    }
    Ok(None)
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
    height: u64,
) -> Result<usize, TxError> {
    let waiting = u.handover.as_mut().filter(|h| {
        h.unconfirmed
            .iter()
            .any(|j| j.validator.as_slice() == signer)
    });
    let Some(h) = waiting else {
        return Err(TxError::Conflict(format!(
            "upload {} awaits no confirmation from {}",
            hx(&u.flac_cid),
            hx(signer)
        )));
    };
    h.unconfirmed.retain(|j| j.validator.as_slice() != signer);
    let left = h.unconfirmed.len();
    if left == 0 {
        finish(state, u, height)?;
    } else {
        put_record(state, u);
    }
    Ok(left)
}

#[cfg(test)]
mod tests;
