//! `stave tx validator …` and `stave query validator(s)|validator-set`:
//! validator governance from a node operator's home. Txs are signed with the
//! home's operator key; `apply` also proves possession of the CometBFT
//! consensus key in `--comet-home`; `endpoints` replaces the published peer
//! address and client endpoint, keeping the record's value of any flag left
//! out.

use std::path::{Path, PathBuf};

use anyhow::Context;
use base64::Engine;
use ed25519_dalek::{Signer, SigningKey};
use serde_json::{json, Value};

use super::tx::{submit_as, TxOpts};
use super::Output;
use crate::client::StaveClient;
use crate::config::Home;
use crate::keyspaces::validators::{
    pop_message, ApplyValidator, LeaveValidator, RotateConsensusKey, RotateX25519Key,
    UpdateValidatorEndpoints, VoteValidator,
};
use crate::proto::governance as pb;
use crate::proto::query::StatusRequest;
use crate::tx::Action;

const DEFAULT_NODE: &str = "http://127.0.0.1:9090";

#[derive(clap::Args, Debug, Clone)]
pub struct OperatorOpts {
    /// The Stave home whose operator key signs.
    #[arg(long, env = "STAVE_HOME")]
    pub home: PathBuf,
    /// The node's gRPC endpoint.
    #[arg(long, default_value = DEFAULT_NODE)]
    pub node: String,
    /// Return after CheckTx instead of waiting for the commit.
    #[arg(long)]
    pub no_wait: bool,
}

#[derive(clap::Subcommand, Debug)]
pub enum ValidatorTx {
    /// Apply to become a validator (CANDIDATE until elected).
    Apply {
        /// The CometBFT home whose priv_validator_key.json is the consensus key.
        #[arg(long)]
        comet_home: PathBuf,
        /// host:port of this node's peer gRPC service.
        #[arg(long)]
        address: String,
        /// ISO 3166-1 alpha-2 code; repeat for several.
        #[arg(long = "jurisdiction", required = true)]
        jurisdictions: Vec<String>,
        #[arg(long, default_value = "")]
        identity: String,
        /// host:port where clients reach this node's public gRPC API
        /// (published in the record; empty: none).
        #[arg(long, default_value = "")]
        client_endpoint: String,
        #[command(flatten)]
        opts: OperatorOpts,
    },
    /// Vote in the election about SUBJECT (hex operator key).
    Vote {
        subject: String,
        /// Vote on removing SUBJECT instead of admitting it.
        #[arg(long)]
        remove: bool,
        /// Vote against.
        #[arg(long)]
        reject: bool,
        #[command(flatten)]
        opts: OperatorOpts,
    },
    /// Leave: ACTIVE → UNBONDING → REMOVED; a CANDIDATE withdraws.
    Leave {
        #[command(flatten)]
        opts: OperatorOpts,
    },
    /// Replace this validator's published endpoints (UpdateValidatorEndpoints).
    /// A flag left out keeps the record's current value.
    Endpoints {
        /// host:port of this node's peer gRPC service.
        #[arg(long)]
        address: Option<String>,
        /// host:port of this node's public gRPC API; "" withdraws it.
        #[arg(long)]
        client_endpoint: Option<String>,
        #[command(flatten)]
        opts: OperatorOpts,
    },
    /// Replace this validator's CometBFT consensus key (RotateConsensusKey)
    /// with the key in NEW_COMET_HOME/config/priv_validator_key.json (from
    /// `cometbft init --home NEW_COMET_HOME`). Once `stave query validator`
    /// shows comet_power equal to power, stop CometBFT, keep the old key
    /// file, install the new one in its place, and start it. Refused
    /// (CONFLICT) for a validator with 1/3 of the power or more.
    RotateConsensusKey {
        #[arg(long)]
        new_comet_home: PathBuf,
        #[command(flatten)]
        opts: OperatorOpts,
    },
    /// Replace this validator's X25519 key (RotateX25519Key) with a new key
    /// written to HOME/config/x25519_key.next.json (kept if there from an
    /// earlier try). Once the tx commits, the running node re-wraps every
    /// DEK it holds to the new key, then renames the file over
    /// x25519_key.json, deleting the old key file.
    RotateX25519Key {
        #[command(flatten)]
        opts: OperatorOpts,
    },
    /// Hand this validator's signing to a new operator key
    /// (RotateOperatorKey), written to HOME/config/operator_key.next.json
    /// (kept if there from an earlier try). Once the tx commits, the old key
    /// file becomes operator_key.retired.json and the new one
    /// operator_key.json: restart the node then, since the key it runs with
    /// is refused from the next block. The validator keeps its name. Run
    /// again after an interrupted try: a rotation that committed meanwhile
    /// only has its key files swapped.
    RotateOperatorKey {
        #[command(flatten)]
        opts: OperatorOpts,
    },
    /// Vote for the coordinated upgrade NAME (ScheduleUpgrade): at --height
    /// every node runs migration NAME, or stops until it runs a binary that
    /// knows it. The first vote proposes; every vote names the same plan.
    Upgrade {
        name: String,
        /// The first height run under the new version.
        #[arg(long)]
        height: u64,
        #[arg(long)]
        app_version: u64,
        #[command(flatten)]
        opts: OperatorOpts,
    },
}

