//! Helpers for groups, takedowns and flags over the rights world.

#![allow(dead_code)]

use stave::keyspaces::groups::{ApplyGroup, VoteGroup};
use stave::keyspaces::rights::access;
use stave::keyspaces::takedowns::{
    ClearFlag, CounterNotice, SetFlag, TakedownRequest, TakedownResolve, ValidatorTakedownRequest,
};
use stave::proto::governance as gpb;
use stave::proto::rights as rpb;
use stave::tx::{Action, Code};

use super::rights::*;

pub const AUTHORITY: u8 = 10;
pub const OTHER_AUTHORITY: u8 = 11;
pub const GROUP: &str = "label";

pub fn apply_group(id: &str, authority: u8, members: &[u8]) -> Action {
    Action::ApplyGroup(ApplyGroup {
        group_id: id.into(),
        takedown_authorities: vec![pk(authority).to_vec()],
        members: members.iter().map(|m| pk(*m).to_vec()).collect(),
    })
}

pub fn vote_group(id: &str, kind: gpb::ElectionKind, approve: bool) -> Action {
    Action::VoteGroup(VoteGroup {
        group_id: id.into(),
        kind: kind as i32,
        approve,
    })
}

pub fn takedown(cid: &[u8]) -> Action {
    Action::TakedownRequest(TakedownRequest {
        cid: label_cid(cid),
        reason: "infringes catalogue #12".into(),
        evidence_hash: vec![0xab; 32],
    })
}

/// A takedown request by an ACTIVE validator (content no authority answers
/// for).
pub fn validator_takedown(cid: &[u8]) -> Action {
    Action::ValidatorTakedownRequest(ValidatorTakedownRequest {
        cid: label_cid(cid),
        reason: "unlicensed upload".into(),
        evidence_hash: vec![0xcd; 32],
    })
}

pub fn counter(cid: &[u8]) -> Action {
    Action::CounterNotice(CounterNotice {
        cid: label_cid(cid),
        content: b"we hold the master rights".to_vec(),
    })
}

pub fn resolve(cid: &[u8], confirm: bool) -> Action {
    Action::TakedownResolve(TakedownResolve {
        cid: label_cid(cid),
        confirm,
    })
}

pub fn set_flag(cid: &[u8], j: &str) -> Action {
    Action::SetFlag(SetFlag {
        cid: label_cid(cid),
        jurisdiction: j.into(),
        reason: "court order".into(),
    })
}

pub fn clear_flag(cid: &[u8], j: &str) -> Action {
    Action::ClearFlag(ClearFlag {
        cid: label_cid(cid),
        jurisdiction: j.into(),
    })
}

/// A world with group `GROUP` admitted (authority `AUTHORITY`, member
/// `UPLOADER`), and `cid` uploaded into it and published by `UPLOADER`.
pub async fn grouped(cid: &[u8]) -> World {
    grouped_in(World::new().await, cid).await
}

/// [`grouped`] in a given world.
pub async fn grouped_in(mut w: World, cid: &[u8]) -> World {
    w.send(STRANGER, vec![apply_group(GROUP, AUTHORITY, &[UPLOADER])])
        .await
        .ok();
    for v in &VALIDATORS[..3] {
        w.send(*v, vec![vote_group(GROUP, gpb::ElectionKind::Admit, true)])
            .await
            .ok();
    }
    let mut m = manifest(cid);
    m.group_id = GROUP.into();
    w.send(VALIDATORS[0], vec![upload_action(UPLOADER, m)])
        .await
        .ok();
    w.send(UPLOADER, vec![publish(cid)]).await.ok();
    w
}

/// The access decision for `who` in `territory`: None if allowed, else its code.
pub fn access_code(w: &World, cid: &[u8], who: u8, territory: &str) -> Option<Code> {
    let cid = label_cid(cid);
    let req = access::AccessRequest {
        cid: &cid,
        consumer: &pk(who),
        territory,
        use_type: 0,
        now: 1_700_000_000 + w.height,
        context: &[],
    };
    let d = access::decide(&w.node.store.committed(), &req).unwrap();
    d.outcome.err().map(|e| e.code())
}

pub fn policy_type(w: &World, cid: &[u8]) -> Option<rpb::PolicyType> {
    use stave::keyspaces::policies::{type_of, PoliciesRead};
    w.node
        .store
        .committed()
        .policy(&label_cid(cid))
        .unwrap()
        .map(|p| type_of(&p))
}

pub fn takedown_record(w: &World, cid: &[u8]) -> gpb::Takedown {
    use stave::keyspaces::takedowns::TakedownsRead;
    w.node
        .store
        .committed()
        .takedown(&label_cid(cid))
        .unwrap()
        .unwrap()
}
