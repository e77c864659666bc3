//! The `groups/` keyspace: publisher groups. `ApplyGroup` stores an
//! application (`group_applications/{group_id}`) with an ADMIT election of
//! the ACTIVE validators; admission writes `groups/{group_id}` as ACTIVE with
//! `admitted_at`. SUSPEND and REMOVE elections follow the same rules; an
//! ADMIT election about a SUSPENDED group reinstates it. A takedown
//! authority of the group rotates the authority set and adds or removes
//! member publishers. An upload belongs to a group only if its uploader is a
//! member of the ACTIVE group at upload time ([`require_member`]).

mod actions;
mod expiry;

pub use actions::{ApplyGroup, RotateTakedownAuthority, SetGroupMember, VoteGroup};
pub use expiry::expire_group_election;

use prost::Message;

use crate::keyspaces::validators::GovError;
use crate::proto::governance as pb;
use crate::store::{StateRead, StateWrite, StoreError};
use crate::tx::TxError;

/// `GroupRecord.status`, the document's enum (0: an application).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum GroupStatus {
    Active = 1,
    Suspended = 2,
    Removed = 3,
}

impl GroupStatus {
    pub const ALL: [GroupStatus; 3] = [
        GroupStatus::Active,
        GroupStatus::Suspended,
        GroupStatus::Removed,
    ];
    pub fn name(self) -> &'static str {
        match self {
            GroupStatus::Active => "ACTIVE",
            GroupStatus::Suspended => "SUSPENDED",
            GroupStatus::Removed => "REMOVED",
        }
    }
    pub fn of(status: u32) -> Option<GroupStatus> {
        Self::ALL.into_iter().find(|s| *s as u32 == status)
    }
}

/// The only group transitions: a passed election of `kind` from `from`
/// (`None`: an application).
pub fn next_group_status(from: Option<GroupStatus>, kind: pb::ElectionKind) -> Option<GroupStatus> {
    use pb::ElectionKind as K;
    use GroupStatus as G;
    match (from, kind) {
        (None | Some(G::Suspended), K::Admit) => Some(G::Active),
        (Some(G::Active), K::Suspend) => Some(G::Suspended),
        (Some(G::Active | G::Suspended), K::Remove) => Some(G::Removed),
        _ => None,
    }
}

const GROUPS: &[u8] = b"groups/";
const APPLICATIONS: &[u8] = b"group_applications/";
const COUNT: &[u8] = b"group_meta/count";
const OPEN_APPLICATIONS: &[u8] = b"group_meta/open_applications";
const ROTATION: &[u8] = b"group_rotation/";

/// `groups/`.
pub fn groups_prefix() -> Vec<u8> {
    GROUPS.to_vec()
}

/// `groups/{group_id}`.
pub fn group_key(group_id: &str) -> Vec<u8> {
    let mut k = groups_prefix();
    k.extend_from_slice(group_id.as_bytes());
    k
}

/// The largest page [`list`] and the flag listing return.
pub const MAX_PAGE: usize = 1000;

/// One page of groups in group-id order, strictly after `start_after`
/// (empty: from the start); the id to continue after when more remain.
pub fn list(
    view: &crate::store::View<'_>,
    start_after: &str,
    limit: usize,
) -> Result<(Vec<pb::GroupRecord>, Option<String>), StoreError> {
    let limit = limit.clamp(1, MAX_PAGE);
    let after = (!start_after.is_empty()).then(|| group_key(start_after));
    let rows = view.prefix_list(&groups_prefix(), after.as_deref(), limit + 1)?;
    let more = rows.len() > limit;
    let mut out = Vec::with_capacity(rows.len().min(limit));
    for (k, v) in rows.into_iter().take(limit) {
        out.push(pb::GroupRecord::decode(v.as_slice()).map_err(|e| StoreError::corrupt(&k, e))?);
    }
    let next = more
        .then(|| out.last().map(|g| g.group_id.clone()))
        .flatten();
    Ok((out, next))
}

/// `group_meta/count`: fixed-width big-endian u64.
pub fn group_count_key() -> Vec<u8> {
    COUNT.to_vec()
}

/// `group_meta/open_applications`: fixed-width big-endian u64 (the
/// `max_group_applications` cap).
pub fn open_applications_key() -> Vec<u8> {
    OPEN_APPLICATIONS.to_vec()
}

/// `group_rotation/{group_id}/`: the current authorities' rotation votes.
/// Group ids never hold `/`, so one group's prefix never covers another's.
pub fn rotation_prefix(group_id: &str) -> Vec<u8> {
    let mut k = ROTATION.to_vec();
    k.extend_from_slice(group_id.as_bytes());
    k.push(b'/');
    k
}

/// `group_rotation/{group_id}/{authority:32}` → sha256 of the proposed set.
pub fn rotation_vote_key(group_id: &str, authority: &[u8; 32]) -> Vec<u8> {
    let mut k = rotation_prefix(group_id);
    k.extend_from_slice(authority);
    k
}

/// `group_applications/{group_id}`.
pub fn application_key(group_id: &str) -> Vec<u8> {
    let mut k = APPLICATIONS.to_vec();
    k.extend_from_slice(group_id.as_bytes());
    k
}

fn read(
    state: &(impl StateRead + ?Sized),
    key: Vec<u8>,
) -> Result<Option<pb::GroupRecord>, StoreError> {
    match state.get_raw(&key)? {
        None => Ok(None),
        Some(raw) => pb::GroupRecord::decode(raw.as_slice())
            .map(Some)
            .map_err(|e| StoreError::corrupt(&key, e)),
    }
}

fn read_u64(state: &(impl StateRead + ?Sized), key: &[u8]) -> Result<u64, StoreError> {
    crate::keyspaces::u64_of(key, state.get_raw(key)?)
}

