//! Group actions: `ApplyGroup`, `VoteGroup`, `RotateTakedownAuthority`,
//! `SetGroupMember`.

use super::{next_group_status, require_authority, GroupStatus, GroupsRead, GroupsWrite};
use crate::keyspaces::params::Params;
use crate::keyspaces::validators::election::{self, cast, require_active, Decision};
use crate::keyspaces::validators::expiry::{self, Subject};
use crate::keyspaces::validators::GovError;
use crate::keyspaces::{Event, TxContext};
use crate::proto::governance as pb;
use crate::store::StateWrite;
use crate::tx::TxError;
use sha2::{Digest, Sha256};

domain_action!(
    /// Applies for a publisher group (an ADMIT election opens).
    ApplyGroup => pb::ApplyGroup { group_id: String, takedown_authorities: Vec<Vec<u8>>, members: Vec<Vec<u8>> }
);
domain_action!(
    /// An ACTIVE validator's vote about a group (`kind` is an `ElectionKind`).
    VoteGroup => pb::VoteGroup { group_id: String, kind: i32, approve: bool }
);
domain_action!(
    /// Replaces a group's takedown authorities (by a current one).
    RotateTakedownAuthority => pb::RotateTakedownAuthority { group_id: String, takedown_authorities: Vec<Vec<u8>> }
);
domain_action!(
    /// Adds or removes a member publisher (by a takedown authority).
    SetGroupMember => pb::SetGroupMember { group_id: String, member: Vec<u8>, add: bool }
);

/// A group id: 1..=`max_group_id_bytes` of ASCII letters, digits, `.`,
/// `_` and `-` (it is a key segment, an event value and a CLI argument).
fn check_id(id: &str, params: &Params) -> Result<(), TxError> {
    let max = params.rights.max_group_id_bytes as usize;
    if id.is_empty() || id.len() > max {
        return Err(TxError::InvalidArgument(format!(
            "group id {id:?} is {} bytes; allowed 1..={max}",
            id.len()
        )));
    }
    if let Some(c) = id
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
    {
        return Err(TxError::InvalidArgument(format!(
            "group id {id:?} holds {c:?}; allowed are ASCII letters, digits, '.', '_' and '-'"
        )));
    }
    Ok(())
}

/// 1..=max distinct valid ed25519 keys.
fn check_keys(what: &str, keys: &[Vec<u8>], min: usize, max: u32) -> Result<(), TxError> {
    if keys.len() < min || keys.len() > max as usize {
        return Err(TxError::InvalidArgument(format!(
            "{} {what}; allowed {min}..={max}",
            keys.len()
        )));
    }
    for (i, k) in keys.iter().enumerate() {
        crate::tx::identity_key(k)
            .map_err(|e| TxError::InvalidArgument(format!("{what} {}: {e}", hex::encode(k))))?;
        if keys[..i].contains(k) {
            return Err(TxError::InvalidArgument(format!(
                "{what} {} twice",
                hex::encode(k)
            )));
        }
    }
    Ok(())
}

impl ApplyGroup {
    pub fn check_stateless(&self, params: &Params) -> Result<(), TxError> {
        let g = &params.governance;
        check_id(&self.group_id, params)?;
        // Counted before any key is parsed: parsing is the costly part.
        let keys = self.takedown_authorities.len() + self.members.len();
        if keys > g.max_keys_per_action as usize {
            return Err(TxError::InvalidArgument(format!(
                "{keys} keys (authorities and members) in one action; allowed {}: add more members with SetGroupMember",
                g.max_keys_per_action
            )));
        }
        check_keys(
            "takedown authorities",
            &self.takedown_authorities,
            1,
            g.max_group_authorities,
        )?;
        check_keys("members", &self.members, 0, g.max_group_members)
    }

