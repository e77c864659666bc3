//! The trust root and the trust file that stores it.

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::rpc::Rpc;
use super::verify::hash_hex;
use super::{LightError, LightOptions, REQUEST_TIMEOUT};

/// What the light client trusts: the header hash at one height of a chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustRoot {
    pub chain_id: String,
    pub height: u64,
    /// The hash of the header at `height`.
    pub hash: [u8; 32],
}

impl TrustRoot {
    /// The hash in upper-case hex.
    pub fn hash_hex(&self) -> String {
        hash_hex(&self.hash)
    }
}

/// The trust root on disk, as JSON:
/// `{"chain_id", "height", "hash" (hex), "trusting_period_secs"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustFile {
    pub chain_id: String,
    pub height: u64,
    /// Hex (either case) of the header hash at `height`.
    pub hash: String,
    pub trusting_period_secs: u64,
}

impl TrustFile {
    /// The file for `root` with `trusting_period` (whole seconds).
    pub fn new(root: &TrustRoot, trusting_period: Duration) -> Self {
        Self {
            chain_id: root.chain_id.clone(),
            height: root.height,
            hash: root.hash_hex(),
            trusting_period_secs: trusting_period.as_secs(),
        }
    }

    /// The trust root; fails on a hash that is not 32 bytes of hex.
    pub fn root(&self) -> Result<TrustRoot, LightError> {
        self.parse_root().map_err(|reason| LightError::TrustFile {
            path: "(not from a file)".into(),
            reason,
        })
    }

    fn parse_root(&self) -> Result<TrustRoot, String> {
        let bytes = hex::decode(&self.hash).map_err(|e| format!("hash {:?}: {e}", self.hash))?;
        let hash = <[u8; 32]>::try_from(bytes.as_slice())
            .map_err(|_| format!("hash {:?}: {} bytes, want 32", self.hash, bytes.len()))?;
        if self.height == 0 || self.chain_id.is_empty() {
            return Err(format!(
                "height {} / chain id {:?}",
                self.height, self.chain_id
            ));
        }
        Ok(TrustRoot {
            chain_id: self.chain_id.clone(),
            height: self.height,
            hash,
        })
    }

    /// Default options with this file's trusting period.
    pub fn options(&self) -> LightOptions {
        LightOptions::with_trusting_period(Duration::from_secs(self.trusting_period_secs))
    }

    /// Reads and checks the file at `path`.
    pub fn load(path: &Path) -> Result<Self, LightError> {
        let err = |reason: String| LightError::TrustFile {
            path: path.display().to_string(),
            reason,
        };
        let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
        let file: Self = serde_json::from_str(&text).map_err(|e| err(e.to_string()))?;
        file.parse_root().map_err(err)?;
        Ok(file)
    }

    /// Writes the file at `path` (through a temporary file and a rename).
    pub fn save(&self, path: &Path) -> Result<(), LightError> {
        let err = |reason: String| LightError::TrustFile {
            path: path.display().to_string(),
            reason,
        };
        let text = serde_json::to_string_pretty(self).map_err(|e| err(e.to_string()))?;
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, text + "\n").map_err(|e| err(e.to_string()))?;
        std::fs::rename(&tmp, path).map_err(|e| err(e.to_string()))
    }
}

/// Trust on first use: the root at `height` (the latest committed height
/// when `None`) as the node at `rpc` reports it. **Nothing is verified**:
/// only call this against a node you trust (your own, or an operator's you
/// trust), and keep the result in a [`TrustFile`].
pub async fn init_from_node(rpc: &str, height: Option<u64>) -> Result<TrustRoot, LightError> {
    let rpc = Rpc::new(rpc, REQUEST_TIMEOUT)?;
    let signed = rpc.signed_header(height).await?;
    let header = &signed.header;
    let hash = header.hash();
    let h = header.height.value();
    if signed.commit.block_id.hash != hash {
        return Err(LightError::Malformed {
            height: h,
            reason: format!(
                "commit for {} but header hashes to {hash}",
                signed.commit.block_id.hash
            ),
        });
    }
    let hash = <[u8; 32]>::try_from(hash.as_bytes()).map_err(|_| LightError::Malformed {
        height: h,
        reason: format!("header hash {hash} is not 32 bytes"),
    })?;
    Ok(TrustRoot {
        chain_id: header.chain_id.to_string(),
        height: h,
        hash,
    })
}
