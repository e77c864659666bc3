//! `local/processing/{job_id}`: the upload pipeline's scratch and its job
//! state machine: `RECEIVING → TRANSCODING → ENCRYPTING → SEEDING →
//! COMPLETE`, or any unfinished state `→ FAILED`.
//!
//! # Invariants
//! - The raw DEK never reaches disk: the record holds it sealed under the
//!   node-local KEK ([`crate::crypto::kek`]), and the sealed DEK is removed
//!   when the job reaches `COMPLETE` or `FAILED`.
//! - At start-up ([`Jobs::recover`]) an unfinished job is resumed when its
//!   state can go on (its inputs are on disk); otherwise it is failed and
//!   its scratch removed. A job still `RECEIVING` is always failed.

use std::path::{Path, PathBuf};

use prost::Message;

use super::{decode, decode_rows, keys, LocalError, LocalRaw, LocalStore};
use crate::crypto::kek::Kek;
use crate::crypto::{generate_dek, Dek};
use crate::proto::local::{JobStatus, ProcessingJob};

/// The name of a job status.
pub fn job_status_name(s: JobStatus) -> &'static str {
    match s {
        JobStatus::Unspecified => "UNSPECIFIED",
        JobStatus::Receiving => "RECEIVING",
        JobStatus::Transcoding => "TRANSCODING",
        JobStatus::Encrypting => "ENCRYPTING",
        JobStatus::Seeding => "SEEDING",
        JobStatus::Complete => "COMPLETE",
        JobStatus::Failed => "FAILED",
    }
}

/// Whether a job in `s` is finished.
pub fn is_terminal(s: JobStatus) -> bool {
    matches!(s, JobStatus::Complete | JobStatus::Failed)
}

/// The state machine as a pure function: whether `from → to` is allowed.
pub fn allowed(from: JobStatus, to: JobStatus) -> bool {
    use JobStatus::*;
    matches!(
        (from, to),
        (Receiving, Transcoding)
            | (Transcoding, Encrypting)
            | (Encrypting, Seeding)
            | (Seeding, Complete)
            | (Receiving | Transcoding | Encrypting | Seeding, Failed)
    )
}

/// Typed access to `local/processing/`.
pub trait ProcessingExt: LocalRaw {
    fn job(&self, job_id: &[u8]) -> Result<Option<ProcessingJob>, LocalError> {
        let key = keys::processing(job_id);
        self.get_raw(&key)?
            .map(|raw| decode(&key, &raw))
            .transpose()
    }
    fn put_job(&self, j: &ProcessingJob) -> Result<(), LocalError> {
        self.put_raw(&keys::processing(&j.job_id), &j.encode_to_vec())
    }
    fn all_jobs(&self) -> Result<Vec<ProcessingJob>, LocalError> {
        let prefix = keys::processing_prefix();
        Ok(decode_rows(&prefix, self.scan_raw(&prefix)?)
            .into_iter()
            .map(|(_, j)| j)
            .collect())
    }
}
impl<T: LocalRaw + ?Sized> ProcessingExt for T {}

/// What a new job starts from.
#[derive(Debug, Clone, Default)]
pub struct NewJob {
    pub job_id: Vec<u8>,
    pub client_pubkey: Vec<u8>,
    pub raw_audio_path: PathBuf,
    pub replication_set: Vec<Vec<u8>>,
    pub dek_holder_set: Vec<Vec<u8>>,
    /// Unix milliseconds.
    pub created_at: u64,
}

/// What [`Jobs::recover`] did at start-up.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Recovery {
    pub resumed: Vec<Vec<u8>>,
    pub failed: Vec<Vec<u8>>,
}

/// Processing jobs over the local store, with the KEK that seals their DEKs.
pub struct Jobs {
    store: LocalStore,
    kek: std::sync::Arc<Kek>,
}

impl Jobs {
    pub fn new(store: LocalStore, kek: std::sync::Arc<Kek>) -> Self {
        Jobs { store, kek }
    }

    /// Creates a `RECEIVING` job with a fresh DEK, stored sealed; returns
    /// the DEK (zeroed when dropped).
    pub fn create(&self, new: NewJob) -> Result<Dek, LocalError> {
        if self.store.job(&new.job_id)?.is_some() {
            return Err(LocalError::Transition {
                job: hex::encode(&new.job_id),
                from: "existing",
                to: job_status_name(JobStatus::Receiving),
            });
        }
        let dek = generate_dek();
        let mut job = ProcessingJob {
            job_id: new.job_id.clone(),
            client_pubkey: new.client_pubkey,
            raw_audio_path: new.raw_audio_path.display().to_string(),
            sealed_dek: self.kek.seal(&new.job_id, &dek),
            replication_set: new.replication_set,
            dek_holder_set: new.dek_holder_set,
            created_at: new.created_at,
            ..Default::default()
        };
        job.set_status(JobStatus::Receiving);
        self.store.put_job(&job)?;
        Ok(dek)
    }

