//! Drives processing jobs through the local store's state machine
//! ([`crate::local::processing`]): `TRANSCODING` runs the transcode worker
//! child; `ENCRYPTING` encrypts the FLAC under the job's DEK, hashing the
//! blob as it is written, wraps the DEK to this validator and to the
//! uploader's recovery key and prepares the manifest; the job then waits
//! for the uploader's signature ([`Pipeline::complete`]). A signed job is
//! registered on chain by the operator-key [`Submitter`], and the sealed
//! DEK is wiped before `SEEDING`.

use std::collections::BTreeSet;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use sha2::{Digest, Sha256};
use tokio::sync::broadcast;

use super::slots::{Slot, Slots};
use super::submitter::Submitter;
use super::{IngestError, Intent, UploadConfig};
use crate::local::deks::DeksExt;
use crate::local::node::LocalNode;
use crate::local::processing::{job_status_name, Jobs, NewJob};
use crate::media::cid::raw_cid_of_digest;
use crate::media::worker::{run_worker, WorkerError};
use crate::proto::content as cpb;
use crate::proto::local::{JobStatus, ProcessingJob, StoredDek};
use crate::proto::rights as rpb;

/// How often used intents past their window are forgotten.
const INTENT_SWEEP: Duration = Duration::from_secs(600);

/// How often `SEEDING` asks the replication set again.
const SEEDING_POLL: Duration = Duration::from_secs(2);

/// The upload pipeline of one node.
pub struct Pipeline {
    pub node: Arc<LocalNode>,
    jobs: Jobs,
    pub cfg: UploadConfig,
    /// The `stave` binary the worker child runs.
    exe: PathBuf,
    /// `<home>/data/processing`: one directory per job.
    scratch: PathBuf,
    submitter: Arc<Submitter>,
    pub slots: Arc<Slots>,
    /// The id of each job that changed state.
    changes: broadcast::Sender<Vec<u8>>,
    /// The jobs a task is driving now: at most one task per job.
    driving: parking_lot::Mutex<BTreeSet<Vec<u8>>>,
    /// `Complete` checks and records one signature at a time.
    completing: parking_lot::Mutex<()>,
    /// Each unfinished job's state and when it entered it (for metrics).
    entered:
        parking_lot::Mutex<std::collections::BTreeMap<Vec<u8>, (JobStatus, std::time::Instant)>>,
}

