//! `ContentService` on the public listener: `Upload` (client-streaming:
//! the signed intent, then the audio), `Status` (the job's state and every
//! change) and `Complete` (the uploader's manifest signature); and
//! `RequestAccess` / `Download` ([`super::access`]). Refusals
//! carry their stable code first in the message (`CODE: …`,
//! [`crate::content::IngestError`]).

// tonic's `Status` is large; it is the error type every handler must return.
#![allow(clippy::result_large_err)]

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tokio_stream::Stream;
use tonic::{Request, Response, Status, Streaming};

use crate::content::sink::{Part as SinkPart, Sink};
use crate::content::{admit, replay, IngestError, Intent, IntentCheck, Pipeline};
use crate::keyspaces::params::ParamsRead;
use crate::local::processing::{is_terminal, job_status_name};
use crate::proto::content::content_service_server::ContentService;
use crate::proto::content::upload_request::Part;
use crate::proto::content::{
    AccessGranted, CompleteRequest, CompleteResponse, DownloadRequest, JobState, NodeRequest,
    NodeResponse, SignedAccessRequest, SignedIntent, StatusRequest, UploadRequest, UploadResponse,
};
use crate::proto::local::ProcessingJob;

/// The largest message `Upload` decodes: an audio chunk of up to 1 MiB
/// and its framing.
pub const MAX_UPLOAD_MESSAGE: usize = (1 << 20) + 1024;

/// The path of `Upload`, which the listener's request timeout skips.
pub const UPLOAD_PATH: &str = "/stave.content.v1.ContentService/Upload";

/// How long a `Status` stream follows one job at most.
const STATUS_MAX: Duration = Duration::from_secs(3600);

pub struct ContentServiceImpl {
    pub pipeline: Arc<Pipeline>,
    pub access: Arc<crate::access::Access>,
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
    /// `rights.max_image_cids` now.
    fn max_images(&self) -> u32 {
        let view = self.pipeline.node.chain.view();
        view.params()
            .ok()
            .flatten()
            .unwrap_or_default()
            .rights
            .max_image_cids
    }

    fn idle(&self) -> Duration {
        Duration::from_secs(self.pipeline.cfg.idle_timeout_secs.max(1))
    }

    /// Verifies the intent and checks it against the latest state.
    async fn admit(&self, signed: SignedIntent) -> Result<Intent, IngestError> {
        let p = self.pipeline.clone();
        let now = crate::content::now_ms();
        blocking(move || {
            let view = p.node.chain.view();
            let chain_id = view.commit_info()?.chain_id;
            let params = view.params()?.unwrap_or_default();
            let at = IntentCheck {
                chain_id: &chain_id,
                now_ms: now,
                window_ms: p.cfg.intent_window_secs.saturating_mul(1000),
                max_set_size: params.rights.max_set_size as usize,
            };
            let intent = Intent::verify(&signed, &at)?;
            admit(&view, &intent, &p.node.me(), &p.cfg)?;
            Ok(intent)
        })
        .await
    }
}

/// Runs `f` on a blocking thread.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, IngestError> + Send + 'static,
) -> Result<T, IngestError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| IngestError::Internal(e.to_string()))?
}

/// One upload being received. It runs in its own task, so it ends with
/// `received` or `abandon` even when the client goes away mid-stream (the
/// handler's future is then dropped; this task sees the stream break).
struct Receiving {
    pipeline: Arc<Pipeline>,
    stream: Streaming<UploadRequest>,
    job_id: Vec<u8>,
    sink: Sink,
}

impl Receiving {
    async fn run(
        mut self,
        slot: crate::content::slots::Slot,
    ) -> Result<UploadResponse, IngestError> {
        let started = std::time::Instant::now();
        match self.receive(started).await {
            Ok(received_bytes) => {
                crate::metrics::metrics()
                    .upload_bytes
                    .with_label_values(&["in"])
                    .inc_by(received_bytes);
                let took = started.elapsed();
                self.pipeline.received(&self.job_id, slot, took)?;
                Ok(UploadResponse {
                    job_id: self.job_id,
                    received_bytes,
                })
            }
            Err(e) => {
                let (p, id) = (self.pipeline.clone(), self.job_id.clone());
                let code = e.code();
                let msg = e.to_string();
                let _ = blocking(move || {
                    p.abandon(&id, code, &msg);
                    Ok(())
                })
                .await;
                Err(e)
            }
        }
    }

