//! Drives processing jobs through the local store's state machine
//! ([`crate::local::processing`]): `TRANSCODING` runs the transcode worker
//! child; `ENCRYPTING` encrypts the FLAC under the job's DEK, hashing the
//! blob as it is written, wraps the DEK to this validator and to the
//! uploader's recovery key and prepares the manifest; the job then waits
//! for the uploader's signature ([`Pipeline::complete`]). A signed job is
//! registered on chain by the operator-key [`Submitter`], and the sealed
//! DEK is wiped before `SEEDING`.

mod finish;
mod steps;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast;

use super::slots::{Slot, Slots};
use super::submitter::Submitter;
use super::{IngestError, Intent, UploadConfig};
use crate::local::deks::DeksExt;
use crate::local::node::LocalNode;
use crate::local::processing::{job_status_name, Jobs, NewJob};
use crate::proto::content as cpb;
use crate::proto::local::{JobStatus, ProcessingJob};

/// How often [`Pipeline::sweep`] runs.
const SWEEP: Duration = Duration::from_secs(60);

/// How long `SEEDING` waits before asking the replication set again: the
/// first wait, doubled each round up to the last (a replica usually has
/// the blob within a second of the commit).
const SEEDING_POLL: (Duration, Duration) = (Duration::from_millis(250), Duration::from_secs(2));

/// The files one upload fills, in order, with their declared sizes: the
/// audio, then each artwork file.
pub type UploadFiles = Vec<(PathBuf, u64)>;

/// The upload pipeline of one node.
pub struct Pipeline {
    pub node: Arc<LocalNode>,
    jobs: Jobs,
    pub cfg: UploadConfig,
    /// The `stave` binary the worker child runs.
    exe: PathBuf,
    /// `<home>/content/.processing`: one directory per job.
    scratch: PathBuf,
    submitter: Arc<Submitter>,
    pub slots: Arc<Slots>,
    /// The id of each job that changed state.
    changes: broadcast::Sender<Vec<u8>>,
    /// The jobs a task is driving now: at most one task per job.
    driving: parking_lot::Mutex<BTreeSet<Vec<u8>>>,
    /// Images enter and leave the content store one job at a time (a cover
    /// may be shared by several jobs).
    image_lock: parking_lot::Mutex<()>,
    /// `Complete` checks and records one signature at a time.
    completing: parking_lot::Mutex<()>,
    /// Each unfinished job's state and when it entered it (for metrics).
    entered:
        parking_lot::Mutex<std::collections::BTreeMap<Vec<u8>, (JobStatus, std::time::Instant)>>,
}

fn internal(e: impl std::fmt::Display) -> IngestError {
    IngestError::Internal(e.to_string())
}

/// A job's failure, with the code Status reports.
struct Failure {
    code: String,
    message: String,
}

impl Failure {
    fn new(code: &str, message: impl std::fmt::Display) -> Self {
        Failure {
            code: code.to_string(),
            message: message.to_string(),
        }
    }
}

impl From<IngestError> for Failure {
    fn from(e: IngestError) -> Self {
        Failure::new(e.code(), e)
    }
}

impl Pipeline {
    pub fn new(
        node: Arc<LocalNode>,
        jobs: Jobs,
        cfg: UploadConfig,
        exe: PathBuf,
        scratch: PathBuf,
        submitter: Arc<Submitter>,
    ) -> Arc<Self> {
        let slots = Slots::new(cfg.max_jobs, cfg.max_jobs_per_uploader);
        Arc::new(Pipeline {
            node,
            jobs,
            cfg,
            exe,
            scratch,
            submitter,
            slots,
            changes: broadcast::channel(256).0,
            entered: parking_lot::Mutex::default(),
            driving: parking_lot::Mutex::default(),
            image_lock: parking_lot::Mutex::default(),
            completing: parking_lot::Mutex::new(()),
        })
    }

