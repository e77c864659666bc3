//! `stave query groups …`: publisher groups, takedowns and jurisdiction
//! flags over gRPC (`GovernanceService.Group`, `Groups`, `Takedown`,
//! `Flags`), printed as JSON.

use serde_json::{json, Value};

use super::Output;
use crate::client::StaveClient;
use crate::keyspaces::groups::GroupStatus;
use crate::keyspaces::takedowns::TakedownStatus;
use crate::proto::governance as pb;

const DEFAULT_NODE: &str = "http://127.0.0.1:9090";

#[derive(clap::Subcommand, Debug)]
pub enum GroupsQuery {
    /// One publisher group.
    Group {
        group_id: String,
        #[arg(long, default_value = DEFAULT_NODE)]
        node: String,
    },
    /// Groups in id order, a page at a time.
    List {
        #[command(flatten)]
        page: Page,
        #[arg(long, default_value = DEFAULT_NODE)]
        node: String,
    },
    /// The takedown record of a cid (hex).
    Takedown {
        cid: String,
        #[arg(long, default_value = DEFAULT_NODE)]
        node: String,
    },
    /// The jurisdiction flags of a cid (hex).
    Flags {
        cid: String,
        #[command(flatten)]
        page: Page,
        #[arg(long, default_value = DEFAULT_NODE)]
        node: String,
    },
}

/// Paging: continue strictly after a key, at most `limit` (0: the largest page).
#[derive(clap::Args, Debug)]
pub struct Page {
    #[arg(long, default_value = "")]
    start_after: String,
    #[arg(long, default_value_t = 0)]
    limit: u32,
}

fn group_json(g: &pb::GroupRecord) -> Value {
    json!({
        "group_id": g.group_id,
        "status": GroupStatus::of(g.status).map_or("UNKNOWN", GroupStatus::name),
        "takedown_authorities": g.takedown_authorities.iter().map(hex::encode).collect::<Vec<_>>(),
        "members": g.members.iter().map(hex::encode).collect::<Vec<_>>(),
        "applicant": hex::encode(&g.applicant),
        "admitted_at": g.admitted_at,
    })
}

fn takedown_json(t: &pb::Takedown) -> Value {
    json!({
        "cid": hex::encode(&t.cid),
        "status": TakedownStatus::of(t.status).map_or("UNKNOWN", TakedownStatus::name),
        "group_id": t.group_id,
        "takedown_authority": hex::encode(&t.takedown_authority_pubkey),
        "reason": t.reason,
        "requested_at": t.requested_at,
        "resolved_at": t.resolved_at,
        "counter_notice_by": hex::encode(&t.counter_notice_by),
        "counter_notice": String::from_utf8_lossy(&t.counter_notice),
    })
}

fn flag_json(f: &pb::Flag) -> Value {
    json!({
        "jurisdiction": f.jurisdiction,
        "reason": f.reason,
        "takedown_authority": hex::encode(&f.takedown_authority_pubkey),
        "flagged_height": f.flagged_height,
    })
}

fn node_of(q: &GroupsQuery) -> &str {
    match q {
        GroupsQuery::Group { node, .. }
        | GroupsQuery::List { node, .. }
        | GroupsQuery::Takedown { node, .. }
        | GroupsQuery::Flags { node, .. } => node,
    }
}

pub async fn run_query(q: GroupsQuery, out: Output) -> anyhow::Result<()> {
    let mut c = StaveClient::connect(node_of(&q)).await?;
    let g = &mut c.governance;
    let v = match q {
        GroupsQuery::Group { group_id, .. } => {
            let r = g
                .group(pb::GroupRequest {
                    group_id,
                    ..Default::default()
                })
                .await?
                .into_inner();
            json!({"height": r.height, "found": r.found, "group": r.group.as_ref().map(group_json)})
        }
        GroupsQuery::List { page, .. } => {
            let (start_after, limit) = (page.start_after, page.limit);
            let r = g
                .groups(pb::GroupsRequest { start_after, limit })
                .await?
                .into_inner();
            let groups: Vec<_> = r.groups.iter().map(group_json).collect();
            json!({"height": r.height, "groups": groups, "next": r.next})
        }
        GroupsQuery::Takedown { cid, .. } => {
            let cid = hex::decode(&cid).map_err(|e| anyhow::anyhow!("cid {cid:?}: {e}"))?;
            let r = g
                .takedown(pb::GetTakedownRequest {
                    cid,
                    ..Default::default()
                })
                .await?
                .into_inner();
            json!({"height": r.height, "found": r.found, "takedown": r.takedown.as_ref().map(takedown_json)})
        }
        GroupsQuery::Flags { cid, page, .. } => {
            let cid = hex::decode(&cid).map_err(|e| anyhow::anyhow!("cid {cid:?}: {e}"))?;
            let req = pb::FlagsRequest {
                cid,
                start_after: page.start_after,
                limit: page.limit,
            };
            let r = g.flags(req).await?.into_inner();
            let flags: Vec<_> = r.flags.iter().map(flag_json).collect();
            json!({"height": r.height, "flags": flags, "next": r.next})
        }
    };
    out.print(&v);
    Ok(())
}