    /// Receives exactly the declared bytes into the job's input files:
    /// each message within the idle timeout, and, after a minute's grace,
    /// at least `min_upload_bytes_per_sec` on average.
    async fn receive(&mut self, started: std::time::Instant) -> Result<u64, IngestError> {
        let cfg = &self.pipeline.cfg;
        let idle = Duration::from_secs(cfg.idle_timeout_secs.max(1));
        let declared = self.sink.declared();
        loop {
            let left = cfg.time_left(started.elapsed(), self.sink.sent(), declared)?;
            let Some(m) = next(&mut self.stream, idle.min(left)).await? else {
                break;
            };
            let (part, chunk) = match m.part {
                Some(Part::Audio(c)) => (SinkPart::Audio, c),
                Some(Part::Art(c)) => (SinkPart::Art, c),
                _ => return Err(IngestError::Protocol),
            };
            self.sink.write(part, &chunk).await?;
        }
        let sink = std::mem::replace(&mut self.sink, Sink::new(Vec::new()));
        sink.finish().await
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
        images: j
            .image_cids
            .iter()
            .zip(&j.image_sizes)
            .map(|(cid, bytes)| crate::proto::content::Image {
                cid: cid.clone(),
                bytes: *bytes,
            })
            .collect(),
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
        let p = self.pipeline.clone();
        let (job_id, files) = blocking(move || {
            // remembered past the window, when the window alone refuses it
            let window_ms = p.cfg.intent_window_secs.saturating_mul(1000);
            let until = crate::content::now_ms().saturating_add(2 * window_ms);
            replay::remember(&p.node.local, &intent, until)?;
            p.begin(&intent, crate::content::now_ms())
        })
        .await?;
        let r = Receiving {
            pipeline: self.pipeline.clone(),
            stream: s,
            job_id,
            sink: Sink::new(files),
        };
        let answer = tokio::spawn(r.run(slot))
            .await
            .map_err(|e| IngestError::Internal(e.to_string()))??;
        Ok(Response::new(answer))
    }

    type StatusStream = StateStream;

    async fn status(
        &self,
        req: Request<StatusRequest>,
    ) -> Result<Response<Self::StatusStream>, Status> {
        let job_id = req.into_inner().job_id;
        let mut changes = self.pipeline.subscribe();
        let (p, id) = (self.pipeline.clone(), job_id.clone());
        let first = blocking(move || p.job(&id))
            .await?
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
                    // a client that went away ends the follower at once
                    let change = tokio::select! {
                        c = changes.recv() => c,
                        () = tx.closed() => return,
                    };
                    match change {
                        Ok(id) if id != job_id => continue,
                        Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                        _ => {}
                    }
                    let (p2, id) = (p.clone(), job_id.clone());
                    let Ok(Some(j)) = blocking(move || p2.job(&id)).await else {
                        return;
                    };
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
        let (p, id) = (self.pipeline.clone(), r.job_id.clone());
        blocking(move || p.complete(&id, &r.signature)).await?;
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
            max_art_bytes: p.cfg.max_art_bytes,
            max_images: self.max_images(),
        }))
    }

    async fn request_access(
        &self,
        req: Request<SignedAccessRequest>,
    ) -> Result<Response<AccessGranted>, Status> {
        super::access::request_access(&self.access, req).await
    }

    type DownloadStream = super::access::DownloadStream;

    async fn download(
        &self,
        req: Request<DownloadRequest>,
    ) -> Result<Response<Self::DownloadStream>, Status> {
        super::access::download(&self.access, req).await
    }
}