    /// Resumes the jobs a restart interrupted (failing those that cannot
    /// go on) and drives each resumed one in the background; starts the
    /// sweep of used intents past their window. Call inside the runtime.
    pub fn resume(self: &Arc<Self>) -> Result<(), IngestError> {
        let r = self.jobs.recover()?;
        for id in &r.failed {
            self.clean_failed(id);
        }
        tracing::info!(
            resumed = r.resumed.len(),
            failed = r.failed.len(),
            "upload jobs recovered"
        );
        for id in r.resumed {
            self.clone().spawn_drive(id, None);
        }
        let me = self.clone();
        tokio::spawn(async move {
            let mut every = tokio::time::interval(SWEEP);
            loop {
                every.tick().await;
                let p = me.clone();
                let swept = tokio::task::spawn_blocking(move || p.sweep(super::now_ms())).await;
                if let Ok(Err(e)) = swept {
                    tracing::warn!("upload housekeeping: {e}");
                }
            }
        });
        Ok(())
    }

    /// Housekeeping at `now_ms`: forgets used intents past their window,
    /// fails the jobs whose manifest waited longer than
    /// `signature_ttl_secs` (removing their blob, key and scratch), and
    /// deletes finished job records older than `keep_finished_days`.
    pub fn sweep(&self, now_ms: u64) -> Result<(), IngestError> {
        super::replay::forget_expired(&self.node.local, now_ms)?;
        let ttl = self.cfg.signature_ttl_secs.saturating_mul(1000);
        let keep = self.cfg.keep_finished_days.saturating_mul(86_400_000);
        for j in self.jobs.all()? {
            if awaiting_signature(&j) && j.manifest_at_ms.saturating_add(ttl) < now_ms {
                let why = format!(
                    "no signature within {} s (upload.signature_ttl_secs)",
                    self.cfg.signature_ttl_secs
                );
                self.fail(&j.job_id, Failure::new("UNSIGNED", why));
            } else if crate::local::processing::is_terminal(j.status())
                && j.created_at.saturating_add(keep) < now_ms
            {
                self.jobs.forget(&j.job_id)?;
            }
        }
        Ok(())
    }

    /// Notices of job changes: each carries the id of a job that moved.
    pub fn subscribe(&self) -> broadcast::Receiver<Vec<u8>> {
        self.changes.subscribe()
    }

    /// A job as stored.
    pub fn job(&self, job_id: &[u8]) -> Result<Option<ProcessingJob>, IngestError> {
        Ok(self.jobs.get(job_id)?)
    }

    fn changed(&self, job_id: &[u8]) {
        if let Ok(Some(j)) = self.jobs.get(job_id) {
            self.measure(&j);
        }
        let _ = self.changes.send(job_id.to_vec());
    }

    /// Counts a job's new state and times the one it left.
    fn measure(&self, j: &ProcessingJob) {
        let m = crate::metrics::metrics();
        let now = std::time::Instant::now();
        let mut entered = self.entered.lock();
        let before = entered.get(&j.job_id).copied();
        if before.is_some_and(|(s, _)| s == j.status()) {
            return;
        }
        if let Some((s, since)) = before {
            m.upload_state_seconds
                .with_label_values(&[job_status_name(s)])
                .observe(now.duration_since(since).as_secs_f64());
        }
        m.upload_jobs
            .with_label_values(&[job_status_name(j.status())])
            .inc();
        if j.status() == JobStatus::Failed {
            m.upload_failures.with_label_values(&[&j.error_code]).inc();
        }
        if crate::local::processing::is_terminal(j.status()) {
            entered.remove(&j.job_id);
        } else {
            entered.insert(j.job_id.clone(), (j.status(), now));
        }
    }

