//! Takedown and flag actions.

use prost::Message;

use super::{next_takedown, TakedownEvent, TakedownStatus, TakedownsRead, TakedownsWrite};
use crate::keyspaces::entitlements::EntitlementsRead;
use crate::keyspaces::groups::{require_authority, GroupStatus, GroupsRead};
use crate::keyspaces::params::Params;
use crate::keyspaces::policies::{PoliciesRead, PoliciesWrite};
use crate::keyspaces::uploads::UploadsRead;
use crate::keyspaces::validators::election::{self, cast, require_active, Decision};
use crate::keyspaces::validators::expiry::{self, Subject};
use crate::keyspaces::validators::{is_jurisdiction, GovError};
use crate::keyspaces::{Event, TxContext};
use crate::proto::governance as pb;
use crate::proto::rights as rpb;
use crate::store::StateWrite;
use crate::tx::TxError;

domain_action!(
    /// Requests a takedown (a takedown authority of the owning group).
    TakedownRequest => pb::TakedownRequest { cid: Vec<u8>, reason: String, evidence_hash: Vec<u8> }
);
domain_action!(
    /// A counter-notice (an OWNER of the cid).
    CounterNotice => pb::CounterNotice { cid: Vec<u8>, content: Vec<u8> }
);
domain_action!(
    /// An ACTIVE validator's vote: confirm, or dismiss.
    TakedownResolve => pb::TakedownResolve { cid: Vec<u8>, confirm: bool }
);
domain_action!(
    /// Flags a cid in a jurisdiction (a takedown authority of the owning group).
    SetFlag => pb::SetFlag { cid: Vec<u8>, jurisdiction: String, reason: String }
);
domain_action!(
    /// Clears a jurisdiction flag.
    ClearFlag => pb::ClearFlag { cid: Vec<u8>, jurisdiction: String }
);

fn check_cid(cid: &[u8], params: &Params) -> Result<(), TxError> {
    let max = params.rights.max_cid_bytes as usize;
    if cid.is_empty() || cid.len() > max {
        return Err(TxError::InvalidArgument(format!(
            "cid is {} bytes; allowed 1..={max}",
            cid.len()
        )));
    }
    Ok(())
}

fn check_text(what: &str, len: usize, max: u32) -> Result<(), TxError> {
    if len > max as usize {
        return Err(TxError::InvalidArgument(format!(
            "{what} is {len} bytes, over {max}"
        )));
    }
    Ok(())
}

/// The ACTIVE group that owns `cid` (its upload's `group_id`), if `signer`
/// is one of its takedown authorities.
fn owning_authority<S: StateWrite>(
    state: &S,
    cid: &[u8],
    signer: &[u8; 32],
) -> Result<String, TxError> {
    let group_id = owning_group(state, cid)?;
    require_authority(state, &group_id, signer, &hex::encode(cid))?;
    Ok(group_id)
}

/// The group named by `cid`'s upload record.
fn owning_group<S: StateWrite>(state: &S, cid: &[u8]) -> Result<String, TxError> {
    let upload = state
        .upload(cid)?
        .ok_or_else(|| TxError::NotFound(format!("upload {}", hex::encode(cid))))?;
    Ok(upload.group_id)
}

/// Who may clear a flag on `cid`: a takedown authority of the owning group
/// while the group is ACTIVE. Once the validators REMOVE the group nobody
/// holds its powers, so the cid's OWNER may clear the flags it left (review
/// m2). A SUSPENDED group's flags stay: suspension may be temporary, and
/// the validators can re-admit or remove it.
fn clear_authority<S: StateWrite>(
    state: &S,
    cid: &[u8],
    signer: &[u8; 32],
) -> Result<String, TxError> {
    let group_id = owning_group(state, cid)?;
    let refused = match require_authority(state, &group_id, signer, &hex::encode(cid)) {
        Ok(_) => return Ok(group_id),
        Err(e) => e,
    };
    let group_gone = state
        .group(&group_id)?
        .is_none_or(|g| g.status == GroupStatus::Removed as u32);
    if group_gone && is_owner(state, cid, signer)? {
        return Ok(group_id);
    }
    Err(refused)
}

