//! `ContentService.RequestAccess` and `Download`, on the public listener:
//! the handlers' async edges around [`crate::access`]. Every refusal is
//! counted by code (`stave_access_refused_total`) and answered as
//! `code N NAME: reason`.

// tonic's `Status` is large; it is the error type every handler must return.
#![allow(clippy::result_large_err)]

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use crate::access::{Access, AccessError};
use crate::proto::content::{AccessGranted, DownloadChunk, DownloadRequest, SignedAccessRequest};

/// The path of `Download`, which the listener's request timeout skips.
pub const DOWNLOAD_PATH: &str = "/stave.content.v1.ContentService/Download";

/// The largest access or download request decoded (they are well under a
/// kilobyte, plus the request context).
pub const MAX_REQUEST_BYTES: usize = 16 * 1024;

fn refused(e: &AccessError) -> Status {
    tracing::debug!(code = e.code().value(), error = %e, "access request refused");
    e.refusal()
}

/// `ACCESS_REQUEST_INVALID` past [`MAX_REQUEST_BYTES`] (the service
/// decodes up to an upload chunk's size for `Upload`).
fn too_large(len: usize) -> Result<(), Status> {
    if len > MAX_REQUEST_BYTES {
        let e = AccessError::Invalid(format!("request is {len} bytes, over {MAX_REQUEST_BYTES}"));
        return Err(refused(&e));
    }
    Ok(())
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, AccessError> + Send + 'static,
) -> Result<T, Status> {
    match tokio::task::spawn_blocking(f).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(refused(&e)),
        Err(e) => Err(Status::internal(e.to_string())),
    }
}

/// `RequestAccess`.
pub async fn request_access(
    access: &Arc<Access>,
    req: Request<SignedAccessRequest>,
) -> Result<Response<AccessGranted>, Status> {
    let a = access.clone();
    let signed = req.into_inner();
    too_large(prost::Message::encoded_len(&signed))?;
    blocking(move || a.request_access(&signed))
        .await
        .map(Response::new)
}

pub type DownloadStream = ReceiverStream<Result<DownloadChunk, Status>>;

/// `Download`: checks and opens on a blocking thread, then streams.
pub async fn download(
    access: &Arc<Access>,
    req: Request<DownloadRequest>,
) -> Result<Response<DownloadStream>, Status> {
    let ip = req
        .remote_addr()
        .map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |a| a.ip());
    let a = access.clone();
    let body = req.into_inner();
    too_large(prost::Message::encoded_len(&body))?;
    let sending = blocking(move || a.open_download(&body, ip)).await?;
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    tokio::spawn(crate::access::download::send(sending, tx));
    Ok(Response::new(ReceiverStream::new(rx)))
}