/// The ed25519 key of a CometBFT `priv_validator_key.json`.
pub fn comet_consensus_key(comet_home: &Path) -> anyhow::Result<SigningKey> {
    let path = comet_home.join("config/priv_validator_key.json");
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let v: Value =
        serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
    let b64 = v["priv_key"]["value"]
        .as_str()
        .with_context(|| format!("{}: no priv_key.value", path.display()))?;
    let raw = base64::engine::general_purpose::STANDARD.decode(b64)?;
    anyhow::ensure!(
        raw.len() == 64,
        "{}: priv_key is {} bytes, expected 64",
        path.display(),
        raw.len()
    );
    let mut seed = [0u8; 32];
    seed.copy_from_slice(&raw[..32]);
    Ok(SigningKey::from_bytes(&seed))
}

fn hex32(s: &str) -> anyhow::Result<[u8; 32]> {
    let v = hex::decode(s).with_context(|| format!("{s:?} is not hex"))?;
    <[u8; 32]>::try_from(v.as_slice()).map_err(|_| anyhow::anyhow!("{s:?} is not 32 bytes"))
}

fn tx_opts(o: &OperatorOpts) -> TxOpts {
    TxOpts {
        from: String::new(),
        node: o.node.clone(),
        keyring_dir: String::new(),
        no_wait: o.no_wait,
        nonce: None,
        memo: String::new(),
        hex: false,
        gas: None,
        gas_adjustment: super::tx::DEFAULT_GAS_ADJUSTMENT,
    }
}

pub async fn run_tx(cmd: ValidatorTx, out: Output) -> anyhow::Result<()> {
    let (action, opts) = match cmd {
        ValidatorTx::Apply {
            comet_home,
            address,
            jurisdictions,
            identity,
            client_endpoint,
            opts,
        } => {
            let action = apply_action(
                &opts,
                &comet_home,
                address,
                jurisdictions,
                identity,
                client_endpoint,
            );
            (action.await?, opts)
        }
        ValidatorTx::Vote {
            subject,
            remove,
            reject,
            opts,
        } => {
            let kind = if remove {
                pb::ElectionKind::Remove
            } else {
                pb::ElectionKind::Admit
            };
            let v = VoteValidator {
                subject: hex32(&subject)?,
                kind,
                approve: !reject,
            };
            (Action::VoteValidator(v), opts)
        }
        ValidatorTx::Leave { opts } => (Action::LeaveValidator(LeaveValidator), opts),
        ValidatorTx::RotateConsensusKey {
            new_comet_home,
            opts,
        } => (rotate_action(&opts, &new_comet_home).await?, opts),
        ValidatorTx::RotateX25519Key { opts } => (next_x25519_action(&opts)?, opts),
        ValidatorTx::RotateOperatorKey { opts } => return rotate_operator_key(&opts, out).await,
        ValidatorTx::Upgrade {
            name,
            height,
            app_version,
            opts,
        } => (
            Action::ScheduleUpgrade(crate::keyspaces::upgrades::ScheduleUpgrade {
                name,
                height,
                app_version,
            }),
            opts,
        ),
        ValidatorTx::Endpoints {
            address,
            client_endpoint,
            opts,
        } => (
            endpoints_action(&opts, address, client_endpoint).await?,
            opts,
        ),
    };
    let home = Home::new(opts.home.clone());
    let key = crate::keyfile::load_ed25519(&home.operator_key())?;
    submit_as(&key, vec![action], &tx_opts(&opts), out).await
}

