//! Election expiry. Every election is scheduled, when it opens, under
//! `governance_due/{until}{tag}{subject}` (value: its round), `until` =
//! opened_at + `election_blocks`. At the end of each block the due entries
//! (at most [`PER_BLOCK`]; the rest wait for the next block) close elections
//! still OPEN in that round as EXPIRED:
//! - a validator candidate becomes REMOVED (its record no longer counts
//!   against `max_validator_records`);
//! - a group application is dropped (no longer counts against `max_groups`);
//! - a removal or suspension lapses;
//! - a PENDING takedown is DISMISSED and the policy it replaced restored.
//!
//! An election decided or withdrawn earlier deletes its entry
//! ([`unschedule`]), so the entries are exactly the open elections.

use super::lifecycle::{enter, At};
use super::{election, transition, GovernanceParams, ValidatorEvent, ValidatorStatus};
use super::{ValidatorsRead, ValidatorsWrite};
use crate::keyspaces::groups::expire_group_election;
use crate::keyspaces::takedowns::expire_takedown;
use crate::keyspaces::Event;
use crate::proto::governance as pb;
use crate::store::{Space, StateWrite};
use crate::tx::TxError;

/// Due entries handled per block.
pub const PER_BLOCK: usize = 64;

const DUE: &[u8] = b"governance_due/";
const TAG_VALIDATOR: u8 = b'v';
const TAG_GROUP: u8 = b'g';
const TAG_TAKEDOWN: u8 = b't';

/// Whose election.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    Validator([u8; 32]),
    /// A group, or its application while it is not admitted.
    Group(String),
    /// The takedown of a cid.
    Takedown(Vec<u8>),
}

/// `governance_due/`.
pub fn due_prefix() -> Vec<u8> {
    DUE.to_vec()
}

/// `governance_due/{until:be8}{tag}{subject}`.
pub fn due_key(until: u64, subject: &Subject) -> Vec<u8> {
    let mut k = due_prefix();
    k.extend_from_slice(&until.to_be_bytes());
    match subject {
        Subject::Validator(op) => {
            k.push(TAG_VALIDATOR);
            k.extend_from_slice(op);
        }
        Subject::Group(id) => {
            k.push(TAG_GROUP);
            k.extend_from_slice(id.as_bytes());
        }
        Subject::Takedown(cid) => {
            k.push(TAG_TAKEDOWN);
            k.extend_from_slice(cid);
        }
    }
    k
}

fn split_due_key(k: &[u8]) -> Option<(u64, Subject)> {
    let rest = k.strip_prefix(DUE)?;
    let (until, rest) = rest.split_first_chunk::<8>()?;
    let (tag, subject) = rest.split_first()?;
    let subject = match *tag {
        TAG_VALIDATOR => Subject::Validator(<[u8; 32]>::try_from(subject).ok()?),
        TAG_GROUP => Subject::Group(String::from_utf8(subject.to_vec()).ok()?),
        TAG_TAKEDOWN => Subject::Takedown(subject.to_vec()),
        _ => return None,
    };
    Some((u64::from_be_bytes(*until), subject))
}

/// The due entry of election `e` about `subject`.
fn due_of(subject: &Subject, e: &pb::Election, params: &GovernanceParams) -> Vec<u8> {
    due_key(e.opened_at.saturating_add(params.election_blocks), subject)
}

/// Schedules the expiry of `e` (just opened) about `subject`.
pub fn schedule<S: StateWrite + ?Sized>(
    state: &mut S,
    subject: &Subject,
    e: &pb::Election,
    params: &GovernanceParams,
) {
    state.put_raw(due_of(subject, e, params), e.round.to_be_bytes().to_vec());
}

/// Deletes the entry of `e` about `subject`: call it when `e` closes
/// before it is due (decided, withdrawn) or its subject is deleted.
pub fn unschedule<S: StateWrite + ?Sized>(
    state: &mut S,
    subject: &Subject,
    e: &pb::Election,
    params: &GovernanceParams,
) {
    state.delete_raw(due_of(subject, e, params));
}

/// Closes `e` as EXPIRED at `height` if it is OPEN in `round`; true if it did.
pub fn expire(e: &mut pb::Election, round: u64, height: u64) -> bool {
    if e.status != election::OPEN || e.round != round {
        return false;
    }
    e.status = election::EXPIRED;
    e.closed_at = height;
    true
}

/// The expiry pass of end of block.
pub(super) fn expire_due<S: StateWrite>(
    state: &mut S,
    height: u64,
    params: &GovernanceParams,
    events: &mut Vec<Event>,
) -> Result<(), TxError> {
    let rows = state.prefix_raw(Space::State, DUE, None, PER_BLOCK)?;
    for (k, v) in rows {
        let Some((until, subject)) = split_due_key(&k) else {
            state.delete_raw(k);
            continue;
        };
        if until > height {
            break;
        }
        state.delete_raw(k);
        let Ok(round) = <[u8; 8]>::try_from(v.as_slice()).map(u64::from_be_bytes) else {
            continue;
        };
        match subject {
            Subject::Validator(op) => expire_validator(state, &op, round, height, params, events)?,
            Subject::Group(id) => expire_group_election(state, &id, round, height, events)?,
            Subject::Takedown(cid) => expire_takedown(state, &cid, round, height, events)?,
        }
    }
    Ok(())
}

fn expire_validator<S: StateWrite>(
    state: &mut S,
    op: &[u8; 32],
    round: u64,
    height: u64,
    params: &GovernanceParams,
    events: &mut Vec<Event>,
) -> Result<(), TxError> {
    let Some(mut record) = state.validator(op)? else {
        return Ok(());
    };
    let Some(e) = record.governance.as_mut().and_then(|g| g.election.as_mut()) else {
        return Ok(());
    };
    if !expire(e, round, height) {
        return Ok(());
    }
    events.push(
        Event::new("validator.election_closed")
            .indexed("subject", hex::encode(op))
            .plain("kind", election::kind_name(e.kind))
            .plain("round", round.to_string())
            .plain("result", election::status_name(e.status)),
    );
    let admit = e.kind == pb::ElectionKind::Admit as i32;
    let status = state.validator_status(op)?;
    if admit && status == Some(ValidatorStatus::Candidate) {
        let next = transition(op, status, ValidatorEvent::Expired)?;
        let at = At {
            height,
            params,
            events,
        };
        enter(state, at, op, &mut record, next)?; // stores (here: deletes) the record
    } else {
        state.put_validator(op, &record);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn due_keys_sort_by_height_and_round_trip() {
        let a = due_key(5, &Subject::Group("zz".into()));
        let b = due_key(6, &Subject::Validator([0; 32]));
        assert!(a < b);
        assert_eq!(split_due_key(&a), Some((5, Subject::Group("zz".into()))));
        assert_eq!(split_due_key(&b), Some((6, Subject::Validator([0; 32]))));
        assert_eq!(split_due_key(b"governance_due/short"), None);
        let t = due_key(7, &Subject::Takedown(b"cid/x".to_vec()));
        assert_eq!(
            split_due_key(&t),
            Some((7, Subject::Takedown(b"cid/x".to_vec())))
        );
        assert!(!a.starts_with(&super::super::validators_prefix()));
    }
}