/// Does `signer` hold OWNER on `cid`?
fn is_owner<S: StateWrite>(state: &S, cid: &[u8], signer: &[u8; 32]) -> Result<bool, TxError> {
    Ok(state
        .entitlement(cid, signer)?
        .is_some_and(|e| e.role == rpb::Role::Owner as i32))
}

fn set_policy_type<S: StateWrite>(
    state: &mut S,
    cid: &[u8],
    t: rpb::PolicyType,
    by: &[u8; 32],
    height: u64,
) -> Result<(), TxError> {
    let mut p = state.policy(cid)?.unwrap_or_else(|| rpb::Policy {
        cid: cid.to_vec(),
        ..Default::default()
    });
    p.r#type = t as i32;
    p.owner_pubkey = by.to_vec();
    p.updated_height = height;
    state.put_policy(&p);
    Ok(())
}

fn transition(
    cid: &[u8],
    from: Option<TakedownStatus>,
    ev: TakedownEvent,
    action: &'static str,
) -> Result<TakedownStatus, GovError> {
    next_takedown(from, ev).ok_or_else(|| GovError::InvalidTransition {
        subject: hex::encode(cid),
        from: from.map_or("absent", TakedownStatus::name),
        action,
    })
}

/// The stateless checks of a takedown request, by an authority or by a
/// validator.
pub(super) fn check_request(
    cid: &[u8],
    reason: &str,
    evidence_hash: &[u8],
    params: &Params,
) -> Result<(), TxError> {
    check_cid(cid, params)?;
    check_text("reason", reason.len(), params.governance.max_reason_bytes)?;
    if evidence_hash.len() != 32 {
        return Err(TxError::InvalidArgument(format!(
            "evidence_hash is {} bytes, expected 32",
            evidence_hash.len()
        )));
    }
    Ok(())
}

/// What a takedown request names.
pub(super) struct Request<'a> {
    pub cid: &'a [u8],
    pub group_id: String,
    pub reason: &'a str,
    pub evidence_hash: &'a [u8],
    /// A validator's request: the policy in force stays until a vote
    /// confirms (one validator alone cannot take content offline).
    pub by_validators: bool,
}

/// Opens a takedown: `PENDING` with a REMOVE election. An authority's
/// request keeps the policy in force on the record and moves it to
/// `TAKEDOWN_PENDING`; a validator's leaves it. The signer is recorded as
/// the requester.
///
/// # Errors
/// `InvalidTransition` (a takedown PENDING or CONFIRMED).
pub(super) fn open_takedown<S: StateWrite>(
    state: &mut S,
    ctx: &mut TxContext,
    r: Request<'_>,
) -> Result<(), TxError> {
    let old = state.takedown(r.cid)?;
    let from = old.as_ref().and_then(|t| TakedownStatus::of(t.status));
    let status = transition(r.cid, from, TakedownEvent::Request, "request")?;
    let previous_policy = state
        .policy(r.cid)?
        .map(|p| p.encode_to_vec())
        .unwrap_or_default();
    let prev_election = old.as_ref().and_then(|t| t.election.as_ref());
    let e = election::open(pb::ElectionKind::Remove, prev_election, ctx.height);
    let subject = Subject::Takedown(r.cid.to_vec());
    expiry::schedule(state, &subject, &e, &ctx.params.governance);
    state.put_takedown(&pb::Takedown {
        cid: r.cid.to_vec(),
        status: status as u32,
        group_id: r.group_id.clone(),
        takedown_authority_pubkey: ctx.signer.to_vec(),
        reason: r.reason.to_string(),
        evidence_hash: r.evidence_hash.to_vec(),
        requested_at: ctx.height,
        resolved_at: 0,
        counter_notice: Vec::new(),
        counter_notice_by: Vec::new(),
        previous_policy,
        election: Some(e),
        by_validators: r.by_validators,
    });
    let mut ev = Event::new("takedown.requested")
        .indexed("cid", hex::encode(r.cid))
        .indexed("group_id", r.group_id)
        .indexed("authority", hex::encode(ctx.signer))
        .plain("reason", r.reason.to_string())
        .plain("evidence_hash", hex::encode(r.evidence_hash));
    if r.by_validators {
        ev = ev.indexed("by", "validator");
    } else {
        set_policy_type(
            state,
            r.cid,
            rpb::PolicyType::TakedownPending,
            &ctx.signer,
            ctx.height,
        )?;
    }
    ctx.emit(ev);
    Ok(())
}

