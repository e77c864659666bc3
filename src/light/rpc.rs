//! Fetching from a CometBFT RPC node (GET, JSON-RPC over HTTP), decoded with
//! tendermint-rpc's types. Nothing here is verified, except that the node
//! answered for the height asked for.

use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::Deserialize;

use tendermint::block::signed_header::SignedHeader;
use tendermint::{node, validator};
use tendermint_light_client_verifier::types::LightBlock;
use tendermint_rpc::endpoint::{commit, status, validators};
use tendermint_rpc::ResponseError;

use super::LightError;

/// Validators asked for per `/validators` page (CometBFT's maximum).
const PER_PAGE: usize = 100;
/// Largest validator set accepted.
const MAX_VALIDATORS: usize = 10_000;
/// Largest response body read.
const MAX_BODY: usize = 32 << 20;

/// One RPC node: its base URL and an HTTP client.
#[derive(Debug, Clone)]
pub(crate) struct Rpc {
    base: String,
    http: reqwest::Client,
}

impl Rpc {
    /// A client for `base` (e.g. `http://127.0.0.1:26657`) whose requests
    /// each time out after `timeout`.
    pub(crate) fn new(base: &str, timeout: Duration) -> Result<Self, LightError> {
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .build()
            .map_err(|e| LightError::Rpc {
                url: base.to_string(),
                reason: format!("building the HTTP client: {e}"),
            })?;
        Ok(Self::with_http(base, http))
    }

    /// A client for `base` using `http` (whose timeout the caller set).
    pub(crate) fn with_http(base: &str, http: reqwest::Client) -> Self {
        Self {
            base: base.trim_end_matches('/').to_string(),
            http,
        }
    }

    /// The base URL.
    pub(crate) fn base(&self) -> &str {
        &self.base
    }

    /// GET `path` and decode the JSON-RPC result.
    async fn get<R: DeserializeOwned>(&self, path: &str) -> Result<R, LightError> {
        let url = format!("{}{path}", self.base);
        let fail = |reason: String| LightError::Rpc {
            url: url.clone(),
            reason,
        };
        let resp = self
            .http
            .get(&url)
            .send()
            .await
            .map_err(|e| fail(error_chain(&e)))?;
        let status = resp.status();
        let body = read_capped(resp).await.map_err(&fail)?;
        // CometBFT answers RPC errors with HTTP 500 and a JSON-RPC error body.
        decode(&body).map_err(|e| fail(format!("HTTP {status}: {e}")))
    }

    /// The signed header (header and commit) at `height`; the latest when
    /// `None`.
    pub(crate) async fn signed_header(
        &self,
        height: Option<u64>,
    ) -> Result<SignedHeader, LightError> {
        let path = match height {
            Some(h) => format!("/commit?height={h}"),
            None => "/commit".to_string(),
        };
        let resp: commit::Response = self.get(&path).await?;
        let got = resp.signed_header.header.height.value();
        if let Some(expected) = height.filter(|h| *h != got) {
            return Err(self.wrong_height(&path, expected, got));
        }
        Ok(resp.signed_header)
    }

    /// The full validator set at `height`, every page of it.
    pub(crate) async fn validators(&self, height: u64) -> Result<validator::Set, LightError> {
        let mut all: Vec<validator::Info> = Vec::new();
        for page in 1..=MAX_VALIDATORS.div_ceil(PER_PAGE) {
            let path = format!("/validators?height={height}&per_page={PER_PAGE}&page={page}");
            let resp: validators::Response = self.get(&path).await?;
            let total = self.check_page(&path, height, &resp, all.len())?;
            all.extend(resp.validators);
            if all.len() >= total {
                return validator_set(height, all);
            }
        }
        Err(self.malformed(height, format!("more than {MAX_VALIDATORS} validators")))
    }