/// Writes through to `inner`, hashing every byte.
struct Hashing<W: Write> {
    inner: W,
    hash: Sha256,
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
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
            let mut every = tokio::time::interval(INTENT_SWEEP);
            loop {
                every.tick().await;
                let local = me.node.local.clone();
                let now = super::now_ms();
                let swept =
                    tokio::task::spawn_blocking(move || super::replay::forget_expired(&local, now))
                        .await;
                if let Ok(Err(e)) = swept {
                    tracing::warn!("forgetting expired upload intents: {e}");
                }
            }
        });
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
    /// directory and the path the audio goes to.
    ///
    /// # Errors
    /// `Disk` when the disk lacks room for the input, the FLAC and the
    /// blob; `Internal`.
    pub fn begin(&self, intent: &Intent, now_ms: u64) -> Result<(Vec<u8>, PathBuf), IngestError> {
        let job_id: [u8; 16] = rand::random();
        let dir = self.scratch.join(hex::encode(job_id));
        crate::local::private_dir(&dir).map_err(internal)?;
        let needed = intent.audio_bytes.saturating_mul(3);
        crate::local::content::ensure_room(&dir, needed, crate::local::content::DISK_RESERVE)
            .map_err(|e| {
                let _ = std::fs::remove_dir_all(&dir);
                IngestError::Disk(e.to_string())
            })?;
        let input = dir.join("audio.in");
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
        })?;
        self.changed(&job_id);
        Ok((job_id.to_vec(), input))
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
    pub fn abandon(&self, job_id: &[u8], e: &IngestError) {
        self.fail(job_id, Failure::new(e.code(), e));
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

    async fn transcode(&self, job: ProcessingJob) -> Result<(), Failure> {
        let (exe, input, output) = (
            self.exe.clone(),
            PathBuf::from(&job.raw_audio_path),
            PathBuf::from(&job.flac_path),
        );
        let (limits, wl) = (self.cfg.media_limits(), self.cfg.worker_limits());
        let t =
            tokio::task::spawn_blocking(move || run_worker(&exe, &input, &output, &limits, &wl))
                .await
                .map_err(|e| Failure::new("INTERNAL", e))?
                .map_err(|e| match e {
                    WorkerError::Refused { code, message } => Failure::new(&code, message),
                    e @ WorkerError::Decoder(_) => Failure::new("DECODER", e),
                })?;
        let _ = std::fs::remove_file(&job.raw_audio_path);
        let f = &t.facts;
        let facts = cpb::AudioFacts {
            sample_rate: f.sample_rate,
            channels: f.channels,
            bits_per_sample: f.bits_per_sample,
            frames: f.frames,
            duration_ms: f.duration_ms(),
            source_codec: f.source_codec.clone(),
            lossless_source: f.lossless_source,
            flac_bytes: t.flac_bytes,
        };
        let ms = Duration::from_millis;
        self.jobs.advance(&job.job_id, JobStatus::Encrypting, |j| {
            j.flac_cid = t.flac_cid.to_vec();
            j.facts = Some(facts);
            j.phases.push(phase("transcode", ms(t.timings.encode_ms)));
            j.phases.push(phase("verify", ms(t.timings.verify_ms)));
            j.phases.push(phase("hash", ms(t.timings.hash_ms)));
        })?;
        self.changed(&job.job_id);
        Ok(())
    }

    async fn encrypt(self: &Arc<Self>, job: ProcessingJob) -> Result<(), Failure> {
        let me = self.clone();
        tokio::task::spawn_blocking(move || me.encrypt_blocking(job))
            .await
            .map_err(|e| Failure::new("INTERNAL", e))?
    }

    fn encrypt_blocking(&self, job: ProcessingJob) -> Result<(), Failure> {
        let started = std::time::Instant::now();
        // a resumed step starts over with a fresh nonce prefix: drop the
        // blob an interrupted run may have left
        if !job.encrypted_cid.is_empty() {
            let _ = self.node.content.remove(&job.encrypted_cid);
        }
        let dek = self
            .jobs
            .dek(&job.job_id)
            .map_err(|e| Failure::new("INTERNAL", e))?;
        let blob = Path::new(&job.flac_path).with_extension("enc");
        let (digest, size) = encrypt_file(&dek, Path::new(&job.flac_path), &blob)?;
        let encrypted_cid = raw_cid_of_digest(&digest).to_vec();
        crate::metrics::metrics()
            .upload_bytes
            .with_label_values(&["out"])
            .inc_by(size);
        self.jobs
            .update(&job.job_id, |j| j.encrypted_cid = encrypted_cid.clone())?;
        self.node
            .content
            .adopt(&encrypted_cid, &blob)
            .map_err(|e| Failure::new("INTERNAL", e))?;
        let recovery: [u8; 32] = job
            .recovery_x25519
            .as_slice()
            .try_into()
            .map_err(|_| Failure::new("INTERNAL", "job has no 32-byte recovery key"))?;
        let wrap = |to: &[u8; 32]| {
            crate::crypto::wrap::wrap_dek(&dek, to, &job.flac_cid)
                .map_err(|e| Failure::new("INTERNAL", e))
        };
        let mine = wrap(&x25519_dalek::PublicKey::from(&self.node.x25519).to_bytes())?;
        self.node
            .local
            .put_dek(&StoredDek {
                cid: job.flac_cid.clone(),
                wrapped_dek: mine.ciphertext,
                ephemeral_pubkey: mine.ephemeral_pubkey.to_vec(),
                source_validator: vec![],
            })
            .map_err(|e| Failure::new("INTERNAL", e))?;
        let rec = wrap(&recovery)?;
        let chain_id = self.chain_id()?;
        let manifest = rpb::UploadManifest {
            chain_id,
            flac_cid: job.flac_cid.clone(),
            encrypted_cid: encrypted_cid.clone(),
            image_cids: vec![],
            encrypted_size: size,
            replication_set: job.replication_set.clone(),
            dek_holder_set: job.dek_holder_set.clone(),
            processing_validator: self.node.me().to_vec(),
            group_id: job.group_id.clone(),
            recovery_dek: Some(rpb::WrappedDek {
                cid: job.flac_cid.clone(),
                wrapped_dek: rec.ciphertext,
                ephemeral_pubkey: rec.ephemeral_pubkey.to_vec(),
                uploader_pubkey: job.uploader_pubkey.clone(),
            }),
            uploader_pubkey: job.uploader_pubkey.clone(),
            dek_commitment: crate::crypto::dek_commitment(&dek, &encrypted_cid).to_vec(),
        };
        self.jobs.update(&job.job_id, |j| {
            j.manifest = Some(manifest);
            j.manifest_at_ms = super::now_ms();
            j.phases.push(phase("encrypt", started.elapsed()));
        })?;
        self.changed(&job.job_id);
        Ok(())
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
        let vk = ed25519_consensus::VerificationKey::try_from(pk).map_err(|_| bad())?;
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

    async fn register(&self, job: ProcessingJob) -> Result<(), Failure> {
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
        let c = match self.submitter.submit(vec![action]).await {
            Ok(c) => c,
            Err(e) => return Err(Failure::new("SUBMIT", e)),
        };
        if c.code != 0 && !self.registered(&job)? {
            let name = crate::tx::Code::from_value(c.code).map_or("UNKNOWN", |c| c.name());
            return Err(Failure::new(
                "CHAIN",
                format!("UploadComplete: code {} {name}: {}", c.code, c.log),
            ));
        }
        self.jobs.advance(&job.job_id, JobStatus::Seeding, |j| {
            j.height = c.height;
            j.phases.push(phase("commit", started.elapsed()));
        })?;
        self.changed(&job.job_id);
        Ok(())
    }

    /// Whether chain state already holds this job's upload (a resubmission
    /// of a tx that committed before a restart).
    fn registered(&self, job: &ProcessingJob) -> Result<bool, Failure> {
        use crate::keyspaces::uploads::UploadsRead;
        let u = self
            .node
            .chain
            .view()
            .upload(&job.flac_cid)
            .map_err(|e| Failure::new("INTERNAL", e))?;
        Ok(u.is_some_and(|u| u.uploader_signature == job.uploader_signature))
    }

    /// `SEEDING`: the replication set's reconcilers fetch the blob (from
    /// this node or each other); this node asks each of them
    /// (`HasContent`, signed answers) until all hold it, or until
    /// `max_seeding_secs` pass, when the job completes under-replicated
    /// (`error_code` `UNDER_REPLICATED`) and the alarm is raised.
    async fn seed(&self, job: ProcessingJob) -> Result<(), Failure> {
        let cid = job.encrypted_cid.clone();
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
        loop {
            let waiting: Vec<[u8; 32]> =
                set.iter().filter(|k| !held.contains(*k)).copied().collect();
            for k in &waiting {
                let ok = if *k == me {
                    self.node.content.size(&cid).is_some()
                } else {
                    self.peer_holds(k, &chain_id, &cid).await
                };
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
            tokio::time::sleep(SEEDING_POLL).await;
        }
    }

    fn chain_id(&self) -> Result<String, Failure> {
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
        let t = crate::local::peer_client::PeerTarget {
            operator: *k,
            address: rec.address,
        };
        matches!(
            crate::local::peer_client::has_content(&self.node.operator, chain_id, &t, cid).await,
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
        if job.flac_cid.is_empty() || self.registered(&job).unwrap_or(true) {
            return;
        }
        if !job.encrypted_cid.is_empty() {
            let _ = self.node.content.remove(&job.encrypted_cid);
        }
        let _ = self.node.local.delete_dek(&job.flac_cid);
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

/// Whether a job has a step to run now (it is not waiting for its
/// signature, and not finished).
fn needs_driving(j: &ProcessingJob) -> bool {
    match j.status() {
        JobStatus::Transcoding | JobStatus::Seeding => true,
        JobStatus::Encrypting => j.manifest.is_none() || !j.uploader_signature.is_empty(),
        _ => false,
    }
}

/// Encrypts `flac` into `blob`; returns the blob's sha-256 and size.
fn encrypt_file(
    dek: &crate::crypto::Dek,
    flac: &Path,
    blob: &Path,
) -> Result<([u8; 32], u64), Failure> {
    let io = |e: std::io::Error| Failure::new("INTERNAL", format!("{}: {e}", blob.display()));
    let input = BufReader::with_capacity(1 << 20, std::fs::File::open(flac).map_err(io)?);
    let out = std::fs::File::create(blob).map_err(io)?;
    let mut w = Hashing {
        inner: BufWriter::with_capacity(1 << 20, out),
        hash: Sha256::new(),
    };
    let size = crate::crypto::stream::encrypt(dek, input, &mut w)
        .map_err(|e| Failure::new("INTERNAL", e))?;
    w.flush().map_err(io)?;
    Ok((w.hash.finalize().into(), size))
}
