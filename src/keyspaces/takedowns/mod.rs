//! The `takedowns/` and `flags/` keyspaces.
//!
//! - `TakedownRequest` by a takedown authority of the group that owns the
//!   cid (the upload's `group_id`): `PENDING`, the policy moves to
//!   `TAKEDOWN_PENDING` and the policy in force is kept on the record.
//! - `ValidatorTakedownRequest` by an ACTIVE validator, for content no
//!   authority answers for (no group, or a group SUSPENDED or REMOVED):
//!   the same `PENDING` takedown ([`orphan`]).
//! - `CounterNotice` by an `OWNER` of the cid, while `PENDING`.
//! - `TakedownResolve` votes of ACTIVE validators: approvals (confirm) over
//!   2/3 of the active power → `CONFIRMED`, policy `TAKEN_DOWN`; 1/3 or more
//!   against → `DISMISSED`, the kept policy restored. Undecided after
//!   `election_blocks`, the takedown expires: `DISMISSED`, policy restored
//!   ([`expire_takedown`]).
//! - `SetFlag` / `ClearFlag` by the owning group's authority; the access
//!   decision denies in a flagged jurisdiction ([`governance_denial`]).

mod actions;
mod expiry;
mod orphan;

pub use actions::{ClearFlag, CounterNotice, SetFlag, TakedownRequest, TakedownResolve};
pub use expiry::expire_takedown;
pub use orphan::ValidatorTakedownRequest;

use prost::Message;

use crate::proto::governance as pb;
use crate::store::decode_row as decode;
use crate::store::{StateRead, StateWrite, StoreError};

/// `Takedown.status`, the document's enum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum TakedownStatus {
    Pending = 1,
    Confirmed = 2,
    Dismissed = 3,
}

impl TakedownStatus {
    pub const ALL: [TakedownStatus; 3] = [
        TakedownStatus::Pending,
        TakedownStatus::Confirmed,
        TakedownStatus::Dismissed,
    ];
    pub fn name(self) -> &'static str {
        match self {
            TakedownStatus::Pending => "PENDING",
            TakedownStatus::Confirmed => "CONFIRMED",
            TakedownStatus::Dismissed => "DISMISSED",
        }
    }
    pub fn of(v: u32) -> Option<Self> {
        Self::ALL.into_iter().find(|s| *s as u32 == v)
    }
}

/// What can happen to a takedown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TakedownEvent {
    Request,
    Confirm,
    Dismiss,
}

/// The only takedown transitions (`None`: no record).
pub fn next_takedown(from: Option<TakedownStatus>, ev: TakedownEvent) -> Option<TakedownStatus> {
    use TakedownEvent as E;
    use TakedownStatus as S;
    match (from, ev) {
        (None | Some(S::Dismissed), E::Request) => Some(S::Pending),
        (Some(S::Pending), E::Confirm) => Some(S::Confirmed),
        (Some(S::Pending), E::Dismiss) => Some(S::Dismissed),
        _ => None,
    }
}

/// The event of the vote that confirms a takedown (the node's reconciler
/// follows it: `local::purge`).
pub const CONFIRMED_EVENT: &str = "takedown.confirmed";

const TAKEDOWNS: &[u8] = b"takedowns/";
const FLAGS: &[u8] = b"flags/";

/// `takedowns/{cid}`.
pub fn takedown_key(cid: &[u8]) -> Vec<u8> {
    let mut k = TAKEDOWNS.to_vec();
    k.extend_from_slice(cid);
    k
}

/// `flags/{u32be len(cid)}{cid}/`: every flag of one cid.
pub fn flags_prefix(cid: &[u8]) -> Vec<u8> {
    let mut k = FLAGS.to_vec();
    k.extend_from_slice(&(cid.len() as u32).to_be_bytes());
    k.extend_from_slice(cid);
    k.push(b'/');
    k
}

/// `flags/{u32be len(cid)}{cid}/{jurisdiction}`: the length keeps one cid's
/// flags apart from a longer cid's.
pub fn flag_key(cid: &[u8], jurisdiction: &str) -> Vec<u8> {
    let mut k = flags_prefix(cid);
    k.extend_from_slice(jurisdiction.as_bytes());
    k
}

