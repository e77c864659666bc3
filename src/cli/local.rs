//! `stave query local status`: the node's local store, over the admin
//! socket (`<home>/admin.sock`).

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
}

pub async fn run(cmd: LocalQuery, out: Output) -> anyhow::Result<()> {
    match cmd {
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
            out.print(&json!({
                "last_reconcile_height": s.last_reconcile_height,
                "reconciled": s.reconciled,
                "content": content,
                "deks": deks,
                "failures": failures,
                "unassigned_content": unassigned,
                "active_jobs": s.active_jobs,
                "jobs": jobs,
            }));
        }
    }
    Ok(())
}