    fn load(&self, job_id: &[u8]) -> Result<ProcessingJob, LocalError> {
        self.store
            .job(job_id)?
            .ok_or_else(|| LocalError::JobNotFound(hex::encode(job_id)))
    }

    /// The job's DEK, unsealed (only while the job is unfinished).
    pub fn dek(&self, job_id: &[u8]) -> Result<Dek, LocalError> {
        let job = self.load(job_id)?;
        Ok(self.kek.open(job_id, &job.sealed_dek)?)
    }

    /// Moves a job to `to`, letting `edit` fill in what the step produced.
    /// Reaching `COMPLETE` or `FAILED` removes the sealed DEK and the
    /// job's temporary files.
    pub fn advance(
        &self,
        job_id: &[u8],
        to: JobStatus,
        edit: impl FnOnce(&mut ProcessingJob),
    ) -> Result<ProcessingJob, LocalError> {
        let mut job = self.load(job_id)?;
        let from = job.status();
        if !allowed(from, to) {
            return Err(LocalError::Transition {
                job: hex::encode(job_id),
                from: job_status_name(from),
                to: job_status_name(to),
            });
        }
        edit(&mut job);
        job.set_status(to);
        if is_terminal(to) {
            job.sealed_dek.clear();
            remove_scratch(&job);
        }
        self.store.put_job(&job)?;
        Ok(job)
    }

    /// Fails a job with a reason.
    pub fn fail(&self, job_id: &[u8], reason: &str) -> Result<ProcessingJob, LocalError> {
        self.advance(job_id, JobStatus::Failed, |j| j.error = reason.to_string())
    }

    /// Edits a job without changing its state (what a step produced).
    pub fn update(
        &self,
        job_id: &[u8],
        edit: impl FnOnce(&mut ProcessingJob),
    ) -> Result<ProcessingJob, LocalError> {
        let mut job = self.load(job_id)?;
        edit(&mut job);
        self.store.put_job(&job)?;
        Ok(job)
    }

    /// The job as stored.
    pub fn get(&self, job_id: &[u8]) -> Result<Option<ProcessingJob>, LocalError> {
        self.store.job(job_id)
    }

    /// Every job record.
    pub fn all(&self) -> Result<Vec<ProcessingJob>, LocalError> {
        self.store.all_jobs()
    }

    /// Deletes a finished job's record.
    pub fn forget(&self, job_id: &[u8]) -> Result<(), LocalError> {
        match self.store.job(job_id)? {
            Some(j) if is_terminal(j.status()) => self.store.delete_raw(&keys::processing(job_id)),
            _ => Ok(()),
        }
    }

    /// At start-up: resumes each unfinished job whose state can go on and
    /// fails the others, removing their scratch. A job still `RECEIVING`
    /// is failed (its client sends the file again); a `TRANSCODING` job
    /// needs its input and its DEK; an `ENCRYPTING` job its FLAC and its
    /// DEK, unless its manifest is made; `SEEDING` needs nothing. A failed
    /// job's `error_code` is `RESTARTED`.
    pub fn recover(&self) -> Result<Recovery, LocalError> {
        let mut r = Recovery::default();
        for job in self.store.all_jobs()? {
            if is_terminal(job.status()) {
                continue;
            }
            match self.why_not_resumable(&job) {
                None => r.resumed.push(job.job_id),
                Some(why) => {
                    self.advance(&job.job_id, JobStatus::Failed, |j| {
                        j.error_code = "RESTARTED".into();
                        j.error = why.to_string();
                    })?;
                    r.failed.push(job.job_id);
                }
            }
        }
        Ok(r)
    }

    fn why_not_resumable(&self, job: &ProcessingJob) -> Option<&'static str> {
        let exists = |p: &str| !p.is_empty() && Path::new(p).exists();
        let sealed_ok = self.kek.open(&job.job_id, &job.sealed_dek).is_ok();
        let signed = !job.uploader_signature.is_empty();
        let can_go_on = match job.status() {
            JobStatus::Receiving => return Some("restarted while receiving: send the file again"),
            JobStatus::Transcoding => exists(&job.raw_audio_path) && sealed_ok,
            // a made manifest needs only the signature
            JobStatus::Encrypting => {
                signed || job.manifest.is_some() || (exists(&job.flac_path) && sealed_ok)
            }
            _ => true,
        };
        (!can_go_on).then_some("input lost at restart")
    }
}

fn remove_scratch(job: &ProcessingJob) {
    let paths = [&job.raw_audio_path, &job.flac_path]
        .into_iter()
        .chain(job.image_paths.iter());
    for p in paths.filter(|p| !p.is_empty()) {
        let _ = std::fs::remove_file(p);
    }
}

#[cfg(test)]
mod tests;