    /// Checks one `/validators` page; returns the set's total size.
    fn check_page(
        &self,
        path: &str,
        height: u64,
        resp: &validators::Response,
        have: usize,
    ) -> Result<usize, LightError> {
        let got = resp.block_height.value();
        if got != height {
            return Err(self.wrong_height(path, height, got));
        }
        let total = usize::try_from(resp.total)
            .map_err(|_| self.malformed(height, format!("validator total {}", resp.total)))?;
        let after = have.saturating_add(resp.validators.len());
        if total > MAX_VALIDATORS || resp.validators.is_empty() || after > total {
            let why = format!(
                "validators page at {path}: {} validators, {have} before it, total {total}",
                resp.validators.len()
            );
            return Err(self.malformed(height, why));
        }
        Ok(total)
    }

    /// The light block at `height`: its signed header, validators and next
    /// validators (those at `height + 1`).
    pub(crate) async fn light_block(&self, height: u64) -> Result<LightBlock, LightError> {
        let next = height
            .checked_add(1)
            .ok_or_else(|| self.malformed(height, "height overflow".into()))?;
        let (signed, vals, next_vals) = tokio::try_join!(
            self.signed_header(Some(height)),
            self.validators(height),
            self.validators(next),
        )?;
        let provider = node::Id::new([0; 20]);
        Ok(LightBlock::new(signed, vals, next_vals, provider))
    }

    /// The node's latest committed height (from `/status`).
    pub(crate) async fn latest_height(&self) -> Result<u64, LightError> {
        let resp: status::Response = self.get("/status").await?;
        Ok(resp.sync_info.latest_block_height.value())
    }

    fn wrong_height(&self, path: &str, expected: u64, got: u64) -> LightError {
        LightError::WrongHeight {
            url: format!("{}{path}", self.base),
            expected,
            got,
        }
    }

    fn malformed(&self, height: u64, reason: String) -> LightError {
        LightError::Malformed {
            height,
            reason: format!("{reason} (from {})", self.base),
        }
    }
}

/// A validator set from a node's list, refusing a total voting power that
/// `validator::Set::new` would panic on.
fn validator_set(height: u64, vals: Vec<validator::Info>) -> Result<validator::Set, LightError> {
    let total = vals
        .iter()
        .try_fold(0u64, |acc, v| acc.checked_add(v.power.value()));
    match total {
        Some(t) if t <= validator::Set::MAX_TOTAL_VOTING_POWER => {
            Ok(validator::Set::without_proposer(vals))
        }
        _ => Err(LightError::Malformed {
            height,
            reason: "total voting power overflows".into(),
        }),
    }
}

/// A JSON-RPC response: its result, or its error. (tendermint-rpc's
/// `Response::from_string` does the same, but without `flex-error/std` its
/// errors print only "response error" / "serde parse error".)
#[derive(Deserialize)]
struct Envelope<R> {
    result: Option<R>,
    error: Option<ResponseError>,
}

/// The result in a JSON-RPC response body.
fn decode<R: DeserializeOwned>(body: &[u8]) -> Result<R, String> {
    let envelope: Envelope<R> = serde_json::from_slice(body).map_err(|e| {
        let start = String::from_utf8_lossy(body.get(..200).unwrap_or(body)).into_owned();
        format!("decoding the response: {e}; body starts {start:?}")
    })?;
    match (envelope.error, envelope.result) {
        (Some(e), _) => Err(format!("JSON-RPC error: {e}")),
        (None, Some(result)) => Ok(result),
        (None, None) => Err("JSON-RPC response with neither result nor error".into()),
    }
}

/// The response body, refusing more than `MAX_BODY` bytes.
async fn read_capped(mut resp: reqwest::Response) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    while let Some(chunk) = resp.chunk().await.map_err(|e| error_chain(&e))? {
        if body.len().saturating_add(chunk.len()) > MAX_BODY {
            return Err(format!("response body over {MAX_BODY} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// An error and its sources, `: `-separated (reqwest's own message omits
/// the cause, e.g. "connection refused").
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}
