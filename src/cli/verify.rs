//! `--verify` on reads, and `stave light init`: the client side of
//! verified reads (docs/verified-reads.md).

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use super::Output;
use crate::grpc::answers::{Answer, CarriesProof};
use crate::light::{init_from_node, LightClient, LightOptions, TrustFile};
use crate::proof::{verify_answer, Verified};

/// Where `stave light init` keeps the trust root by default.
pub fn default_trust_file() -> String {
    let home = std::env::var("HOME").unwrap_or_else(|_| ".".into());
    format!("{home}/.stave/trust.json")
}

/// The options of a read that can be verified.
#[derive(clap::Args, Debug, Clone)]
pub struct VerifyArgs {
    /// Trust nothing the node says: ask for proofs, verify the header at
    /// height + 1 from the trust root, check the proofs against its app
    /// hash and recompute the answer from the proven values.
    #[arg(long)]
    pub verify: bool,
    /// CometBFT RPC to fetch headers from (any node: headers are verified).
    #[arg(long, env = "STAVE_RPC", default_value = "http://127.0.0.1:26657")]
    pub rpc: String,
    /// Trust root height (with --trust-hash), instead of the trust file.
    #[arg(long, requires = "trust_hash")]
    pub trust_height: Option<u64>,
    /// Hex hash of the header at --trust-height, from a source you trust.
    #[arg(long, requires = "trust_height")]
    pub trust_hash: Option<String>,
    /// The trust file written by `stave light init`.
    #[arg(long, env = "STAVE_TRUST_FILE", default_value_t = default_trust_file())]
    pub trust_file: String,
    /// With --trust-height: how long the root stays usable. Stave has no
    /// stake to slash, so keep it short (docs/verified-reads.md).
    #[arg(long, default_value_t = DEFAULT_TRUSTING_HOURS)]
    pub trusting_period_hours: u64,
    /// Refuse a verified read whose block is older than this (a replayed
    /// answer); 0: no bound.
    #[arg(long, default_value_t = crate::proof::client::DEFAULT_MAX_AGE.as_secs())]
    pub max_age_secs: u64,
}

/// `--trusting-period-hours` by default: the light client's default.
pub const DEFAULT_TRUSTING_HOURS: u64 = crate::light::DEFAULT_TRUSTING_PERIOD.as_secs() / 3600;

/// `stave light …`.
#[derive(clap::Subcommand, Debug)]
pub enum LightCmd {
    /// Trust on first use: record the header hash at HEIGHT (default: the
    /// latest) of a node YOU TRUST as the root later `--verify` reads start from.
    Init {
        #[arg(long, env = "STAVE_RPC", default_value = "http://127.0.0.1:26657")]
        rpc: String,
        #[arg(long)]
        height: Option<u64>,
        #[arg(long, env = "STAVE_TRUST_FILE", default_value_t = default_trust_file())]
        trust_file: String,
        #[arg(long, default_value_t = DEFAULT_TRUSTING_HOURS)]
        trusting_period_hours: u64,
    },
}

fn hours(h: u64) -> Duration {
    Duration::from_secs(h.saturating_mul(3600))
}

pub async fn run_light(c: LightCmd, out: Output) -> anyhow::Result<()> {
    let LightCmd::Init {
        rpc,
        height,
        trust_file,
        trusting_period_hours,
    } = c;
    let root = init_from_node(&rpc, height).await?;
    let path = Path::new(&trust_file);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    TrustFile::new(&root, hours(trusting_period_hours)).save(path)?;
    out.print(&json!({"trust_file": trust_file, "chain_id": root.chain_id,
        "height": root.height, "hash": root.hash_hex(), "trusting_period_hours": trusting_period_hours}));
    Ok(())
}

impl VerifyArgs {
    async fn light(&self) -> anyhow::Result<LightClient> {
        let (root, opts) = match (&self.trust_height, &self.trust_hash) {
            (Some(h), Some(hash)) => {
                let want = hex::decode(hash.trim())?;
                // The node's header at h names the chain id; its hash, checked
                // against the one given, vouches for it.
                let told = init_from_node(&self.rpc, Some(*h)).await?;
                anyhow::ensure!(
                    told.hash.as_slice() == want.as_slice(),
                    "trust root: the header at {h} hashes to {}, not {hash}",
                    told.hash_hex()
                );
                let opts = LightOptions::with_trusting_period(hours(self.trusting_period_hours));
                (told, opts)
            }
            _ => {
                let f = TrustFile::load(Path::new(&self.trust_file)).map_err(|e| {
                    anyhow::anyhow!("{e} (run `stave light init` against a node you trust, or pass --trust-height and --trust-hash)")
                })?;
                (f.root()?, f.options())
            }
        };
        Ok(LightClient::new(&self.rpc, root, opts)?)
    }

    /// Verifies `answer` when `--verify` was given.
    ///
    /// # Errors
    /// "verification failed: …" when any check fails.
    pub async fn check<Q, A>(
        &self,
        req: &Q,
        answer: &A,
        f: Answer<Q, A>,
    ) -> anyhow::Result<Option<Verified>>
    where
        A: CarriesProof + Clone + PartialEq + std::fmt::Debug,
    {
        if !self.verify {
            return Ok(None);
        }
        let light = self.light().await?;
        let max_age = (self.max_age_secs > 0).then(|| Duration::from_secs(self.max_age_secs));
        let v = verify_answer(&light, req, answer, f, max_age)
            .await
            .map_err(|e| anyhow::anyhow!("verification failed: {e}"))?;
        Ok(Some(v))
    }
}

/// Adds `"verified": {…}` to a JSON answer when it was verified.
pub fn with_verified(mut v: Value, ok: Option<Verified>) -> Value {
    if let (Some(ok), Some(obj)) = (ok, v.as_object_mut()) {
        obj.insert(
            "verified".into(),
            json!({"chain_id": ok.chain_id, "height": ok.height, "app_hash": ok.app_hash,
                "block_time_ns": ok.block_time_ns, "proven_keys": ok.proven_keys}),
        );
    }
    v
}
