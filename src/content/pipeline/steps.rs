//! The processing steps: `TRANSCODING` (the worker child) and
//! `ENCRYPTING` (the blob, the wrapped DEKs, the manifest).

use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use sha2::{Digest, Sha256};

use super::{phase, Failure, Pipeline};
use crate::local::deks::DeksExt;
use crate::media::cid::raw_cid_of_digest;
use crate::media::worker::{run_job, WorkerError, WorkerJob};
use crate::proto::content as cpb;
use crate::proto::local::{JobStatus, ProcessingJob, StoredDek};
use crate::proto::rights as rpb;

impl Pipeline {
    /// The worker's job: the audio to FLAC, each artwork to a PNG beside
    /// its input.
    fn worker_job(&self, job: &ProcessingJob) -> Result<WorkerJob, Failure> {
        use crate::keyspaces::params::ParamsRead;
        let view = self.node.chain.view();
        let params = view.params().map_err(|e| Failure::new("INTERNAL", e))?;
        let max_png = params.unwrap_or_default().rights.max_image_bytes;
        Ok(WorkerJob {
            input: PathBuf::from(&job.raw_audio_path),
            flac: PathBuf::from(&job.flac_path),
            images: job
                .image_paths
                .iter()
                .map(|p| (PathBuf::from(p), png_path(p)))
                .collect(),
            limits: self.cfg.media_limits(),
            image_limits: self.cfg.image_limits(max_png),
        })
    }