/// Whom `key` signs for, as the node says: `(name, retired)`.
async fn acting_of(node: &str, key: &[u8; 32]) -> anyhow::Result<([u8; 32], bool)> {
    let a = StaveClient::connect(node)
        .await?
        .query
        .account(crate::proto::query::AccountRequest {
            pubkey: key.to_vec(),
            ..Default::default()
        })
        .await?
        .into_inner();
    let name = <[u8; 32]>::try_from(a.acts_as.as_slice()).unwrap_or(*key);
    Ok((name, a.retired))
}

/// The home's operator key and the validator it signs for: the key
/// itself, or the name a `RotateOperatorKey` gave it, as the node says.
async fn home_operator(opts: &OperatorOpts) -> anyhow::Result<(SigningKey, [u8; 32])> {
    let home = Home::new(opts.home.clone());
    let operator = crate::keyfile::load_ed25519(&home.operator_key())?;
    let key = operator.verifying_key().to_bytes();
    let (name, retired) = acting_of(&opts.node, &key).await?;
    anyhow::ensure!(
        !retired,
        "the home's operator key {} was rotated away; install the key that replaced it",
        hex::encode(key)
    );
    Ok((operator, name))
}

/// `stave tx validator rotate-operator-key`: the new key (created, or kept
/// from an earlier try) proves possession over the chain id and the
/// validator's name; the tx is signed by the current key and, once
/// committed, the home's key files are swapped.
async fn rotate_operator_key(opts: &OperatorOpts, out: Output) -> anyhow::Result<()> {
    anyhow::ensure!(
        !opts.no_wait,
        "--no-wait: the key files are swapped only once the rotation commits"
    );
    let home = Home::new(opts.home.clone());
    let next_path = home.operator_next_key();
    if next_path.exists() {
        // an earlier try's rotation may have committed unseen, or the key
        // files' swap been cut short: then only the swap is left to do
        let next = crate::keyfile::load_ed25519(&next_path)?;
        let key = next.verifying_key().to_bytes();
        if acting_of(&opts.node, &key).await?.0 != key {
            eprintln!(
                "the rotation to {} committed earlier: installing its key",
                hex::encode(key)
            );
            return install_next_operator_key(&home);
        }
    }
    let (current, name) = home_operator(opts).await?;
    let next = match next_path.exists() {
        true => crate::keyfile::load_ed25519(&next_path)?,
        false => crate::keyfile::create_ed25519(&next_path)?,
    };
    let new_key = next.verifying_key().to_bytes();
    let chain_id = chain_id_of(&opts.node).await?;
    let m =
        crate::keyspaces::validators::signing::operator_key_pop_message(&chain_id, &name, &new_key);
    let action = Action::RotateOperatorKey(crate::keyspaces::validators::RotateOperatorKey {
        operator_key: new_key,
        operator_key_signature: next.sign(&m).to_bytes(),
    });
    submit_as(&current, vec![action], &tx_opts(opts), out).await?;
    install_next_operator_key(&home)
}

/// Keeps the retired key as `operator_key.retired.json` and moves the new
/// one into place, each by rename, then syncs the directory.
fn install_next_operator_key(home: &Home) -> anyhow::Result<()> {
    let (live, next) = (home.operator_key(), home.operator_next_key());
    // absent when an earlier swap stopped between the two renames
    if live.exists() {
        std::fs::rename(&live, home.operator_retired_key())
            .with_context(|| format!("keeping the retired key {}", live.display()))?;
    }
    std::fs::rename(&next, &live)
        .with_context(|| format!("installing {} as {}", next.display(), live.display()))?;
    crate::keyfile::sync_dir(&live)?;
    eprintln!(
        "operator key rotated: {} now holds the new key; restart the node to sign with it",
        live.display()
    );
    Ok(())
}

/// `RotateConsensusKey` to the key of `new_comet_home`, with its proof of
/// possession over the node's chain id and this validator's name.
async fn rotate_action(opts: &OperatorOpts, new_comet_home: &Path) -> anyhow::Result<Action> {
    let (_, name) = home_operator(opts).await?;
    let consensus = comet_consensus_key(new_comet_home)?;
    let chain_id = chain_id_of(&opts.node).await?;
    let pop = consensus.sign(&pop_message(&chain_id, &name));
    Ok(Action::RotateConsensusKey(RotateConsensusKey {
        consensus_key: consensus.verifying_key().to_bytes(),
        consensus_key_signature: pop.to_bytes(),
    }))
}

