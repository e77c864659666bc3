//! `stave query local status|replicas`: the node's local store and its
//! replication, over the admin socket (`<home>/admin.sock`).

use serde_json::json;

use super::Output;
use crate::proto::local::LocalStatusRequest;

#[derive(clap::Subcommand, Debug)]
pub enum LocalQuery {
    /// Counts per sync state, failures with reasons, the last reconcile height.
    Status {
        /// The node's home; the call goes to `<home>/admin.sock`.
        #[arg(long, env = "STAVE_HOME")]
        home: std::path::PathBuf,
    },
    /// Anti-entropy with each peer since the node started: last sync, records
    /// and bytes exchanged.
    Replicas {
        /// The node's home; the call goes to `<home>/admin.sock`.
        #[arg(long, env = "STAVE_HOME")]
        home: std::path::PathBuf,
    },
}

async fn replicas(home: std::path::PathBuf, out: Output) -> anyhow::Result<()> {
    let socket = crate::config::Home::new(home).admin_socket();
    let r = crate::client::admin_db_client(&socket)
        .await?
        .replicas(crate::proto::replica::ReplicasRequest {})
        .await?
        .into_inner();
    let peers: Vec<_> = r
        .peers
        .iter()
        .map(|p| {
            json!({"peer": hex::encode(&p.peer), "last_sync_ms": p.last_sync_ms,
            "last_error": p.last_error, "rounds": p.rounds,
            "records_received": p.records_received, "records_accepted": p.records_accepted,
            "bytes_sent": p.bytes_sent, "bytes_received": p.bytes_received,
            "bytes_accepted": p.bytes_accepted, "refused": p.refused})
        })
        .collect();
    out.print(&json!({
        "records": r.records,
        "own_records": r.own_records,
        "stored_bytes": r.stored_bytes,
        "pow_base": r.pow_base,
        "horizon_ms": r.horizon_ms,
        "root_crc": format!("{:08x}", r.root_crc),
        "peers": peers,
    }));
    Ok(())
}

pub async fn run(cmd: LocalQuery, out: Output) -> anyhow::Result<()> {
    match cmd {
        LocalQuery::Replicas { home } => return replicas(home, out).await,
        LocalQuery::Status { home } => {
            let socket = crate::config::Home::new(home).admin_socket();
            let s = crate::client::admin_client(&socket)
                .await?
                .status(LocalStatusRequest {})
                .await?
                .into_inner();
            let mut content = serde_json::Map::new();
            let mut deks = serde_json::Map::new();
            for c in &s.counts {
                let m = if c.kind == "content" {
                    &mut content
                } else {
                    &mut deks
                };
                m.insert(c.status.clone(), json!(c.count));
            }
            let failures: Vec<_> = s
                .failures
                .iter()
                .map(|f| {
                    json!({"kind": f.kind, "cid": hex::encode(&f.cid), "error": f.error,
                    "attempts": f.attempts, "retry_at_ms": f.retry_at_ms})
                })
                .collect();
            let unassigned: Vec<_> = s.unassigned_content.iter().map(hex::encode).collect();
            let jobs: Vec<_> = s
                .jobs
                .iter()
                .map(|j| {
                    json!({"job_id": hex::encode(&j.job_id), "status": j.status,
                    "uploader": hex::encode(&j.uploader_pubkey), "created_at_ms": j.created_at,
                    "audio_bytes": j.audio_bytes, "awaiting_signature": j.awaiting_signature})
                })
                .collect();
            let purged: Vec<_> = s
                .purged
                .iter()
                .map(|p| {
                    json!({"cid": hex::encode(&p.cid), "takedown_height": p.takedown_height,
                    "purged_height": p.purged_height, "purged_at_ms": p.purged_at_ms,
                    "files": p.files.iter().map(hex::encode).collect::<Vec<_>>(),
                    "dek_removed": p.dek_removed, "dek_scrubbed": p.dek_scrubbed,
                    "bytes_freed": p.bytes_freed, "done": p.done})
                })
                .collect();
            let awaiting: Vec<_> = s
                .awaiting_purge
                .iter()
                .map(|a| {
                    json!({"cid": hex::encode(&a.cid), "takedown_height": a.takedown_height,
                    "purge_height": a.purge_height})
                })
                .collect();
            out.print(&json!({
                "last_reconcile_height": s.last_reconcile_height,
                "reconciled": s.reconciled,
                "content": content,
                "deks": deks,
                "failures": failures,
                "unassigned_content": unassigned,
                "active_jobs": s.active_jobs,
                "jobs": jobs,
                "pending_grants": s.pending_grants,
                "refused_grants": s.refused_grants,
                "purged": purged,
                "awaiting_purge": awaiting,
            }));
        }
    }
    Ok(())
}
