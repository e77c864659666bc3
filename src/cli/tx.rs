//! `stave tx …`: build, sign and submit txs over gRPC, filling in the
//! chain id and the nonce from the node.

use serde_json::json;

use super::{keys, Output};
use crate::client::StaveClient;
use crate::keyspaces::kv::{KvDelete, KvSet};
use crate::proto::query::{AccountRequest, StatusRequest};
use crate::proto::tx::{BroadcastAndWaitRequest, BroadcastRequest, SimulateRequest};
use crate::tx::{build::sign_tx_with_gas, Action};

/// What `--gas-adjustment` multiplies the simulated gas by, unless given.
pub const DEFAULT_GAS_ADJUSTMENT: f64 = 1.3;

#[derive(clap::Args, Debug, Clone)]
pub struct TxOpts {
    /// Key name in the keyring.
    #[arg(long)]
    pub from: String,
    /// The node's gRPC endpoint.
    #[arg(long, default_value = "http://127.0.0.1:9090")]
    pub node: String,
    #[arg(long, env = "STAVE_KEYRING", default_value_t = keys::default_keyring())]
    pub keyring_dir: String,
    /// Return after CheckTx instead of waiting for the commit.
    #[arg(long)]
    pub no_wait: bool,
    /// Override the nonce (default: the account's next nonce).
    #[arg(long)]
    pub nonce: Option<u64>,
    #[arg(long, default_value = "")]
    pub memo: String,
    /// Treat KEY and VALUE as hex.
    #[arg(long)]
    pub hex: bool,
    /// The tx's gas limit. Default: simulate the tx on the node
    /// (`TxService.Simulate`) and declare its gas times `--gas-adjustment`.
    #[arg(long)]
    pub gas: Option<u64>,
    /// Multiplies the simulated gas when `--gas` is not given.
    #[arg(long, default_value_t = DEFAULT_GAS_ADJUSTMENT)]
    pub gas_adjustment: f64,
}

impl TxOpts {
    /// The gas limit to declare: `--gas`, or the simulated gas of the same
    /// tx times `--gas-adjustment`, capped at the block gas limit.
    async fn gas_limit(
        &self,
        client: &mut StaveClient,
        unsigned: impl Fn(u64) -> Vec<u8>,
    ) -> anyhow::Result<u64> {
        if let Some(g) = self.gas {
            return Ok(g);
        }
        anyhow::ensure!(
            self.gas_adjustment.is_finite() && self.gas_adjustment >= 1.0,
            "--gas-adjustment must be a number >= 1, got {}",
            self.gas_adjustment
        );
        let sim = client
            .tx
            // The largest limit encodes longest, so the tx simulated is never
            // shorter (and never cheaper in bytes) than the one signed.
            .simulate(SimulateRequest {
                tx: unsigned(u64::MAX),
            })
            .await?
            .into_inner();
        anyhow::ensure!(
            sim.code == 0,
            "simulation failed with code {} ({}): {}",
            sim.code,
            crate::tx::Code::from_value(sim.code).map_or("UNKNOWN", |c| c.name()),
            sim.log
        );
        let wanted = (sim.gas_used as f64 * self.gas_adjustment).ceil() as u64;
        Ok(wanted.min(sim.max_block_gas))
    }
}

#[derive(clap::Subcommand, Debug)]
pub enum TxCmd {
    /// kv actions.
    #[command(subcommand)]
    Kv(KvTx),
    /// Validator governance, signed with a node home's operator key.
    #[command(subcommand)]
    Validator(super::governance::ValidatorTx),
    /// Casbin models and rules.
    #[command(subcommand)]
    Casbin(super::casbin::CasbinTx),
    /// Content and rights actions.
    #[command(subcommand)]
    Rights(Box<super::rights::RightsTx>),
    /// kvdb operations on the signer's databases.
    Kvdb(super::kv::KvdbTx),
    /// Publisher groups: apply, vote, rotate authorities, members.
    #[command(subcommand)]
    Group(super::governance_tx::GroupTx),
    /// Takedowns: request, counter-notice, resolve by vote.
    #[command(subcommand)]
    Takedown(super::governance_tx::TakedownTx),
    /// Jurisdiction flags: set, clear.
    #[command(subcommand)]
    Flag(super::governance_tx::FlagTx),
    /// Sponsor an account: set what the signer's pool (its validator's,
    /// or `--group`'s) moves to ACCOUNT's storage quota, in bytes.
    Sponsor {
        /// Key name or 64-character hex public key of the account.
        account: String,
        /// The sponsorship's new size; a decrease returns only unused quota.
        amount: u64,
        /// Sponsor from this ACTIVE group's pool (the signer is one of its
        /// takedown authorities) instead of the signer's validator pool.
        #[arg(long, default_value = "")]
        group: String,
        #[command(flatten)]
        opts: TxOpts,
    },
}

#[derive(clap::Subcommand, Debug)]
pub enum KvTx {
    /// Set KEY to VALUE under the signer.
    Set {
        key: String,
        value: String,
        #[command(flatten)]
        opts: TxOpts,
    },
    /// Delete KEY of the signer.
    Delete {
        key: String,
        #[command(flatten)]
        opts: TxOpts,
    },
    /// KV tokens: create, update, delete.
    #[command(subcommand)]
    Token(super::kv::TokenTx),
}

