//! `stave genesis assemble`: a complete CometBFT genesis from node homes.

use std::path::PathBuf;

use base64::Engine;
use serde_json::{json, Value};

use super::Output;
use crate::app::{AppState, GenesisAccount};
use crate::config::Home;
use crate::keyspaces::params::Params;
use crate::keyspaces::validators::{GenesisValidator, GovernanceParams};

#[derive(clap::Subcommand, Debug)]
pub enum GenesisCmd {
    /// Write genesis.json for the given nodes (`STAVE_HOME,COMETBFT_HOME` each).
    Assemble {
        #[arg(long)]
        chain_id: String,
        #[arg(long)]
        out: PathBuf,
        /// `STAVE_HOME,COMETBFT_HOME` of one validator; repeat per validator.
        #[arg(long = "node", required = true)]
        nodes: Vec<String>,
        /// Hex ed25519 public key of a genesis account; repeatable.
        #[arg(long = "account")]
        accounts: Vec<String>,
        /// JSON file of params overriding the defaults.
        #[arg(long)]
        params: Option<PathBuf>,
    },
}

fn validator_entry(
    spec: &str,
    governance: &GovernanceParams,
) -> anyhow::Result<(Value, GenesisValidator)> {
    let (stave_home, comet_home) = spec
        .split_once(',')
        .ok_or_else(|| anyhow::anyhow!("--node {spec:?}: expected STAVE_HOME,COMETBFT_HOME"))?;
    let home = Home::new(stave_home);
    let frag: Value = serde_json::from_str(&std::fs::read_to_string(home.genesis_fragment())?)?;
    let pv_path = PathBuf::from(comet_home).join("config/priv_validator_key.json");
    let pv: Value = serde_json::from_str(
        &std::fs::read_to_string(&pv_path)
            .map_err(|e| anyhow::anyhow!("reading {}: {e}", pv_path.display()))?,
    )?;
    let pub_b64 = pv["pub_key"]["value"]
        .as_str()
        .ok_or_else(|| anyhow::anyhow!("{}: no pub_key.value", pv_path.display()))?;
    let consensus = base64::engine::general_purpose::STANDARD.decode(pub_b64)?;
    let moniker = frag["moniker"].as_str().unwrap_or_default().to_string();
    let power = frag["power"].as_u64().unwrap_or(10);
    let comet = json!({
        "address": pv["address"],
        "pub_key": pv["pub_key"],
        "power": power.to_string(),
        "name": moniker,
    });
    let v = GenesisValidator {
        operator_key: frag["operator_key"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        consensus_key: hex::encode(consensus),
        x25519_key: frag["x25519_key"].as_str().unwrap_or_default().to_string(),
        address: frag["address"].as_str().unwrap_or_default().to_string(),
        power,
        moniker,
        // `stave init` writes the public gRPC listener (or --client-endpoint)
        client_endpoint: frag["client_endpoint"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    };
    v.to_record(governance)
        .map_err(|e| anyhow::anyhow!("{spec}: {e}"))?;
    Ok((comet, v))
}

pub fn run(cmd: GenesisCmd, out: Output) -> anyhow::Result<()> {
    let GenesisCmd::Assemble {
        chain_id,
        out: path,
        nodes,
        accounts,
        params,
    } = cmd;
    let params: Params = match params {
        Some(p) => serde_json::from_str(&std::fs::read_to_string(p)?)?,
        None => Params::default(),
    };
    let mut comet_validators = Vec::new();
    let mut validators = Vec::new();
    for n in &nodes {
        let (c, v) = validator_entry(n, &params.governance)?;
        comet_validators.push(c);
        validators.push(v);
    }
    let app_state = AppState {
        params,
        accounts: accounts
            .into_iter()
            .map(|pubkey| GenesisAccount { pubkey })
            .collect(),
        validators,
    };
    // Fail here, not at InitChain, on anything genesis would refuse.
    app_state.changes(0)?;
    let genesis = json!({
        "genesis_time": tendermint::Time::now().to_rfc3339(),
        "chain_id": chain_id,
        "initial_height": "1",
        "consensus_params": {
            // 4 MiB: what ProcessProposal can pre-scan cheaply (issue 19, review m3).
            // max_gas is the app's max_block_gas (InitChain refuses another).
            "block": {"max_bytes": "4194304", "max_gas": app_state.params.gas.max_block_gas.to_string()},
            "evidence": {"max_age_num_blocks": "100000", "max_age_duration": "172800000000000", "max_bytes": "1048576"},
            "validator": {"pub_key_types": ["ed25519"]},
            "version": {"app": crate::app::APP_VERSION.to_string()},
            "abci": {"vote_extensions_enable_height": "0"}
        },
        "validators": comet_validators,
        "app_hash": "",
        "app_state": serde_json::to_value(&app_state)?,
    });
    std::fs::write(&path, serde_json::to_string_pretty(&genesis)?)?;
    out.print(&json!({"genesis": path.display().to_string(), "validators": nodes.len(), "chain_id": genesis["chain_id"]}));
    Ok(())
}