/// `RotateX25519Key` to the next key of the home, created when missing.
fn next_x25519_action(opts: &OperatorOpts) -> anyhow::Result<Action> {
    let next = Home::new(opts.home.clone()).x25519_next_key();
    let public = match next.exists() {
        true => x25519_dalek::PublicKey::from(&crate::keyfile::load_x25519(&next)?).to_bytes(),
        false => crate::keyfile::create_x25519(&next)?,
    };
    Ok(Action::RotateX25519Key(RotateX25519Key {
        x25519_key: public.to_vec(),
    }))
}

async fn chain_id_of(node: &str) -> anyhow::Result<String> {
    let mut client = StaveClient::connect(node).await?;
    Ok(client
        .query
        .status(StatusRequest {})
        .await?
        .into_inner()
        .chain_id)
}

async fn apply_action(
    opts: &OperatorOpts,
    comet_home: &Path,
    address: String,
    jurisdictions: Vec<String>,
    identity: String,
    client_endpoint: String,
) -> anyhow::Result<Action> {
    let home = Home::new(opts.home.clone());
    let (_, name) = home_operator(opts).await?;
    let x25519 = crate::keyfile::load_x25519(&home.x25519_key())?;
    let consensus = comet_consensus_key(comet_home)?;
    let chain_id = chain_id_of(&opts.node).await?;
    let pop = consensus.sign(&pop_message(&chain_id, &name));
    Ok(Action::ApplyValidator(ApplyValidator {
        consensus_key: consensus.verifying_key().to_bytes(),
        consensus_key_signature: pop.to_bytes(),
        x25519_key: x25519_dalek::PublicKey::from(&x25519).as_bytes().to_vec(),
        address,
        jurisdictions,
        identity,
        client_endpoint,
    }))
}

/// `UpdateValidatorEndpoints` with the given values, the record's current
/// ones filling in any left out.
async fn endpoints_action(
    opts: &OperatorOpts,
    address: Option<String>,
    client_endpoint: Option<String>,
) -> anyhow::Result<Action> {
    anyhow::ensure!(
        address.is_some() || client_endpoint.is_some(),
        "give --address, --client-endpoint or both"
    );
    let (address, client_endpoint) = match (address, client_endpoint) {
        (Some(a), Some(c)) => (a, c),
        (a, c) => {
            let (_, op) = home_operator(opts).await?;
            let mut client = StaveClient::connect(&opts.node).await?;
            let r = client
                .governance
                .validator(pb::ValidatorRequest {
                    operator_key: op.to_vec(),
                    ..Default::default()
                })
                .await?
                .into_inner();
            let current = r
                .validator
                .and_then(|v| v.record)
                .and_then(|r| r.validator)
                .filter(|_| r.found)
                .ok_or_else(|| anyhow::anyhow!("no validator record for {}", hex::encode(op)))?;
            (
                a.unwrap_or(current.address),
                c.unwrap_or(current.client_endpoint),
            )
        }
    };
    Ok(Action::UpdateValidatorEndpoints(UpdateValidatorEndpoints {
        address,
        client_endpoint,
    }))
}

#[derive(clap::Subcommand, Debug)]
pub enum GovernanceQuery {
    /// One validator (hex operator key) with its pending effect.
    Validator {
        operator: String,
        #[arg(long, default_value = DEFAULT_NODE)]
        node: String,
    },
    /// Every validator record.
    Validators {
        #[arg(long, default_value = DEFAULT_NODE)]
        node: String,
    },
    /// CometBFT's set as Stave's updates made it, and the queued updates.
    ValidatorSet {
        #[arg(long, default_value = DEFAULT_NODE)]
        node: String,
    },
    /// The app version, the scheduled upgrade, proposals and applied migrations.
    Upgrades {
        #[arg(long, default_value = DEFAULT_NODE)]
        node: String,
    },
}