    /// Creates the `RECEIVING` job of an admitted intent: its scratch
    /// directory, and the files the audio and each artwork go to, with
    /// their declared sizes.
    ///
    /// # Errors
    /// `Disk` when the disk lacks room for the input, the FLAC and the
    /// blob; `Internal`.
    pub fn begin(
        &self,
        intent: &Intent,
        now_ms: u64,
    ) -> Result<(Vec<u8>, UploadFiles), IngestError> {
        self.check_awaiting(&intent.uploader)?;
        let job_id: [u8; 16] = rand::random();
        let dir = self.scratch.join(hex::encode(job_id));
        crate::local::private_dir(&dir).map_err(internal)?;
        let art = intent.art_total();
        let needed = intent
            .audio_bytes
            .saturating_mul(3)
            .saturating_add(art.saturating_mul(3));
        crate::local::content::ensure_room(&dir, needed, crate::local::content::DISK_RESERVE)
            .map_err(|e| {
                let _ = std::fs::remove_dir_all(&dir);
                IngestError::Disk(e.to_string())
            })?;
        let input = dir.join("audio.in");
        let mut files = vec![(input.clone(), intent.audio_bytes)];
        files.extend(
            intent
                .art_bytes
                .iter()
                .enumerate()
                .map(|(i, n)| (dir.join(format!("art{i}.in")), *n)),
        );
        let art_paths: Vec<String> = files
            .iter()
            .skip(1)
            .map(|(p, _)| p.display().to_string())
            .collect();
        let new = NewJob {
            job_id: job_id.to_vec(),
            client_pubkey: intent.uploader.to_vec(),
            raw_audio_path: input.clone(),
            replication_set: intent.replication_set.iter().map(|k| k.to_vec()).collect(),
            dek_holder_set: intent.dek_holder_set.iter().map(|k| k.to_vec()).collect(),
            created_at: now_ms,
        };
        // the DEK is only needed once the FLAC exists; it stays sealed
        drop(self.jobs.create(new)?);
        self.jobs.update(&job_id, |j| {
            j.uploader_pubkey = intent.uploader.to_vec();
            j.group_id = intent.group_id.clone();
            j.recovery_x25519 = intent.recovery_x25519.to_vec();
            j.audio_bytes = intent.audio_bytes;
            j.flac_path = dir.join("audio.flac").display().to_string();
            j.image_paths = art_paths.clone();
        })?;
        self.changed(&job_id);
        Ok((job_id.to_vec(), files))
    }

    /// `BUSY` when too many jobs wait for their signature, here or of
    /// this uploader (each holds a blob and a key until signed or expired).
    fn check_awaiting(&self, uploader: &[u8; 32]) -> Result<(), IngestError> {
        let waiting: Vec<ProcessingJob> = self
            .jobs
            .all()?
            .into_iter()
            .filter(awaiting_signature)
            .collect();
        let mine = waiting
            .iter()
            .filter(|j| j.uploader_pubkey == uploader)
            .count();
        if waiting.len() >= self.cfg.max_awaiting_signature {
            return Err(IngestError::Busy(format!(
                "{} jobs here wait for their manifest signature (upload.max_awaiting_signature)",
                waiting.len()
            )));
        }
        if mine >= self.cfg.max_awaiting_per_uploader {
            return Err(IngestError::Busy(format!(
                "{mine} of this uploader's jobs wait for their manifest signature: sign or let them expire (upload.max_awaiting_per_uploader)"
            )));
        }
        Ok(())
    }

    /// Every declared byte arrived: `TRANSCODING`, processed in the
    /// background while `slot` is held.
    pub fn received(
        self: &Arc<Self>,
        job_id: &[u8],
        slot: Slot,
        took: Duration,
    ) -> Result<(), IngestError> {
        self.jobs.advance(job_id, JobStatus::Transcoding, |j| {
            j.phases.push(phase("receive", took));
        })?;
        self.changed(job_id);
        self.clone().spawn_drive(job_id.to_vec(), Some(slot));
        Ok(())
    }

    /// Fails a job that never left `RECEIVING` (the client stalled or lied).
    pub fn abandon(&self, job_id: &[u8], code: &str, message: &str) {
        self.fail(job_id, Failure::new(code, message));
    }

    /// Drives the job in a task, unless a task drives it already (that
    /// task reads the job again before it stops, so it sees what changed).
    fn spawn_drive(self: Arc<Self>, job_id: Vec<u8>, slot: Option<Slot>) {
        if !self.driving.lock().insert(job_id.clone()) {
            return;
        }
        tokio::spawn(async move {
            let mut slot = slot;
            loop {
                let ok = match self.drive(&job_id, slot.take()).await {
                    Ok(()) => true,
                    Err(f) => {
                        self.fail(&job_id, f);
                        false
                    }
                };
                let mut driving = self.driving.lock();
                // a failed job is not driven again, even if failing it failed
                let again = ok
                    && self
                        .job(&job_id)
                        .ok()
                        .flatten()
                        .is_some_and(|j| needs_driving(&j));
                if !again {
                    driving.remove(&job_id);
                    return;
                }
            }
        });
    }

