//! `ContentService` on the public listener: `Upload` (client-streaming:
//! the signed intent, then the audio), `Status` (the job's state and every
//! change) and `Complete` (the uploader's manifest signature). Refusals
//! carry their stable code first in the message (`CODE: …`,
//! [`crate::content::IngestError`]).

// tonic's `Status` is large; it is the error type every handler must return.
#![allow(clippy::result_large_err)]

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio_stream::Stream;
use tonic::{Request, Response, Status, Streaming};

use crate::content::{admit, replay, IngestError, Intent, IntentCheck, Pipeline};
use crate::keyspaces::params::ParamsRead;
use crate::local::processing::{is_terminal, job_status_name};
use crate::proto::content::content_service_server::ContentService;
use crate::proto::content::upload_request::Part;
use crate::proto::content::{
    CompleteRequest, CompleteResponse, JobState, NodeRequest, NodeResponse, SignedIntent,
    StatusRequest, UploadRequest, UploadResponse,
};
use crate::proto::local::ProcessingJob;

/// The largest message `Upload` decodes: an audio chunk of up to 1 MiB
/// and its framing.
pub const MAX_UPLOAD_MESSAGE: usize = (1 << 20) + 1024;

/// How long a `Status` stream follows one job at most.
const STATUS_MAX: Duration = Duration::from_secs(3600);

pub struct ContentServiceImpl {
    pub pipeline: Arc<Pipeline>,
}

/// The next message, or `Idle` after `idle` of silence.
async fn next(
    s: &mut Streaming<UploadRequest>,
    idle: Duration,
) -> Result<Option<UploadRequest>, IngestError> {
    match tokio::time::timeout(idle, s.message()).await {
        Err(_) => Err(IngestError::Idle {
            secs: idle.as_secs(),
        }),
        Ok(Err(e)) => Err(IngestError::Aborted(e.message().to_string())),
        Ok(Ok(m)) => Ok(m),
    }
}

impl ContentServiceImpl {
    fn idle(&self) -> Duration {
        Duration::from_secs(self.pipeline.cfg.idle_timeout_secs.max(1))
    }

    /// Verifies the intent and checks it against the latest state.
    async fn admit(&self, signed: SignedIntent) -> Result<Intent, IngestError> {
        let p = self.pipeline.clone();
        let now = crate::content::now_ms();
        tokio::task::spawn_blocking(move || {
            let view = p.node.chain.view();
            let chain_id = view.commit_info()?.chain_id;
            let params = view.params()?.unwrap_or_default();
            let window_ms = p.cfg.intent_window_secs.saturating_mul(1000);
            let at = IntentCheck {
                chain_id: &chain_id,
                now_ms: now,
                window_ms,
                max_set_size: params.rights.max_set_size as usize,
            };
            let intent = Intent::verify(&signed, &at)?;
            admit(&view, &intent, &p.node.me(), p.cfg.max_upload_bytes)?;
            // remembered past the window, when the window alone refuses it
            replay::remember(&p.node.local, &intent, now.saturating_add(2 * window_ms))?;
            Ok(intent)
        })
        .await
        .map_err(|e| IngestError::Internal(e.to_string()))?
    }

    /// Receives exactly `declared` bytes of audio into `path`.
    async fn receive(
        &self,
        s: &mut Streaming<UploadRequest>,
        path: &std::path::Path,
        declared: u64,
    ) -> Result<u64, IngestError> {
        let disk = |e: std::io::Error| IngestError::Disk(format!("{}: {e}", path.display()));
        let file = tokio::fs::File::create(path).await.map_err(disk)?;
        let mut out = tokio::io::BufWriter::with_capacity(1 << 20, file);
        let mut sent = 0u64;
        while let Some(m) = next(s, self.idle()).await? {
            let Some(Part::Audio(chunk)) = m.part else {
                return Err(IngestError::Protocol);
            };
            sent = sent.saturating_add(chunk.len() as u64);
            if sent > declared {
                return Err(IngestError::SizeMismatch { declared, sent });
            }
            out.write_all(&chunk).await.map_err(disk)?;
        }
        if sent != declared {
            return Err(IngestError::SizeMismatch { declared, sent });
        }
        out.flush().await.map_err(disk)?;
        out.get_ref().sync_all().await.map_err(disk)?;
        Ok(sent)
    }
}

