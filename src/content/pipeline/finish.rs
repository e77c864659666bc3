//! After the signature: registering the manifest on chain
//! (`UploadComplete` through the operator-key submitter) and `SEEDING`
//! until the replication set confirms the blob (`HasContent`).

use std::collections::BTreeSet;
use std::time::Duration;

use super::{phase, Failure, Pipeline, SEEDING_POLL};
use crate::content::submitter::SubmitError;
use crate::proto::local::{JobStatus, ProcessingJob};

impl Pipeline {
    pub(super) async fn register(&self, job: ProcessingJob) -> Result<(), Failure> {
        let manifest = job
            .manifest
            .clone()
            .ok_or_else(|| Failure::new("INTERNAL", "signed job without manifest"))?;
        let sig: [u8; 64] = job
            .uploader_signature
            .as_slice()
            .try_into()
            .map_err(|_| Failure::new("INTERNAL", "bad stored signature"))?;
        let action = crate::tx::Action::UploadComplete(crate::keyspaces::uploads::UploadComplete {
            manifest,
            uploader_signature: sig,
        });
        let started = std::time::Instant::now();
        let mut round = 0u32;
        let height = loop {
            if let Some(h) = self.registered_at(&job)? {
                break h;
            }
            let refused = |code: u32, log: &str| {
                let name = crate::tx::Code::from_value(code).map_or("UNKNOWN", |c| c.name());
                Failure::new(
                    "CHAIN",
                    format!("UploadComplete: code {code} {name}: {log}"),
                )
            };
            match self.submitter.submit(vec![action.clone()]).await {
                Ok(c) if c.code == 0 => break c.height,
                // committed with an error, or refused by the state as it
                // is: final, unless the upload is ours after all
                Ok(c) if self.registered_at(&job)?.is_none() => {
                    return Err(refused(c.code, &c.log))
                }
                Err(SubmitError::Simulation { code, log } | SubmitError::Refused { code, log })
                    if self.registered_at(&job)?.is_none() =>
                {
                    return Err(refused(code, &log))
                }
                Ok(_) | Err(SubmitError::Simulation { .. } | SubmitError::Refused { .. }) => {}
                // CometBFT down or slow: a signed upload is never given up
                Err(e) => {
                    let wait = Duration::from_secs(1 << round.min(5));
                    tracing::warn!(job = %hex::encode(&job.job_id), "UploadComplete not committed yet, again in {} s: {e}", wait.as_secs());
                    tokio::time::sleep(wait).await;
                    round += 1;
                }
            }
        };
        self.jobs.advance(&job.job_id, JobStatus::Seeding, |j| {
            j.height = height;
            j.phases.push(phase("commit", started.elapsed()));
        })?;
        self.changed(&job.job_id);
        Ok(())
    }

    /// The height chain state registered this job's upload at (a tx that
    /// committed before a restart, or a resubmission), if it has.
    pub(super) fn registered_at(&self, job: &ProcessingJob) -> Result<Option<u64>, Failure> {
        use crate::keyspaces::uploads::UploadsRead;
        let u = self
            .node
            .chain
            .view()
            .upload(&job.flac_cid)
            .map_err(|e| Failure::new("INTERNAL", e))?;
        Ok(u.filter(|u| u.uploader_signature == job.uploader_signature)
            .map(|u| u.created_height))
    }

    /// `SEEDING`: the replication set's reconcilers fetch the blob and the
    /// images (from this node or each other); this node asks each of them
    /// (`HasContent`, signed answers) until all hold every file, or until
    /// `max_seeding_secs` pass, when the job completes under-replicated
    /// (`error_code` `UNDER_REPLICATED`) and the alarm is raised.
    pub(super) async fn seed(&self, job: ProcessingJob) -> Result<(), Failure> {
        let cids: Vec<Vec<u8>> = std::iter::once(job.encrypted_cid.clone())
            .chain(job.image_cids.iter().cloned())
            .collect();
        let set: Vec<[u8; 32]> = job
            .replication_set
            .iter()
            .filter_map(|k| k.as_slice().try_into().ok())
            .collect();
        let me = self.node.me();
        let chain_id = self.chain_id()?;
        let started = std::time::Instant::now();
        let end = started + Duration::from_secs(self.cfg.max_seeding_secs);
        let mut held: BTreeSet<[u8; 32]> = BTreeSet::new();
        let mut wait = SEEDING_POLL.0;
        loop {
            let waiting: Vec<[u8; 32]> =
                set.iter().filter(|k| !held.contains(*k)).copied().collect();
            for k in &waiting {
                let mut ok = true;
                for cid in &cids {
                    ok = ok
                        && if *k == me {
                            self.node.content.size(cid).is_some()
                        } else {
                            self.peer_holds(k, &chain_id, cid).await
                        };
                }
                if ok {
                    held.insert(*k);
                }
            }
            if held.len() == set.len() {
                self.jobs.advance(&job.job_id, JobStatus::Complete, |j| {
                    j.phases.push(phase("replicate", started.elapsed()));
                })?;
                self.remove_dir(&job.job_id);
                self.changed(&job.job_id);
                return Ok(());
            }
            if std::time::Instant::now() >= end {
                return self.under_replicated(&job, held.len(), set.len());
            }
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(SEEDING_POLL.1);
        }
    }

    pub(super) fn chain_id(&self) -> Result<String, Failure> {
        Ok(self
            .node
            .chain
            .commit_info()
            .map_err(|e| Failure::new("INTERNAL", e))?
            .chain_id)
    }

    /// Whether validator `k` says, signed, that it holds `cid`.
    async fn peer_holds(&self, k: &[u8; 32], chain_id: &str, cid: &[u8]) -> bool {
        let view = self.node.chain.view();
        let Ok(Some(rec)) = crate::local::node::active_validator(&view, k) else {
            return false;
        };
        let Ok(key) = crate::local::node::signing_key_in(&view, k) else {
            return false;
        };
        let t = crate::local::peer_client::PeerTarget {
            operator: *k,
            address: rec.address,
        };
        let me = &self.node.operator;
        matches!(
            crate::local::peer_client::has_content(me, chain_id, (&t, &key), cid).await,
            Ok(Some(_))
        )
    }

    fn under_replicated(&self, job: &ProcessingJob, held: usize, of: usize) -> Result<(), Failure> {
        let msg = format!(
            "{held} of {of} replicas confirmed the blob within {} s (upload.max_seeding_secs)",
            self.cfg.max_seeding_secs
        );
        tracing::warn!(job = %hex::encode(&job.job_id), cid = %hex::encode(&job.encrypted_cid), "under-replicated upload: {msg}");
        crate::metrics::metrics().upload_under_replicated.inc();
        self.jobs.advance(&job.job_id, JobStatus::Complete, |j| {
            j.error_code = "UNDER_REPLICATED".into();
            j.error = msg;
        })?;
        self.remove_dir(&job.job_id);
        self.changed(&job.job_id);
        Ok(())
    }
}
