//! A per-service request timeout. The public listener cannot use tonic's
//! server-wide `timeout`: it would cut off `ContentService.Upload` and
//! `Download`, whose handlers move a stream that may rightly take minutes (it has its
//! own idle timeout and a deadline from its declared size). Every unary
//! service there is wrapped in [`Timed`] instead.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tonic::body::Body;
use tonic::codegen::http;
use tonic::server::NamedService;

/// `inner`, answering DEADLINE_EXCEEDED after `after`, except on the
/// paths `exempt` names (streams with their own idle timeouts).
#[derive(Clone, Debug)]
pub struct Timed<S> {
    inner: S,
    after: Duration,
    exempt: Vec<&'static str>,
}

impl<S> Timed<S> {
    pub fn new(inner: S, after: Duration) -> Self {
        Timed {
            inner,
            after,
            exempt: Vec::new(),
        }
    }

    /// Leaves calls to `path` (`/package.Service/Method`) untimed.
    pub fn except(mut self, path: &'static str) -> Self {
        self.exempt.push(path);
        self
    }
}

impl<S: NamedService> NamedService for Timed<S> {
    const NAME: &'static str = S::NAME;
}

type Answer = Pin<Box<dyn Future<Output = Result<http::Response<Body>, Infallible>> + Send>>;

impl<S, B> tower::Service<http::Request<B>> for Timed<S>
where
    S: tower::Service<http::Request<B>, Response = http::Response<Body>, Error = Infallible>,
    S::Future: Send + 'static,
{
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = Answer;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<B>) -> Answer {
        let untimed = self.exempt.contains(&req.uri().path());
        let fut = self.inner.call(req);
        if untimed {
            return Box::pin(fut);
        }
        let after = self.after;
        Box::pin(async move {
            match tokio::time::timeout(after, fut).await {
                Ok(r) => r,
                Err(_) => Ok(tonic::Status::deadline_exceeded(format!(
                    "no answer within {} s ([limits] request_timeout_secs)",
                    after.as_secs()
                ))
                .into_http()),
            }
        })
    }
}