    /// # Errors
    /// `Conflict` when the group exists or an application is open;
    /// `GovernanceCap` (open applications, groups).
    pub fn execute<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &mut TxContext,
    ) -> Result<(), TxError> {
        if state.group(&self.group_id)?.is_some() {
            return Err(TxError::Conflict(format!(
                "group {:?} exists",
                self.group_id
            )));
        }
        // a closed application is deleted, so one that exists is open
        if state.group_application(&self.group_id)?.is_some() {
            return Err(TxError::Conflict(format!(
                "group {:?} has an open application",
                self.group_id
            )));
        }
        let g = &ctx.params.governance;
        let open = state.open_group_applications()?;
        GovError::room(
            "open group applications",
            open,
            u64::from(g.max_group_applications),
        )?;
        let count = state.group_count()?;
        GovError::room("groups", count, u64::from(g.max_groups))?;
        state.put_group_count(count + 1);
        state.put_open_group_applications(open + 1);
        let e = election::open(pb::ElectionKind::Admit, None, ctx.height);
        let subject = Subject::Group(self.group_id.clone());
        expiry::schedule(state, &subject, &e, &ctx.params.governance);
        state.put_group_application(&pb::GroupRecord {
            group_id: self.group_id.clone(),
            takedown_authorities: self.takedown_authorities.clone(),
            status: 0,
            stake: 0,
            admitted_at: 0,
            members: self.members.clone(),
            applicant: ctx.signer.to_vec(),
            election: Some(e),
        });
        ctx.emit(
            Event::new("group.applied")
                .indexed("group_id", self.group_id.clone())
                .indexed("applicant", hex::encode(ctx.signer)),
        );
        Ok(())
    }
}

impl VoteGroup {
    pub fn check_stateless(&self, params: &Params) -> Result<(), TxError> {
        check_id(&self.group_id, params)?;
        match pb::ElectionKind::try_from(self.kind) {
            Ok(pb::ElectionKind::Admit | pb::ElectionKind::Suspend | pb::ElectionKind::Remove) => {
                Ok(())
            }
            _ => Err(TxError::InvalidArgument(format!(
                "group election kind {}",
                self.kind
            ))),
        }
    }

    /// # Errors
    /// `NotValidator`, `ElectionClosed`, `DoubleVote`, `GovernanceCap` (groups).
    pub fn execute<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &mut TxContext,
    ) -> Result<(), TxError> {
        require_active(state, &ctx.signer)?;
        let kind = pb::ElectionKind::try_from(self.kind).unwrap_or(pb::ElectionKind::Unspecified);
        let group = state.group(&self.group_id)?;
        let from = group.as_ref().and_then(|g| GroupStatus::of(g.status));
        let (mut rec, is_application) = match group {
            Some(g) => (g, false),
            None => match state.group_application(&self.group_id)? {
                Some(a) => (a, true),
                None => return Err(TxError::NotFound(format!("group {:?}", self.group_id))),
            },
        };
        let closed = || GovError::ElectionClosed {
            subject: self.group_id.clone(),
            kind: election::kind_name(self.kind),
            status: if is_application {
                "APPLIED"
            } else {
                from.map_or("?", GroupStatus::name)
            },
        };
        let to = next_group_status(from, kind).ok_or_else(closed)?;
        let mut e = match rec.election.clone() {
            Some(e) if e.status == election::OPEN && e.kind == self.kind => e,
            _ if is_application => return Err(closed().into()),
            Some(e) if e.status == election::OPEN => {
                return Err(TxError::Conflict(format!(
                    "group {:?} has an open {} election (round {}); it must close first",
                    self.group_id,
                    election::kind_name(e.kind),
                    e.round
                )))
            }
            prev => {
                let e = election::open(kind, prev.as_ref(), ctx.height);
                let subject = Subject::Group(self.group_id.clone());
                expiry::schedule(state, &subject, &e, &ctx.params.governance);
                e
            }
        };
        let d = cast(
            state,
            &mut e,
            &ctx.signer,
            self.approve,
            ctx.height,
            &self.group_id,
        )?
        .decision;
        if d != Decision::Open {
            let subject = Subject::Group(self.group_id.clone());
            expiry::unschedule(state, &subject, &e, &ctx.params.governance);
        }
        rec.election = Some(e);
        ctx.emit(
            Event::new("group.voted")
                .indexed("group_id", self.group_id.clone())
                .indexed("voter", hex::encode(ctx.signer))
                .plain("kind", election::kind_name(self.kind))
                .plain("approve", self.approve.to_string()),
        );
        match d {
            Decision::Open if is_application => state.put_group_application(&rec),
            Decision::Open => state.put_group(&rec),
            Decision::Failed if is_application => {
                super::expiry::close_application(state, &self.group_id, false)?
            }
            Decision::Failed => state.put_group(&rec),
            Decision::Passed => {
                if is_application {
                    super::expiry::close_application(state, &self.group_id, true)?;
                    rec.admitted_at = ctx.height;
                }
                if to == GroupStatus::Removed {
                    super::expiry::release(state)?;
                }
                // A rotation vote speaks for the group as it was: a
                // suspension, re-admission or removal starts afresh.
                state.clear_rotation_votes(&self.group_id)?;
                rec.status = to as u32;
                state.put_group(&rec);
                let name = match to {
                    GroupStatus::Active => "group.admitted",
                    GroupStatus::Suspended => "group.suspended",
                    GroupStatus::Removed => "group.removed",
                };
                ctx.emit(
                    Event::new(name)
                        .indexed("group_id", self.group_id.clone())
                        .plain("height", ctx.height.to_string()),
                );
            }
        }
        Ok(())
    }
}