impl TakedownRequest {
    pub fn check_stateless(&self, params: &Params) -> Result<(), TxError> {
        check_request(&self.cid, &self.reason, &self.evidence_hash, params)
    }

    /// # Errors
    /// `NotFound` (no upload), `NotTakedownAuthority`, `InvalidTransition`
    /// (a takedown PENDING or CONFIRMED).
    pub fn execute<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &mut TxContext,
    ) -> Result<(), TxError> {
        let group_id = owning_authority(state, &self.cid, &ctx.signer)?;
        open_takedown(
            state,
            ctx,
            Request {
                cid: &self.cid,
                group_id,
                reason: &self.reason,
                evidence_hash: &self.evidence_hash,
                by_validators: false,
            },
        )
    }
}

impl CounterNotice {
    pub fn check_stateless(&self, params: &Params) -> Result<(), TxError> {
        check_cid(&self.cid, params)?;
        if self.content.is_empty() {
            return Err(TxError::InvalidArgument("counter-notice is empty".into()));
        }
        check_text(
            "counter-notice",
            self.content.len(),
            params.governance.max_counter_notice_bytes,
        )
    }

    /// # Errors
    /// `NotContentOwner`, `NotFound` (no takedown), `InvalidTransition` (not
    /// PENDING), `Conflict` (already filed).
    pub fn execute<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &mut TxContext,
    ) -> Result<(), TxError> {
        if !is_owner(state, &self.cid, &ctx.signer)? {
            return Err(GovError::NotContentOwner {
                signer: hex::encode(ctx.signer),
                cid: hex::encode(&self.cid),
            }
            .into());
        }
        let mut t = state
            .takedown(&self.cid)?
            .ok_or_else(|| TxError::NotFound(format!("takedown of {}", hex::encode(&self.cid))))?;
        if t.status != TakedownStatus::Pending as u32 {
            let from = TakedownStatus::of(t.status).map_or("?", TakedownStatus::name);
            return Err(GovError::InvalidTransition {
                subject: hex::encode(&self.cid),
                from,
                action: "counter-notice",
            }
            .into());
        }
        if !t.counter_notice_by.is_empty() {
            return Err(TxError::Conflict(format!(
                "a counter-notice on {} was filed by {}",
                hex::encode(&self.cid),
                hex::encode(&t.counter_notice_by)
            )));
        }
        t.counter_notice = self.content.clone();
        t.counter_notice_by = ctx.signer.to_vec();
        state.put_takedown(&t);
        ctx.emit(
            Event::new("takedown.counter_notice")
                .indexed("cid", hex::encode(&self.cid))
                .indexed("owner", hex::encode(ctx.signer)),
        );
        Ok(())
    }
}

impl TakedownResolve {
    pub fn check_stateless(&self, params: &Params) -> Result<(), TxError> {
        check_cid(&self.cid, params)
    }

    /// # Errors
    /// `NotValidator`, `NotFound`, `ElectionClosed` (not PENDING), `DoubleVote`.
    pub fn execute<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &mut TxContext,
    ) -> Result<(), TxError> {
        require_active(state, &ctx.signer)?;
        let cid_hex = hex::encode(&self.cid);
        let mut t = state
            .takedown(&self.cid)?
            .ok_or_else(|| TxError::NotFound(format!("takedown of {cid_hex}")))?;
        let from = TakedownStatus::of(t.status);
        let mut e = match t.election.clone() {
            Some(e) if from == Some(TakedownStatus::Pending) && e.status == election::OPEN => e,
            _ => {
                return Err(GovError::ElectionClosed {
                    subject: cid_hex,
                    kind: "TAKEDOWN",
                    status: from.map_or("?", TakedownStatus::name),
                }
                .into());
            }
        };
        let d = cast(
            state,
            &mut e,
            &ctx.signer,
            self.confirm,
            ctx.height,
            &cid_hex,
        )?
        .decision;
        if d != Decision::Open {
            let subject = Subject::Takedown(self.cid.clone());
            expiry::unschedule(state, &subject, &e, &ctx.params.governance);
        }
        t.election = Some(e);
        ctx.emit(
            Event::new("takedown.voted")
                .indexed("cid", cid_hex.clone())
                .indexed("voter", hex::encode(ctx.signer))
                .plain("confirm", self.confirm.to_string()),
        );
        let ev = match d {
            Decision::Open => None,
            Decision::Passed => Some(TakedownEvent::Confirm),
            Decision::Failed => Some(TakedownEvent::Dismiss),
        };
        if let Some(ev) = ev {
            let to = transition(&self.cid, from, ev, "resolve")?;
            t.status = to as u32;
            t.resolved_at = ctx.height;
            if to == TakedownStatus::Confirmed {
                set_policy_type(
                    state,
                    &self.cid,
                    rpb::PolicyType::TakenDown,
                    &ctx.signer,
                    ctx.height,
                )?;
            } else {
                restore_policy(state, &t)?;
            }
            let kind = if to == TakedownStatus::Confirmed {
                super::CONFIRMED_EVENT
            } else {
                "takedown.dismissed"
            };
            ctx.emit(
                Event::new(kind)
                    .indexed("cid", cid_hex)
                    .plain("height", ctx.height.to_string()),
            );
        }
        state.put_takedown(&t);
        Ok(())
    }
}