    /// Runs the job's steps until it waits for the uploader, or ends.
    async fn drive(self: &Arc<Self>, job_id: &[u8], slot: Option<Slot>) -> Result<(), Failure> {
        loop {
            let job = self
                .job(job_id)?
                .ok_or_else(|| Failure::new("NO_JOB", "job vanished"))?;
            match job.status() {
                JobStatus::Transcoding => self.transcode(job).await?,
                JobStatus::Encrypting if job.uploader_signature.is_empty() => {
                    if job.manifest.is_none() {
                        self.encrypt(job).await?;
                    } else {
                        // waits for Complete; the slot is free meanwhile
                        drop(slot);
                        return Ok(());
                    }
                }
                JobStatus::Encrypting => self.register(job).await?,
                JobStatus::Seeding => return self.seed(job).await,
                _ => return Ok(()),
            }
        }
    }

    /// The uploader's signature over the job's manifest: kept, the sealed
    /// DEK wiped, and the manifest registered on chain in the background.
    ///
    /// # Errors
    /// `NoJob`, `JobState` (no manifest yet, or already signed),
    /// `ManifestSignature`.
    pub fn complete(self: &Arc<Self>, job_id: &[u8], signature: &[u8]) -> Result<(), IngestError> {
        let once = self.completing.lock();
        let job = self
            .job(job_id)?
            .ok_or_else(|| IngestError::NoJob(hex::encode(job_id)))?;
        let state = |why: &str| IngestError::JobState {
            job: hex::encode(job_id),
            status: job_status_name(job.status()),
            why: why.to_string(),
        };
        let Some(m) = job.manifest.as_ref() else {
            return Err(state("the manifest is not ready"));
        };
        if job.status() != JobStatus::Encrypting {
            return Err(state(
                "only a job waiting for its signature can be completed",
            ));
        }
        if !job.uploader_signature.is_empty() {
            return Err(state("already signed"));
        }
        let bad = || IngestError::ManifestSignature(hex::encode(&job.uploader_pubkey));
        let sig: [u8; 64] = signature.try_into().map_err(|_| bad())?;
        let pk: [u8; 32] = job
            .uploader_pubkey
            .as_slice()
            .try_into()
            .map_err(|_| bad())?;
        let (_, vk) = crate::tx::parse_identity_key(&pk).map_err(|_| bad())?;
        let bytes = crate::keyspaces::uploads::manifest_sign_bytes(m);
        vk.verify(&ed25519_consensus::Signature::from(sig), &bytes)
            .map_err(|_| bad())?;
        // the DEK lives on only wrapped (local/deks, the recovery wrap)
        self.jobs.update(job_id, |j| {
            j.uploader_signature = sig.to_vec();
            j.sealed_dek.clear();
            let waited = super::now_ms().saturating_sub(j.manifest_at_ms);
            j.phases.push(phase("sign", Duration::from_millis(waited)));
        })?;
        drop(once);
        self.changed(job_id);
        self.clone().spawn_drive(job_id.to_vec(), None);
        Ok(())
    }

    fn fail(&self, job_id: &[u8], f: Failure) {
        tracing::warn!(job = %hex::encode(job_id), code = %f.code, error = %f.message, "upload job failed");
        match self.jobs.advance(job_id, JobStatus::Failed, |j| {
            j.error_code = f.code.clone();
            j.error = f.message.clone();
        }) {
            Ok(_) => self.clean_failed(job_id),
            Err(e) => tracing::warn!(job = %hex::encode(job_id), "cannot fail job: {e}"),
        }
        self.changed(job_id);
    }

    /// Removes what a failed job left: its scratch directory, and its blob
    /// and wrapped DEK unless chain state names them.
    fn remove_dir(&self, job_id: &[u8]) {
        let _ = std::fs::remove_dir_all(self.scratch.join(hex::encode(job_id)));
    }