pub trait GroupsRead: StateRead {
    fn group(&self, group_id: &str) -> Result<Option<pb::GroupRecord>, StoreError> {
        read(self, group_key(group_id))
    }
    fn group_application(&self, group_id: &str) -> Result<Option<pb::GroupRecord>, StoreError> {
        read(self, application_key(group_id))
    }
    /// Open applications plus groups not REMOVED (the `max_groups` cap).
    fn group_count(&self) -> Result<u64, StoreError> {
        read_u64(self, &group_count_key())
    }
    /// Open applications (the `max_group_applications` cap).
    fn open_group_applications(&self) -> Result<u64, StoreError> {
        read_u64(self, &open_applications_key())
    }
}
impl<T: StateRead + ?Sized> GroupsRead for T {}

pub trait GroupsWrite: StateWrite {
    fn put_group(&mut self, g: &pb::GroupRecord) {
        self.put_raw(group_key(&g.group_id), g.encode_to_vec());
    }
    fn put_group_application(&mut self, g: &pb::GroupRecord) {
        self.put_raw(application_key(&g.group_id), g.encode_to_vec());
    }
    fn delete_group_application(&mut self, group_id: &str) {
        self.delete_raw(application_key(group_id));
    }
    fn put_group_count(&mut self, n: u64) {
        self.put_raw(group_count_key(), n.to_be_bytes().to_vec());
    }
    fn put_open_group_applications(&mut self, n: u64) {
        self.put_raw(open_applications_key(), n.to_be_bytes().to_vec());
    }
    /// Records `authority`'s vote for the set hashing to `set_hash`,
    /// replacing its earlier vote.
    fn put_rotation_vote(&mut self, group_id: &str, authority: &[u8; 32], set_hash: [u8; 32]) {
        self.put_raw(rotation_vote_key(group_id, authority), set_hash.to_vec());
    }
    /// The votes of the group's current rotation: (authority key, set hash).
    /// At most one per key ever made an authority of the group since its
    /// last rotation, so `max_group_authorities` bounds the read.
    fn rotation_votes(&self, group_id: &str) -> Result<crate::store::Rows, StoreError> {
        let prefix = rotation_prefix(group_id);
        Ok(self
            .prefix_raw(crate::store::Space::State, &prefix, None, usize::MAX)?
            .into_iter()
            .filter_map(|(k, v)| Some((k.strip_prefix(prefix.as_slice())?.to_vec(), v)))
            .collect())
    }
    /// Forgets every rotation vote of the group (after a rotation).
    fn clear_rotation_votes(&mut self, group_id: &str) -> Result<(), StoreError> {
        for (k, _) in self.rotation_votes(group_id)? {
            let mut key = rotation_prefix(group_id);
            key.extend_from_slice(&k);
            self.delete_raw(key);
        }
        Ok(())
    }
}
impl<T: StateWrite + ?Sized> GroupsWrite for T {}

/// The ACTIVE group `group_id` if `signer` is one of its takedown authorities.
///
/// # Errors
/// `NotTakedownAuthority` (naming `what`) otherwise.
pub fn require_authority<S: StateRead + ?Sized>(
    state: &S,
    group_id: &str,
    signer: &[u8; 32],
    what: &str,
) -> Result<pb::GroupRecord, TxError> {
    let g = state
        .group(group_id)?
        .filter(|g| g.status == GroupStatus::Active as u32);
    match g {
        Some(g)
            if g.takedown_authorities
                .iter()
                .any(|a| a.as_slice() == signer) =>
        {
            Ok(g)
        }
        _ => Err(GovError::NotTakedownAuthority {
            signer: hex::encode(signer),
            group: group_id.to_string(),
            cid: what.to_string(),
        }
        .into()),
    }
}

/// An upload may name `group_id` only if `uploader` is a member of that
/// ACTIVE group now (at upload time). An empty `group_id` names no group.
///
/// # Errors
/// `NotGroupMember`.
pub fn require_member<S: StateRead + ?Sized>(
    state: &S,
    group_id: &str,
    uploader: &[u8],
) -> Result<(), TxError> {
    if group_id.is_empty() {
        return Ok(());
    }
    let ok = state.group(group_id)?.is_some_and(|g| {
        g.status == GroupStatus::Active as u32 && g.members.iter().any(|m| m.as_slice() == uploader)
    });
    if ok {
        Ok(())
    } else {
        Err(GovError::NotGroupMember {
            member: hex::encode(uploader),
            group: group_id.to_string(),
        }
        .into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_documented_group_transitions_exist() {
        use pb::ElectionKind as K;
        use GroupStatus as G;
        let allowed = [
            (None, K::Admit, G::Active),
            (Some(G::Suspended), K::Admit, G::Active),
            (Some(G::Active), K::Suspend, G::Suspended),
            (Some(G::Active), K::Remove, G::Removed),
            (Some(G::Suspended), K::Remove, G::Removed),
        ];
        let froms = std::iter::once(None).chain(G::ALL.into_iter().map(Some));
        for from in froms {
            for k in [K::Unspecified, K::Admit, K::Remove, K::Suspend] {
                let want = allowed
                    .iter()
                    .find(|(f, kk, _)| *f == from && *kk == k)
                    .map(|(_, _, t)| *t);
                assert_eq!(next_group_status(from, k), want, "{from:?} {k:?}");
            }
        }
    }

    #[test]
    fn group_keys_are_prefixed_and_ordered() {
        assert!(group_key("a") < group_key("b"));
        assert!(!application_key("x").starts_with(GROUPS));
        assert_eq!(group_key("g1"), b"groups/g1".to_vec());
    }
}