/// Decodes a CLI argument as hex or UTF-8.
pub fn arg_bytes(s: &str, hex_mode: bool) -> anyhow::Result<Vec<u8>> {
    if hex_mode {
        hex::decode(s).map_err(|e| anyhow::anyhow!("{s:?} is not hex: {e}"))
    } else {
        Ok(s.as_bytes().to_vec())
    }
}

use super::governance_tx::{run as gov, GovTx};

pub async fn run(cmd: TxCmd, out: Output) -> anyhow::Result<()> {
    let (action, opts) = match cmd {
        TxCmd::Validator(v) => return super::governance::run_tx(v, out).await,
        TxCmd::Casbin(c) => return super::casbin::run_tx(c, out).await,
        TxCmd::Rights(r) => return super::rights::run_tx(*r, out).await,
        TxCmd::Kv(KvTx::Set { key, value, opts }) => (
            Action::KvSet(KvSet {
                key: arg_bytes(&key, opts.hex)?,
                value: arg_bytes(&value, opts.hex)?,
            }),
            opts,
        ),
        TxCmd::Kv(KvTx::Delete { key, opts }) => (
            Action::KvDelete(KvDelete {
                key: arg_bytes(&key, opts.hex)?,
            }),
            opts,
        ),
        TxCmd::Kv(KvTx::Token(t)) => return super::kv::run_token(t, out).await,
        TxCmd::Kvdb(k) => return super::kv::run_kvdb(k, out).await,
        TxCmd::Group(g) => return gov(GovTx::Group(g), out).await,
        TxCmd::Takedown(t) => return gov(GovTx::Takedown(t), out).await,
        TxCmd::Flag(f) => return gov(GovTx::Flag(f), out).await,
        TxCmd::Sponsor {
            account,
            amount,
            group,
            opts,
        } => (
            Action::SetAccountQuota(crate::keyspaces::accounts::SetAccountQuota {
                account: super::query::resolve_pubkey(&account, &opts.keyring_dir)?,
                amount,
                group_id: group,
            }),
            opts,
        ),
    };
    submit(vec![action], &opts, out).await
}

/// Signs `actions` with `--from` and submits them.
pub async fn submit(actions: Vec<Action>, opts: &TxOpts, out: Output) -> anyhow::Result<()> {
    let key = keys::load(&opts.keyring_dir, &opts.from)?;
    submit_as(&key, actions, opts, out).await
}

/// Signs `actions` with `key` (ignoring `--from`) and submits them.
pub async fn submit_as(
    key: &ed25519_dalek::SigningKey,
    actions: Vec<Action>,
    opts: &TxOpts,
    out: Output,
) -> anyhow::Result<()> {
    let mut client = StaveClient::connect(&opts.node).await?;
    let status = client.query.status(StatusRequest {}).await?.into_inner();
    let pubkey = key.verifying_key().to_bytes().to_vec();
    let account = client
        .query
        .account(AccountRequest {
            pubkey,
            ..Default::default()
        })
        .await?
        .into_inner();
    // The node's mempool may hold this key's earlier txs, not yet committed.
    let nonce = opts.nonce.unwrap_or(account.next_nonce.max(account.nonce));
    let sign = |gas: u64| {
        sign_tx_with_gas(
            key,
            &status.chain_id,
            nonce,
            actions.clone(),
            &opts.memo,
            gas,
        )
    };
    let gas = opts.gas_limit(&mut client, sign).await?;
    let raw = prove_work(sign(gas), &status, account.quota)?;
    let result = if opts.no_wait {
        let r = client
            .tx
            .broadcast(BroadcastRequest { tx: raw })
            .await?
            .into_inner();
        json!({"tx_id": r.tx_id, "tx_hash": r.tx_hash, "check_code": r.code, "check_log": r.log, "nonce": nonce, "gas_wanted": gas})
    } else {
        let r = client
            .tx
            .broadcast_and_wait(BroadcastAndWaitRequest {
                tx: raw,
                timeout_ms: 0,
            })
            .await?
            .into_inner();
        let c = r.check.unwrap_or_default();
        json!({
            "tx_id": c.tx_id, "tx_hash": c.tx_hash, "nonce": nonce,
            "check_code": c.code, "check_log": c.log,
            "committed": r.committed, "height": r.height, "code": r.code, "log": r.log,
            "gas_wanted": gas, "gas_used": r.gas_used,
        })
    };
    out.print(&result);
    let failed = result["check_code"].as_u64() != Some(0)
        || result.get("code").and_then(|c| c.as_u64()).unwrap_or(0) != 0
        || (!opts.no_wait && result["committed"] != json!(true));
    anyhow::ensure!(!failed, "transaction was not applied");
    Ok(())
}

/// `raw` with proof of work when the signer holds no sponsored quota (an
/// ACTIVE validator operator needs none, but the work is harmless).
fn prove_work(
    raw: Vec<u8>,
    status: &crate::proto::query::StatusResponse,
    quota: u64,
) -> anyhow::Result<Vec<u8>> {
    if quota > 0 {
        return Ok(raw);
    }
    let storage = crate::keyspaces::accounts::StorageParams {
        pow_base: status.pow_base,
        pow_retention: status.pow_retention,
        ..Default::default()
    };
    use crate::tx::build::{with_pow, MAX_POW_TRIES};
    with_pow(&raw, &storage, MAX_POW_TRIES)
        .ok_or_else(|| anyhow::anyhow!("no proof of work found in {MAX_POW_TRIES} tries"))
}