fn view_json(v: &pb::ValidatorView) -> Value {
    let r = v.record.clone().unwrap_or_default();
    let k = r.validator.clone().unwrap_or_default();
    let op = <[u8; 32]>::try_from(k.operator_key.as_slice()).unwrap_or_default();
    let signing = crate::keyspaces::validators::signing::signing_key(&op, &r);
    let g = r.governance.unwrap_or_default();
    let e = g.election.unwrap_or_default();
    json!({
        "operator_key": hex::encode(&k.operator_key),
        "signing_key": hex::encode(signing),
        "consensus_key": hex::encode(k.consensus_key),
        "retiring_consensus_key": hex::encode(&g.retiring_consensus_key),
        "x25519_key": hex::encode(&k.x25519_key),
        "status": v.status,
        "power": k.power,
        "address": k.address,
        "client_endpoint": k.client_endpoint,
        "jurisdictions": g.jurisdictions,
        "identity": g.identity,
        "admitted_height": r.admitted_height,
        "unbonding_until": g.unbonding_until,
        "election": { "kind": crate::keyspaces::validators::election::kind_name(e.kind),
            "round": e.round, "status": crate::keyspaces::validators::election::status_name(e.status),
            "votes": e.votes.len() },
        "comet_power": v.comet_power,
        "comet_effective_height": v.comet_effective_height,
        "queued_powers": v.queued_powers,
    })
}

pub async fn run_query(q: GovernanceQuery, out: Output) -> anyhow::Result<()> {
    let node = match &q {
        GovernanceQuery::Validator { node, .. }
        | GovernanceQuery::Validators { node }
        | GovernanceQuery::ValidatorSet { node }
        | GovernanceQuery::Upgrades { node } => node.clone(),
    };
    let mut c = StaveClient::connect(&node).await?;
    let v = match q {
        GovernanceQuery::Validator { operator, .. } => {
            let r = c
                .governance
                .validator(pb::ValidatorRequest {
                    operator_key: hex32(&operator)?.to_vec(),
                    ..Default::default()
                })
                .await?
                .into_inner();
            anyhow::ensure!(r.found, "no validator {operator}");
            json!({ "height": r.height, "validator": r.validator.as_ref().map(view_json) })
        }
        GovernanceQuery::Validators { .. } => {
            let r = c
                .governance
                .validators(pb::ValidatorsRequest::default())
                .await?
                .into_inner();
            json!({ "height": r.height, "validators": r.validators.iter().map(view_json).collect::<Vec<_>>() })
        }
        GovernanceQuery::Upgrades { .. } => {
            let r = c
                .governance
                .upgrades(pb::UpgradesRequest {})
                .await?
                .into_inner();
            upgrades_json(&r)
        }
        GovernanceQuery::ValidatorSet { .. } => {
            let r = c
                .governance
                .validator_set(pb::ValidatorSetRequest {})
                .await?
                .into_inner();
            let set = r.set.unwrap_or_default();
            let queue = r.queue.unwrap_or_default();
            let t = r.totals.unwrap_or_default();
            json!({
                "height": r.height,
                "set": set.members.iter().map(|m| json!({"consensus_key": hex::encode(&m.consensus_key), "power": m.power, "effective_height": m.effective_height})).collect::<Vec<_>>(),
                "queue": queue.updates.iter().map(|u| json!({"consensus_key": hex::encode(&u.consensus_key), "power": u.power, "queued_at": u.queued_at})).collect::<Vec<_>>(),
                "active_power": t.active_power, "active_count": t.active_count, "records": t.records,
            })
        }
    };
    out.print(&v);
    Ok(())
}

fn proposal_json(p: &pb::UpgradeProposal) -> Value {
    let e = p.election.clone().unwrap_or_default();
    json!({
        "name": p.name, "height": p.height, "app_version": p.app_version,
        "election": { "round": e.round, "opened_at": e.opened_at,
            "status": crate::keyspaces::validators::election::status_name(e.status),
            "votes": e.votes.iter().map(|v| hex::encode(&v.voter)).collect::<Vec<_>>() },
    })
}

fn upgrades_json(r: &pb::UpgradesResponse) -> Value {
    json!({
        "height": r.height,
        "app_version": r.app_version,
        "scheduled": r.scheduled.as_ref().map(proposal_json),
        "proposals": r.proposals.iter().map(proposal_json).collect::<Vec<_>>(),
        "applied": r.applied.iter().map(|a| json!({"name": a.name, "height": a.height, "app_version": a.app_version})).collect::<Vec<_>>(),
    })
}