/// What `Status` reports about a job.
pub fn job_state(j: &ProcessingJob) -> JobState {
    JobState {
        job_id: j.job_id.clone(),
        status: job_status_name(j.status()).to_string(),
        error_code: j.error_code.clone(),
        error: j.error.clone(),
        facts: j.facts.clone(),
        manifest: j.manifest.clone(),
        signed: !j.uploader_signature.is_empty(),
        height: j.height,
        phases: j.phases.clone(),
    }
}

type StateStream = Pin<Box<dyn Stream<Item = Result<JobState, Status>> + Send>>;

#[tonic::async_trait]
impl ContentService for ContentServiceImpl {
    async fn upload(
        &self,
        req: Request<Streaming<UploadRequest>>,
    ) -> Result<Response<UploadResponse>, Status> {
        let mut s = req.into_inner();
        let first = next(&mut s, self.idle()).await?;
        let Some(Part::Intent(signed)) = first.and_then(|m| m.part) else {
            return Err(IngestError::Protocol.into());
        };
        let intent = self.admit(signed).await?;
        let slot = self.pipeline.slots.take(intent.uploader)?;
        let (job_id, path) = self.pipeline.begin(&intent, crate::content::now_ms())?;
        let started = std::time::Instant::now();
        let deadline = self.pipeline.cfg.receive_deadline(intent.audio_bytes);
        let received =
            tokio::time::timeout(deadline, self.receive(&mut s, &path, intent.audio_bytes))
                .await
                .unwrap_or(Err(IngestError::TooSlow {
                    secs: deadline.as_secs(),
                }));
        match received {
            Ok(received_bytes) => {
                crate::metrics::metrics()
                    .upload_bytes
                    .with_label_values(&["in"])
                    .inc_by(received_bytes);
                self.pipeline.received(&job_id, slot, started.elapsed())?;
                Ok(Response::new(UploadResponse {
                    job_id,
                    received_bytes,
                }))
            }
            Err(e) => {
                self.pipeline.abandon(&job_id, &e);
                Err(e.into())
            }
        }
    }

    type StatusStream = StateStream;

    async fn status(
        &self,
        req: Request<StatusRequest>,
    ) -> Result<Response<Self::StatusStream>, Status> {
        let job_id = req.into_inner().job_id;
        let mut changes = self.pipeline.subscribe();
        let first = self
            .pipeline
            .job(&job_id)?
            .ok_or_else(|| IngestError::NoJob(hex::encode(&job_id)))?;
        let (tx, rx) = tokio::sync::mpsc::channel(8);
        let p = self.pipeline.clone();
        tokio::spawn(async move {
            let follow = async {
                let mut last = job_state(&first);
                let mut done = is_terminal(first.status());
                if tx.send(Ok(last.clone())).await.is_err() {
                    return;
                }
                while !done {
                    match changes.recv().await {
                        Ok(id) if id != job_id => continue,
                        Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                        _ => {}
                    }
                    let Ok(Some(j)) = p.job(&job_id) else { return };
                    let now = job_state(&j);
                    done = is_terminal(j.status());
                    if now != last {
                        if tx.send(Ok(now.clone())).await.is_err() {
                            return;
                        }
                        last = now;
                    }
                }
            };
            let _ = tokio::time::timeout(STATUS_MAX, follow).await;
        });
        Ok(Response::new(Box::pin(
            tokio_stream::wrappers::ReceiverStream::new(rx),
        )))
    }

    async fn complete(
        &self,
        req: Request<CompleteRequest>,
    ) -> Result<Response<CompleteResponse>, Status> {
        let r = req.into_inner();
        self.pipeline.complete(&r.job_id, &r.signature)?;
        Ok(Response::new(CompleteResponse { job_id: r.job_id }))
    }

    async fn node(&self, _: Request<NodeRequest>) -> Result<Response<NodeResponse>, Status> {
        let p = &self.pipeline;
        let chain_id = p
            .node
            .chain
            .commit_info()
            .map_err(|e| Status::internal(e.to_string()))?
            .chain_id;
        Ok(Response::new(NodeResponse {
            chain_id,
            operator: p.node.me().to_vec(),
            max_upload_bytes: p.cfg.max_upload_bytes,
            intent_window_secs: p.cfg.intent_window_secs,
            idle_timeout_secs: p.cfg.idle_timeout_secs,
        }))
    }
}