    fn clean_failed(&self, job_id: &[u8]) {
        self.remove_dir(job_id);
        let Ok(Some(job)) = self.job(job_id) else {
            return;
        };
        // a signed manifest may still commit (its tx pending somewhere):
        // its blob and key stay, reported as unassigned if it never does
        if job.flac_cid.is_empty() || !job.uploader_signature.is_empty() {
            return;
        }
        if !job.encrypted_cid.is_empty() {
            let _ = self.node.content.remove(&job.encrypted_cid);
        }
        self.remove_images(&job);
        let _one = self.node.local.dek_lock();
        let own = self.node.local.dek(&job.flac_cid).ok().flatten();
        if own.is_some_and(|d| placed_by(&d, &job)) {
            let _ = self.node.local.delete_dek(&job.flac_cid);
        }
    }
}

impl Pipeline {
    /// Removes a failed job's PNGs from the content store, but not one
    /// chain state names (a cover shared with a registered upload) or
    /// another job here has (an album's tracks uploaded together).
    fn remove_images(&self, job: &ProcessingJob) {
        use crate::keyspaces::uploads::UploadsRead;
        if job.image_cids.is_empty() {
            return;
        }
        let _one = self.image_lock.lock();
        let Ok(jobs) = self.jobs.all() else {
            return;
        };
        let view = self.node.chain.view();
        for cid in &job.image_cids {
            let elsewhere = jobs.iter().any(|j| {
                j.job_id != job.job_id
                    && j.status() != JobStatus::Failed
                    && j.image_cids.contains(cid)
            });
            if !elsewhere && matches!(view.upload_by_image(cid), Ok(None)) {
                let _ = self.node.content.remove(cid);
            }
        }
    }
}

impl From<crate::local::LocalError> for Failure {
    fn from(e: crate::local::LocalError) -> Self {
        Failure::new("INTERNAL", e)
    }
}

/// A finished step and how long it took.
fn phase(name: &str, took: Duration) -> cpb::Phase {
    cpb::Phase {
        name: name.to_string(),
        ms: u64::try_from(took.as_millis()).unwrap_or(u64::MAX),
    }
}

/// Whether `job` placed this DEK record (in this run or an interrupted
/// one); records written before `job_id` was kept are known by the
/// ephemeral key of the wrap.
fn placed_by(d: &crate::proto::local::StoredDek, job: &ProcessingJob) -> bool {
    match d.job_id.is_empty() {
        false => d.job_id == job.job_id,
        true => !job.own_dek_ephemeral.is_empty() && d.ephemeral_pubkey == job.own_dek_ephemeral,
    }
}

/// Whether a job has made its manifest and waits for the uploader.
fn awaiting_signature(j: &ProcessingJob) -> bool {
    j.status() == JobStatus::Encrypting && j.manifest.is_some() && j.uploader_signature.is_empty()
}

/// Whether a job has a step to run now (it is not waiting for its
/// signature, and not finished).
fn needs_driving(j: &ProcessingJob) -> bool {
    match j.status() {
        JobStatus::Transcoding | JobStatus::Seeding => true,
        JobStatus::Encrypting => j.manifest.is_none() || !j.uploader_signature.is_empty(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::placed_by;
    use crate::proto::local::{ProcessingJob, StoredDek};

    #[test]
    fn a_dek_record_is_the_jobs_by_its_job_id_whatever_its_ephemeral_key() {
        let job = ProcessingJob {
            job_id: vec![1; 16],
            own_dek_ephemeral: vec![2; 32],
            ..Default::default()
        };
        let mine = StoredDek {
            job_id: vec![1; 16],
            ephemeral_pubkey: vec![9; 32], // re-wrapped by an X25519 rotation
            ..Default::default()
        };
        assert!(placed_by(&mine, &job));
        let other = StoredDek {
            job_id: vec![5; 16],
            ephemeral_pubkey: vec![2; 32],
            ..Default::default()
        };
        assert!(!placed_by(&other, &job), "another job's, same ephemeral");
        let fetched = StoredDek {
            ephemeral_pubkey: vec![7; 32],
            ..Default::default()
        };
        assert!(!placed_by(&fetched, &job), "fetched from a peer");
        let older = StoredDek {
            ephemeral_pubkey: vec![2; 32],
            ..Default::default()
        };
        assert!(placed_by(&older, &job), "written before job_id was kept");
    }
}
