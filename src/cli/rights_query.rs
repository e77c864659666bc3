//! `stave query rights …`: reads of the content and rights keyspaces and
//! the access decision, over gRPC (`RightsService`).

use clap::{Args, Subcommand};
use serde_json::{json, Value};

use super::query::resolve_pubkey;
use super::rights::unhex;
use super::verify::{with_verified, VerifyArgs};
use super::{keys, Output};
use crate::client::StaveClient;
use crate::grpc::answers;
use crate::proto::rights as pb;

#[derive(Args, Debug, Clone)]
pub struct QOpts {
    #[arg(long, default_value = "http://127.0.0.1:9090")]
    pub node: String,
    #[arg(long, env = "STAVE_KEYRING", default_value_t = keys::default_keyring())]
    pub keyring_dir: String,
    #[command(flatten)]
    pub v: VerifyArgs,
}

#[derive(Args, Debug, Clone)]
pub struct PageOpts {
    /// The previous page's next_cursor (hex).
    #[arg(long, default_value = "")]
    pub cursor: String,
    #[arg(long, default_value_t = 100)]
    pub limit: u32,
}

#[derive(Subcommand, Debug)]
pub enum RightsQuery {
    Upload {
        cid: String,
        #[command(flatten)]
        q: QOpts,
    },
    Dek {
        cid: String,
        #[command(flatten)]
        q: QOpts,
    },
    Policy {
        cid: String,
        #[command(flatten)]
        q: QOpts,
    },
    Entitlement {
        cid: String,
        pubkey: String,
        #[command(flatten)]
        q: QOpts,
    },
    /// Entitlements of CID.
    EntitlementsByCid {
        cid: String,
        #[command(flatten)]
        p: PageOpts,
        #[command(flatten)]
        q: QOpts,
    },
    /// "What do I hold?": entitlements of PUBKEY.
    EntitlementsByKey {
        pubkey: String,
        #[command(flatten)]
        p: PageOpts,
        #[command(flatten)]
        q: QOpts,
    },
    /// Recorded access grants of CID.
    GrantsByCid {
        cid: String,
        #[command(flatten)]
        p: PageOpts,
        #[command(flatten)]
        q: QOpts,
    },
    /// Recorded access grants of PUBKEY.
    GrantsByKey {
        pubkey: String,
        #[command(flatten)]
        p: PageOpts,
        #[command(flatten)]
        q: QOpts,
    },
    /// Uploads whose sets are changing hands or name validators that left.
    UnderReplicated {
        #[command(flatten)]
        p: PageOpts,
        #[command(flatten)]
        q: QOpts,
    },
    /// The access decision for CONSUMER on CID from TERRITORY.
    CheckAccess {
        cid: String,
        consumer: String,
        territory: String,
        /// The request's context, `key=value`, repeated: it must meet the
        /// entitlement scope's conditions.
        #[arg(long = "context")]
        context: Vec<String>,
        /// The use asked for (see `stave tx rights record-grant --use`).
        #[arg(long = "use", default_value = "on-demand-stream", value_parser = super::release::parse_use)]
        use_type: i32,
        #[command(flatten)]
        q: QOpts,
    },
}

fn entitlement_json(e: &pb::Entitlement) -> Value {
    let role = pb::Role::try_from(e.role)
        .map(|r| r.as_str_name())
        .unwrap_or("?");
    let s = e.scope.clone().unwrap_or_default();
    json!({"cid": hex::encode(&e.cid), "pubkey": hex::encode(&e.pubkey), "role": role,
        "grantor": hex::encode(&e.grantor), "created_at": e.created_at, "created_height": e.created_height,
        "scope": {"territories": s.territories, "not_before": s.not_before, "not_after": s.not_after,
            "conditions": s.conditions.iter().map(|c| json!({"key": c.key, "value": c.value})).collect::<Vec<_>>()}})
}

fn grant_json(g: &pb::Grant) -> Value {
    json!({"cid": hex::encode(&g.cid), "consumer": hex::encode(&g.consumer_pubkey), "block_height": g.block_height,
        "validator": hex::encode(&g.validator_pubkey), "territory": g.territory, "timestamp": g.timestamp,
        "count": g.count, "period_start": g.period_start, "last_height": g.last_height})
}