/// Puts back the policy kept on the record, or removes the takedown policy
/// when there was none before. A validator's takedown never moved the
/// policy: nothing to restore.
pub(super) fn restore_policy<S: StateWrite + ?Sized>(
    state: &mut S,
    t: &pb::Takedown,
) -> Result<(), TxError> {
    if t.by_validators {
        return Ok(());
    }
    if t.previous_policy.is_empty() {
        state.delete_policy(&t.cid);
        return Ok(());
    }
    let p = rpb::Policy::decode(t.previous_policy.as_slice())
        .map_err(|e| crate::store::StoreError::corrupt(&super::takedown_key(&t.cid), e))?;
    state.put_policy(&p);
    Ok(())
}

impl SetFlag {
    pub fn check_stateless(&self, params: &Params) -> Result<(), TxError> {
        check_cid(&self.cid, params)?;
        if !is_jurisdiction(&self.jurisdiction) {
            return Err(GovError::UnknownJurisdiction(self.jurisdiction.clone()).into());
        }
        check_text(
            "reason",
            self.reason.len(),
            params.governance.max_reason_bytes,
        )
    }

    /// # Errors
    /// `NotFound` (no upload), `NotTakedownAuthority`.
    pub fn execute<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &mut TxContext,
    ) -> Result<(), TxError> {
        let group_id = owning_authority(state, &self.cid, &ctx.signer)?;
        state.put_flag(&pb::Flag {
            cid: self.cid.clone(),
            jurisdiction: self.jurisdiction.clone(),
            takedown_authority_pubkey: ctx.signer.to_vec(),
            reason: self.reason.clone(),
            flagged_at: ctx.time_ns,
            flagged_height: ctx.height,
        });
        ctx.emit(
            Event::new("flag.set")
                .indexed("cid", hex::encode(&self.cid))
                .indexed("jurisdiction", self.jurisdiction.clone())
                .indexed("group_id", group_id),
        );
        Ok(())
    }
}

impl ClearFlag {
    pub fn check_stateless(&self, params: &Params) -> Result<(), TxError> {
        check_cid(&self.cid, params)?;
        if !is_jurisdiction(&self.jurisdiction) {
            return Err(GovError::UnknownJurisdiction(self.jurisdiction.clone()).into());
        }
        Ok(())
    }

    /// # Errors
    /// `NotFound` (no upload or no flag), `NotTakedownAuthority` (neither an
    /// authority of the ACTIVE owning group, nor the cid's OWNER once that
    /// group is no longer ACTIVE).
    pub fn execute<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &mut TxContext,
    ) -> Result<(), TxError> {
        let group_id = clear_authority(state, &self.cid, &ctx.signer)?;
        if state.flag(&self.cid, &self.jurisdiction)?.is_none() {
            return Err(TxError::NotFound(format!(
                "flag on {} in {}",
                hex::encode(&self.cid),
                self.jurisdiction
            )));
        }
        state.delete_flag(&self.cid, &self.jurisdiction);
        ctx.emit(
            Event::new("flag.cleared")
                .indexed("cid", hex::encode(&self.cid))
                .indexed("jurisdiction", self.jurisdiction.clone())
                .indexed("group_id", group_id),
        );
        Ok(())
    }
}