/// One page of `cid`'s flags in jurisdiction order, strictly after
/// `start_after` (empty: from the start); the jurisdiction to continue
/// after when more remain.
pub fn flags_of(
    view: &crate::store::View<'_>,
    cid: &[u8],
    start_after: &str,
    limit: usize,
) -> Result<(Vec<pb::Flag>, Option<String>), StoreError> {
    let limit = limit.clamp(1, crate::keyspaces::groups::MAX_PAGE);
    let after = (!start_after.is_empty()).then(|| flag_key(cid, start_after));
    let rows = view.prefix_list(&flags_prefix(cid), after.as_deref(), limit + 1)?;
    let more = rows.len() > limit;
    let mut out = Vec::with_capacity(rows.len().min(limit));
    for (k, v) in rows.into_iter().take(limit) {
        out.push(pb::Flag::decode(v.as_slice()).map_err(|e| StoreError::corrupt(&k, e))?);
    }
    let next = more
        .then(|| out.last().map(|f| f.jurisdiction.clone()))
        .flatten();
    Ok((out, next))
}

pub trait TakedownsRead: StateRead {
    fn takedown(&self, cid: &[u8]) -> Result<Option<pb::Takedown>, StoreError> {
        let k = takedown_key(cid);
        decode(&k, self.get_raw(&k)?)
    }
    fn flag(&self, cid: &[u8], jurisdiction: &str) -> Result<Option<pb::Flag>, StoreError> {
        let k = flag_key(cid, jurisdiction);
        decode(&k, self.get_raw(&k)?)
    }
}
impl<T: StateRead + ?Sized> TakedownsRead for T {}

pub trait TakedownsWrite: StateWrite {
    fn put_takedown(&mut self, t: &pb::Takedown) {
        self.put_raw(takedown_key(&t.cid), t.encode_to_vec());
    }
    fn put_flag(&mut self, f: &pb::Flag) {
        self.put_raw(flag_key(&f.cid, &f.jurisdiction), f.encode_to_vec());
    }
    fn delete_flag(&mut self, cid: &[u8], jurisdiction: &str) {
        self.delete_raw(flag_key(cid, jurisdiction));
    }
}
impl<T: StateWrite + ?Sized> TakedownsWrite for T {}

/// Why `cid` is under a pending (by its group's authority) or confirmed
/// takedown, or `None` (the access decision's takedown hook; a validator's
/// pending request denies nothing).
pub fn takedown_state<S: StateRead + ?Sized>(
    state: &S,
    cid: &[u8],
) -> Result<Option<String>, StoreError> {
    Ok(state
        .takedown(cid)?
        .and_then(|t| match TakedownStatus::of(t.status) {
            // a validator's request denies nothing until the vote confirms
            Some(TakedownStatus::Pending) if t.by_validators => None,
            Some(TakedownStatus::Pending) => {
                Some(format!("takedown PENDING since height {}", t.requested_at))
            }
            Some(TakedownStatus::Confirmed) => {
                Some(format!("TAKEN_DOWN at height {}", t.resolved_at))
            }
            _ => None,
        }))
}

/// Why access to `cid` in `territory` is denied by a flag, or `None`.
pub fn governance_denial<S: StateRead + ?Sized>(
    state: &S,
    cid: &[u8],
    territory: &str,
) -> Result<Option<String>, StoreError> {
    Ok(state.flag(cid, territory)?.map(|f| {
        format!(
            "flagged in {territory} at height {}: {}",
            f.flagged_height, f.reason
        )
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn only_the_documented_takedown_transitions_exist() {
        use TakedownEvent as E;
        use TakedownStatus as S;
        let allowed = [
            (None, E::Request, S::Pending),
            (Some(S::Dismissed), E::Request, S::Pending),
            (Some(S::Pending), E::Confirm, S::Confirmed),
            (Some(S::Pending), E::Dismiss, S::Dismissed),
        ];
        for from in std::iter::once(None).chain(S::ALL.into_iter().map(Some)) {
            for ev in [E::Request, E::Confirm, E::Dismiss] {
                let want = allowed
                    .iter()
                    .find(|(f, e, _)| *f == from && *e == ev)
                    .map(|(_, _, t)| *t);
                assert_eq!(next_takedown(from, ev), want, "{from:?} {ev:?}");
            }
        }
    }

    proptest! {
        #[test]
        fn flag_keys_never_mix_cids(a in proptest::collection::vec(any::<u8>(), 1..40),
            b in proptest::collection::vec(any::<u8>(), 1..40)) {
            prop_assume!(a != b);
            prop_assert_ne!(flag_key(&a, "DE"), flag_key(&b, "DE"));
            prop_assert!(!flag_key(&a, "DE").starts_with(&flag_key(&b, "")));
        }
    }
}