    pub(super) async fn transcode(&self, job: ProcessingJob) -> Result<(), Failure> {
        let (exe, wl, wjob) = (
            self.exe.clone(),
            self.cfg.worker_limits(),
            self.worker_job(&job)?,
        );
        let out = tokio::task::spawn_blocking(move || run_job(&exe, &wjob, &wl))
            .await
            .map_err(|e| Failure::new("INTERNAL", e))?
            .map_err(|e| match e {
                WorkerError::Refused { code, message } => Failure::new(&code, message),
                e @ WorkerError::Decoder(_) => Failure::new("DECODER", e),
            })?;
        let t = out.audio;
        self.refuse_known(&t.flac_cid)?;
        refuse_duplicates(&out.images)?;
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
            j.image_cids = out.images.iter().map(|i| i.cid.to_vec()).collect();
            j.image_sizes = out.images.iter().map(|i| i.bytes).collect();
            j.phases.push(phase("transcode", ms(t.timings.encode_ms)));
            j.phases.push(phase("verify", ms(t.timings.verify_ms)));
            j.phases.push(phase("hash", ms(t.timings.hash_ms)));
        })?;
        let _ = std::fs::remove_file(&job.raw_audio_path);
        for p in &job.image_paths {
            let _ = std::fs::remove_file(p);
        }
        self.changed(&job.job_id);
        Ok(())
    }

    /// `EXISTS` when chain state or this node already has an upload of
    /// this audio (its wrapped DEK is keyed by the flac cid).
    fn refuse_known(&self, flac_cid: &[u8]) -> Result<(), Failure> {
        use crate::keyspaces::uploads::UploadsRead;
        let internal = |e: String| Failure::new("INTERNAL", e);
        let on_chain = self
            .node
            .chain
            .view()
            .upload(flac_cid)
            .map_err(|e| internal(e.to_string()))?;
        let here = self
            .node
            .local
            .dek(flac_cid)
            .map_err(|e| internal(e.to_string()))?;
        if on_chain.is_some() || here.is_some() {
            return Err(Failure::new(
                "EXISTS",
                format!(
                    "this audio (flac cid {}) is already uploaded{}",
                    hex::encode(flac_cid),
                    if on_chain.is_some() {
                        ""
                    } else {
                        " or being uploaded here"
                    }
                ),
            ));
        }
        Ok(())
    }

    pub(super) async fn encrypt(self: &Arc<Self>, job: ProcessingJob) -> Result<(), Failure> {
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
        self.check_encrypted_size(size)?;
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
        self.store_images(&job)?;
        let recovery: [u8; 32] = job
            .recovery_x25519
            .as_slice()
            .try_into()
            .map_err(|_| Failure::new("INTERNAL", "job has no 32-byte recovery key"))?;
        let wrap = |to: &[u8; 32]| {
            crate::crypto::wrap::wrap_dek(&dek, to, &job.flac_cid)
                .map_err(|e| Failure::new("INTERNAL", e))
        };
        // under the keyring, so an X25519 rotation cannot finish between
        // the wrap and the write
        self.node.x25519.seal_own(&dek, &job.flac_cid, |mine| {
            self.put_own_dek(&job, mine.map_err(|e| Failure::new("INTERNAL", e))?)
        })?;
        let rec = wrap(&recovery)?;
        let chain_id = self.chain_id()?;
        let manifest = rpb::UploadManifest {
            chain_id,
            flac_cid: job.flac_cid.clone(),
            encrypted_cid: encrypted_cid.clone(),
            image_cids: job.image_cids.clone(),
            image_sizes: job.image_sizes.clone(),
            facts: job.facts.as_ref().map(chain_facts),
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
            j.manifest_at_ms = crate::content::now_ms();
            j.phases.push(phase("encrypt", started.elapsed()));
        })?;
        // the plaintext is no longer needed: the manifest is made
        let _ = std::fs::remove_file(&job.flac_path);
        self.changed(&job.job_id);
        Ok(())
    }

    /// Copies each PNG into the content store, where the replication set
    /// fetches it; the store hashes it again against its cid. A PNG
    /// already there (a cover shared with another upload, or a resumed
    /// step) is kept.
    fn store_images(&self, job: &ProcessingJob) -> Result<(), Failure> {
        let internal = |e: String| Failure::new("INTERNAL", e);
        let _one = self.image_lock.lock();
        for ((input, cid), size) in job
            .image_paths
            .iter()
            .zip(&job.image_cids)
            .zip(&job.image_sizes)
        {
            let png = png_path(input);
            if self.node.content.size(cid) != Some(*size) {
                let f = std::fs::File::open(&png)
                    .map_err(|e| internal(format!("{}: {e}", png.display())))?;
                self.node
                    .content
                    .put_reader(cid, *size, f)
                    .map_err(|e| internal(format!("{}: {e}", png.display())))?;
            }
            let _ = std::fs::remove_file(&png);
        }
        Ok(())
    }

    /// `TOO_LARGE` past `rights.max_encrypted_bytes` (a lossy source can
    /// grow as FLAC), before the uploader is asked to sign.
    fn check_encrypted_size(&self, size: u64) -> Result<(), Failure> {
        use crate::keyspaces::params::ParamsRead;
        let max = self
            .node
            .chain
            .view()
            .params()
            .map_err(|e| Failure::new("INTERNAL", e))?
            .unwrap_or_default()
            .rights
            .max_encrypted_bytes;
        if size > max {
            return Err(Failure::new(
                "TOO_LARGE",
                format!(
                    "the encrypted FLAC is {size} bytes, over rights.max_encrypted_bytes {max}"
                ),
            ));
        }
        Ok(())
    }

    /// Stores this validator's wrapped DEK under the flac cid, unless
    /// another upload's is there (`EXISTS`); an entry this job wrote in
    /// an interrupted run is replaced.
    fn put_own_dek(
        &self,
        job: &ProcessingJob,
        mine: crate::crypto::wrap::WrappedDek,
    ) -> Result<(), Failure> {
        let internal = |e: crate::local::LocalError| Failure::new("INTERNAL", e);
        let _one = self.node.local.dek_lock();
        let held = self.node.local.dek(&job.flac_cid).map_err(internal)?;
        if held.is_some_and(|d| !super::placed_by(&d, job)) {
            return Err(Failure::new(
                "EXISTS",
                format!(
                    "flac cid {} is being uploaded here already",
                    hex::encode(&job.flac_cid)
                ),
            ));
        }
        let ephemeral = mine.ephemeral_pubkey.to_vec();
        self.jobs
            .update(&job.job_id, |j| j.own_dek_ephemeral = ephemeral.clone())?;
        self.node
            .local
            .put_dek(&StoredDek {
                cid: job.flac_cid.clone(),
                wrapped_dek: mine.ciphertext,
                ephemeral_pubkey: ephemeral,
                source_validator: vec![],
                job_id: job.job_id.clone(),
            })
            .map_err(internal)
    }
}

/// `DUPLICATE_IMAGE` when two artwork files make the same PNG (chain
/// state would refuse the manifest, after the uploader signed it).
fn refuse_duplicates(images: &[crate::media::image::NormalisedImage]) -> Result<(), Failure> {
    for (i, a) in images.iter().enumerate() {
        if let Some(j) = images.iter().skip(i + 1).position(|b| b.cid == a.cid) {
            return Err(Failure::new(
                "DUPLICATE_IMAGE",
                format!(
                    "artwork files {} and {} are the same image",
                    i + 1,
                    i + j + 2
                ),
            ));
        }
    }
    Ok(())
}

/// Where the worker writes the PNG of the artwork received at `input`.
fn png_path(input: &str) -> PathBuf {
    Path::new(input).with_extension("png")
}

/// The facts the chain records (the job's also carry the FLAC's size).
fn chain_facts(f: &cpb::AudioFacts) -> rpb::AudioFacts {
    rpb::AudioFacts {
        sample_rate: f.sample_rate,
        channels: f.channels,
        bits_per_sample: f.bits_per_sample,
        frames: f.frames,
        duration_ms: f.duration_ms,
        source_codec: f.source_codec.clone(),
        lossless_source: f.lossless_source,
    }
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
