//! The light client: verified headers fetched from an untrusted RPC node.

use std::cmp::Ordering;
use std::time::{Duration, Instant};

use tendermint::block::Header;
use tendermint::Time;
use tendermint_light_client_verifier::types::LightBlock;

use super::rpc::Rpc;
use super::verify::{bisect, check_root, walk_back};
use super::{LightError, LightOptions, TrustRoot, REQUEST_TIMEOUT};

/// How often [`LightClient::wait_for_height`] polls.
const POLL: Duration = Duration::from_millis(200);

/// Verifies headers from the node at an RPC URL against a trust root.
#[derive(Debug, Clone)]
pub struct LightClient {
    rpc: Rpc,
    root: TrustRoot,
    options: LightOptions,
}

impl LightClient {
    /// A client for the node at `rpc_url` (e.g. `http://127.0.0.1:26657`),
    /// each request timing out after [`REQUEST_TIMEOUT`].
    pub fn new(rpc_url: &str, root: TrustRoot, options: LightOptions) -> Result<Self, LightError> {
        Ok(Self {
            rpc: Rpc::new(rpc_url, REQUEST_TIMEOUT)?,
            root,
            options,
        })
    }

    /// A client using `http` (its timeouts are the caller's).
    pub fn with_http(
        rpc_url: &str,
        http: reqwest::Client,
        root: TrustRoot,
        options: LightOptions,
    ) -> Self {
        Self {
            rpc: Rpc::with_http(rpc_url, http),
            root,
            options,
        }
    }

    /// The trust root.
    pub fn root(&self) -> &TrustRoot {
        &self.root
    }

    /// The options.
    pub fn options(&self) -> &LightOptions {
        &self.options
    }

    /// The RPC base URL.
    pub fn rpc_url(&self) -> &str {
        self.rpc.base()
    }

    /// The verified header at `height`, checked against the local clock.
    pub async fn verified_header(&self, height: u64) -> Result<Header, LightError> {
        self.verified_header_at(height, Time::now()).await
    }

    /// The verified header at `height`, with `now` as the current time.
    pub async fn verified_header_at(&self, height: u64, now: Time) -> Result<Header, LightError> {
        if height == 0 {
            return Err(LightError::BelowBounds { height, min: 1 });
        }
        let root = self.root_block(now).await?;
        match height.cmp(&self.root.height) {
            Ordering::Equal => Ok(root.signed_header.header),
            Ordering::Greater => Ok(self.forward(root, height, now).await?.signed_header.header),
            Ordering::Less => self.backward(root.signed_header.header, height).await,
        }
    }

    /// The verified headers at `height` and `height + 1`, the header whose
    /// app hash commits to the state after `height`: `height + 1` is
    /// verified from the root, `height` by its hash link from it.
    pub async fn verified_pair(&self, height: u64) -> Result<(Header, Header), LightError> {
        let next_height = height.checked_add(1).ok_or(LightError::AboveBounds {
            height,
            max: u64::MAX - 1,
        })?;
        let next = self.verified_header(next_height).await?;
        let this = self.backward(next.clone(), height).await?;
        Ok((this, next))
    }

    /// The light block at the root's height, checked against the root
    /// (hash, chain id, validator sets, trusting period at `now`).
    pub async fn root_block(&self, now: Time) -> Result<LightBlock, LightError> {
        let block = self.rpc.light_block(self.root.height).await?;
        check_root(&self.root, &block, &self.options, now)?;
        Ok(block)
    }

    async fn forward(
        &self,
        root: LightBlock,
        height: u64,
        now: Time,
    ) -> Result<LightBlock, LightError> {
        let latest = self.rpc.latest_height().await?;
        if height > latest {
            return Err(LightError::AboveBounds {
                height,
                max: latest,
            });
        }
        bisect(root, height, &self.options, now, |h| {
            self.rpc.light_block(h)
        })
        .await
    }

    async fn backward(&self, top: Header, height: u64) -> Result<Header, LightError> {
        walk_back(top, height, |h| async move {
            Ok(self.rpc.signed_header(Some(h)).await?.header)
        })
        .await
    }

    /// The node's latest committed height (unverified).
    pub async fn latest_height(&self) -> Result<u64, LightError> {
        self.rpc.latest_height().await
    }

    /// Polls `/status` until the node has committed `height`, for at most
    /// `timeout`; returns the latest height seen. To read state as of the
    /// latest height `H`, wait for `H + 1`: the app hash of the state after
    /// `H` is in the header of `H + 1`.
    pub async fn wait_for_height(&self, height: u64, timeout: Duration) -> Result<u64, LightError> {
        let start = Instant::now();
        let mut latest = None;
        let mut last_error = None;
        loop {
            let left = timeout.saturating_sub(start.elapsed());
            match tokio::time::timeout(left, self.rpc.latest_height()).await {
                Ok(Ok(h)) if h >= height => return Ok(h),
                Ok(Ok(h)) => latest = Some(h),
                Ok(Err(e)) => last_error = Some(e.to_string()),
                Err(_) => {}
            }
            if start.elapsed().saturating_add(POLL) > timeout {
                let waited = start.elapsed();
                return Err(LightError::WaitTimeout {
                    height,
                    latest,
                    waited,
                    last_error,
                });
            }
            tokio::time::sleep(POLL).await;
        }
    }
}