impl RotateTakedownAuthority {
    pub fn check_stateless(&self, params: &Params) -> Result<(), TxError> {
        check_id(&self.group_id, params)?;
        check_keys(
            "takedown authorities",
            &self.takedown_authorities,
            1,
            params.governance.max_group_authorities,
        )
    }

    /// A vote by a current authority for this exact set (same keys, same
    /// order). The set takes effect when a majority of the current
    /// authorities have voted for it, so no single authority of several can
    /// take the group over (review m1); a lone authority rotates at once.
    ///
    /// # Errors
    /// `NotTakedownAuthority` unless the signer is a current authority of the ACTIVE group.
    pub fn execute<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &mut TxContext,
    ) -> Result<(), TxError> {
        let mut g = require_authority(state, &self.group_id, &ctx.signer, "(rotation)")?;
        let set_hash = set_hash(&self.takedown_authorities);
        state.put_rotation_vote(&self.group_id, &ctx.signer, set_hash);
        let approvals = state
            .rotation_votes(&self.group_id)?
            .iter()
            .filter(|(who, h)| {
                h.as_slice() == set_hash && g.takedown_authorities.iter().any(|a| a == who)
            })
            .count();
        let needed = g.takedown_authorities.len() / 2 + 1;
        let mut ev = Event::new("group.rotation_vote")
            .indexed("group_id", self.group_id.clone())
            .plain("by", hex::encode(ctx.signer))
            .plain("set", hex::encode(set_hash))
            .plain("approvals", approvals.to_string())
            .plain("needed", needed.to_string());
        if approvals >= needed {
            g.takedown_authorities = self.takedown_authorities.clone();
            state.put_group(&g);
            state.clear_rotation_votes(&self.group_id)?;
            ev = Event::new("group.authority_rotated")
                .indexed("group_id", self.group_id.clone())
                .plain("by", hex::encode(ctx.signer))
                .plain("approvals", approvals.to_string())
                .plain("authorities", g.takedown_authorities.len().to_string());
        }
        ctx.emit(ev);
        Ok(())
    }
}

/// sha256 over the keys of a proposed authority set, in order.
fn set_hash(keys: &[Vec<u8>]) -> [u8; 32] {
    let mut h = Sha256::new();
    for k in keys {
        h.update(k);
    }
    h.finalize().into()
}

impl SetGroupMember {
    pub fn check_stateless(&self, params: &Params) -> Result<(), TxError> {
        check_id(&self.group_id, params)?;
        check_keys("member", std::slice::from_ref(&self.member), 1, 1)
    }

    /// # Errors
    /// `NotTakedownAuthority`; `NotFound` removing a non-member; `GovernanceCap`.
    pub fn execute<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &mut TxContext,
    ) -> Result<(), TxError> {
        let mut g = require_authority(state, &self.group_id, &ctx.signer, "(membership)")?;
        let present = g.members.contains(&self.member);
        match (self.add, present) {
            (true, true) => return Ok(()),
            (true, false) => {
                GovError::room(
                    "group members",
                    g.members.len() as u64,
                    u64::from(ctx.params.governance.max_group_members),
                )?;
                g.members.push(self.member.clone());
            }
            (false, false) => {
                return Err(TxError::NotFound(format!(
                    "member {} of group {:?}",
                    hex::encode(&self.member),
                    self.group_id
                )))
            }
            (false, true) => g.members.retain(|m| m != &self.member),
        }
        state.put_group(&g);
        let kind = if self.add {
            "group.member_added"
        } else {
            "group.member_removed"
        };
        ctx.emit(
            Event::new(kind)
                .indexed("group_id", self.group_id.clone())
                .indexed("member", hex::encode(&self.member)),
        );
        Ok(())
    }
}