fn upload_json(u: &pb::Upload) -> Value {
    let hx = |v: &[Vec<u8>]| v.iter().map(hex::encode).collect::<Vec<_>>();
    let status = pb::UploadStatus::try_from(u.status)
        .map(|s| s.as_str_name())
        .unwrap_or("?");
    json!({"flac_cid": hex::encode(&u.flac_cid), "encrypted_cid": hex::encode(&u.encrypted_cid),
        "image_cids": hx(&u.image_cids), "uploader": hex::encode(&u.uploader_pubkey), "status": status,
        "timestamp": u.timestamp, "encrypted_size": u.encrypted_size, "replication_set": hx(&u.replication_set),
        "dek_holder_set": hx(&u.dek_holder_set), "processing_validator": hex::encode(&u.processing_validator),
        "group_id": u.group_id, "created_height": u.created_height})
}

fn list_req(cid_or_key: Vec<u8>, p: &PageOpts) -> anyhow::Result<(Vec<u8>, Vec<u8>, u32)> {
    Ok((cid_or_key, unhex("cursor", &p.cursor)?, p.limit))
}

pub async fn run_query(cmd: RightsQuery, out: Output) -> anyhow::Result<()> {
    let node: QOpts = match &cmd {
        RightsQuery::Upload { q, .. }
        | RightsQuery::Dek { q, .. }
        | RightsQuery::Policy { q, .. }
        | RightsQuery::Entitlement { q, .. }
        | RightsQuery::EntitlementsByCid { q, .. }
        | RightsQuery::EntitlementsByKey { q, .. }
        | RightsQuery::GrantsByCid { q, .. }
        | RightsQuery::GrantsByKey { q, .. }
        | RightsQuery::UnderReplicated { q, .. }
        | RightsQuery::CheckAccess { q, .. } => q.clone(),
    };
    let vf = node.v.clone();
    let mut c = StaveClient::connect(&node.node).await?.rights;
    let v = match cmd {
        RightsQuery::Upload { cid, .. } => {
            let req = pb::CidRequest {
                cid: unhex("cid", &cid)?,
                prove: vf.verify,
            };
            let r = c.get_upload(req.clone()).await?.into_inner();
            let ok = vf.check(&req, &r, answers::get_upload).await?;
            with_verified(
                json!({"found": r.found, "upload": r.upload.as_ref().map(upload_json), "height": r.height}),
                ok,
            )
        }
        RightsQuery::Dek { cid, .. } => {
            let req = pb::CidRequest {
                cid: unhex("cid", &cid)?,
                prove: vf.verify,
            };
            let r = c.get_dek(req.clone()).await?.into_inner();
            let ok = vf.check(&req, &r, answers::get_dek).await?;
            let d = r.dek.unwrap_or_default();
            with_verified(
                json!({"found": r.found, "wrapped_dek": hex::encode(d.wrapped_dek),
                "ephemeral_pubkey": hex::encode(d.ephemeral_pubkey), "uploader": hex::encode(d.uploader_pubkey), "height": r.height}),
                ok,
            )
        }
        RightsQuery::Policy { cid, .. } => {
            let req = pb::CidRequest {
                cid: unhex("cid", &cid)?,
                prove: vf.verify,
            };
            let r = c.get_policy(req.clone()).await?.into_inner();
            let ok = vf.check(&req, &r, answers::get_policy).await?;
            let p = r.policy.unwrap_or_default();
            let t = pb::PolicyType::try_from(p.r#type)
                .map(|t| t.as_str_name())
                .unwrap_or("?");
            with_verified(
                json!({"found": r.found, "type": t, "casbin_model_id": p.casbin_model_id,
                "script_cid": hex::encode(p.script_cid), "set_by": hex::encode(p.owner_pubkey), "height": r.height}),
                ok,
            )
        }
        RightsQuery::Entitlement { cid, pubkey, q } => {
            let req = pb::EntitlementRequest {
                cid: unhex("cid", &cid)?,
                pubkey: resolve_pubkey(&pubkey, &q.keyring_dir)?,
                prove: vf.verify,
            };
            let r = c.get_entitlement(req.clone()).await?.into_inner();
            let ok = vf.check(&req, &r, answers::get_entitlement).await?;
            with_verified(
                json!({"found": r.found, "entitlement": r.entitlement.as_ref().map(entitlement_json), "height": r.height}),
                ok,
            )
        }
        RightsQuery::EntitlementsByCid { cid, p, .. } => {
            let (cid, cursor, limit) = list_req(unhex("cid", &cid)?, &p)?;
            let req = pb::ListByCidRequest {
                cid,
                cursor,
                limit,
                prove: vf.verify,
            };
            let r = c.entitlements_by_cid(req.clone()).await?.into_inner();
            let ok = vf.check(&req, &r, answers::entitlements_by_cid).await?;
            with_verified(
                json!({"entitlements": r.entitlements.iter().map(entitlement_json).collect::<Vec<_>>(),
                "next_cursor": hex::encode(r.next_cursor), "height": r.height}),
                ok,
            )
        }
        RightsQuery::EntitlementsByKey { pubkey, p, q } => {
            let (pubkey, cursor, limit) = list_req(resolve_pubkey(&pubkey, &q.keyring_dir)?, &p)?;
            let req = pb::ListByKeyRequest {
                pubkey,
                cursor,
                limit,
                prove: vf.verify,
            };
            let r = c.entitlements_by_key(req.clone()).await?.into_inner();
            let ok = vf.check(&req, &r, answers::entitlements_by_key).await?;
            with_verified(
                json!({"entitlements": r.entitlements.iter().map(entitlement_json).collect::<Vec<_>>(),
                "next_cursor": hex::encode(r.next_cursor), "height": r.height}),
                ok,
            )
        }
        RightsQuery::GrantsByCid { cid, p, .. } => {
            let (cid, cursor, limit) = list_req(unhex("cid", &cid)?, &p)?;
            let req = pb::ListByCidRequest {
                cid,
                cursor,
                limit,
                prove: vf.verify,
            };
            let r = c.grants_by_cid(req.clone()).await?.into_inner();
            let ok = vf.check(&req, &r, answers::grants_by_cid).await?;
            with_verified(
                json!({"grants": r.grants.iter().map(grant_json).collect::<Vec<_>>(),
                "next_cursor": hex::encode(r.next_cursor), "height": r.height}),
                ok,
            )
        }
        RightsQuery::GrantsByKey { pubkey, p, q } => {
            let (pubkey, cursor, limit) = list_req(resolve_pubkey(&pubkey, &q.keyring_dir)?, &p)?;
            let req = pb::ListByKeyRequest {
                pubkey,
                cursor,
                limit,
                prove: vf.verify,
            };
            let r = c.grants_by_key(req.clone()).await?.into_inner();
            let ok = vf.check(&req, &r, answers::grants_by_key).await?;
            with_verified(
                json!({"grants": r.grants.iter().map(grant_json).collect::<Vec<_>>(),
                "next_cursor": hex::encode(r.next_cursor), "height": r.height}),
                ok,
            )
        }
        RightsQuery::UnderReplicated { .. } | RightsQuery::CheckAccess { .. } if vf.verify => {
            anyhow::bail!("--verify: under-replicated and check-access are not proven reads (see docs/verified-reads.md)")
        }
        RightsQuery::UnderReplicated { p, .. } => {
            let (_, cursor, limit) = list_req(Vec::new(), &p)?;
            let r = c
                .under_replicated(pb::PageRequest { cursor, limit })
                .await?
                .into_inner();
            let rows: Vec<Value> = r
                .uploads
                .iter()
                .map(|u| json!({"cid": hex::encode(&u.cid), "reason": u.reason, "since_height": u.since_height}))
                .collect();
            json!({"uploads": rows, "next_cursor": hex::encode(r.next_cursor), "height": r.height})
        }
        RightsQuery::CheckAccess {
            cid,
            consumer,
            territory,
            context,
            use_type,
            q,
        } => {
            let req = pb::CheckAccessRequest {
                cid: unhex("cid", &cid)?,
                consumer_pubkey: resolve_pubkey(&consumer, &q.keyring_dir)?,
                territory,
                context: super::rights::conditions(&context)?,
                use_type,
            };
            let r = c.check_access(req).await?.into_inner();
            let t = pb::PolicyType::try_from(r.policy_type)
                .map(|t| t.as_str_name())
                .unwrap_or("?");
            json!({"allowed": r.allowed, "reason": r.reason, "code": r.code, "policy_type": t, "height": r.height})
        }
    };
    // entitlements' times are block or scope times in Unix seconds
    let secs = crate::cli::output::Unit::UnixSecs;
    out.print_as(
        &v,
        &[
            ("created_at", secs),
            ("not_before", secs),
            ("not_after", secs),
        ],
    );
    Ok(())
}
