//! `stave init`: a home with config, node keys and a genesis fragment.

use std::path::PathBuf;

use serde_json::json;

use super::Output;
use crate::config::{Config, Home};
use crate::keyfile;

#[derive(clap::Args, Debug)]
pub struct InitArgs {
    #[arg(long, env = "STAVE_HOME")]
    pub home: PathBuf,
    #[arg(long, default_value = "stave")]
    pub moniker: String,
    /// gRPC listen address (host:port).
    #[arg(long, default_value = "127.0.0.1:9090")]
    pub grpc_addr: String,
    /// Peer listen address (host:port): the `PeerService` other validators
    /// call, and the `address` of this validator's genesis fragment. Give
    /// an IP other validators reach (its IP is also the source of this
    /// node's own peer calls).
    #[arg(long, default_value = "127.0.0.1:9092")]
    pub peer_addr: String,
    /// host:port where clients reach this node's public gRPC API: the
    /// `client_endpoint` of this validator's genesis fragment, published in
    /// its validator record. Default: `--grpc-addr` (give a reachable
    /// address when that is a wildcard such as 0.0.0.0).
    #[arg(long)]
    pub client_endpoint: Option<String>,
    /// Metrics listen address (host:port).
    #[arg(long, default_value = "127.0.0.1:9091")]
    pub metrics_addr: String,
    /// The local CometBFT's RPC.
    #[arg(long, default_value = "http://127.0.0.1:26657")]
    pub cometbft_rpc: String,
    /// ABCI listen address; default unix://<home>/abci.sock.
    #[arg(long)]
    pub abci: Option<String>,
    /// Voting power this node asks for in the genesis fragment.
    #[arg(long, default_value_t = 10)]
    pub power: u64,
}

pub fn run(a: InitArgs, out: Output) -> anyhow::Result<()> {
    let home = Home::new(&a.home);
    anyhow::ensure!(
        !home.config_file().exists(),
        "{} already exists; refusing to overwrite a home",
        home.config_file().display()
    );
    std::fs::create_dir_all(home.config_dir())?;
    for d in [
        home.chain_dir(),
        home.local_dir(),
        home.snapshots_dir(),
        home.content_dir(),
    ] {
        std::fs::create_dir_all(d)?;
    }
    let client_endpoint = a.client_endpoint.unwrap_or_else(|| a.grpc_addr.clone());
    let mut config = Config::default_for(&home, &a.moniker);
    config.grpc.listen = a.grpc_addr;
    config.peer.listen = a.peer_addr.clone();
    config.metrics.listen = a.metrics_addr;
    config.cometbft.rpc = a.cometbft_rpc;
    if let Some(abci) = a.abci {
        config.abci.listen = abci;
    }
    config.save(&home.config_file())?;
    let operator = keyfile::create_ed25519(&home.operator_key())?;
    let x25519 = keyfile::create_x25519(&home.x25519_key())?;
    crate::crypto::kek::Kek::load_or_create(&home.kek_file())?;
    let fragment = json!({
        "moniker": a.moniker,
        "operator_key": hex::encode(operator.verifying_key().to_bytes()),
        "x25519_key": hex::encode(x25519),
        "address": a.peer_addr,
        "client_endpoint": client_endpoint,
        "power": a.power,
    });
    std::fs::write(
        home.genesis_fragment(),
        serde_json::to_string_pretty(&fragment)?,
    )?;
    out.print(&json!({
        "home": home.root.display().to_string(),
        "config": home.config_file().display().to_string(),
        "operator_key": fragment["operator_key"],
        "x25519_key": fragment["x25519_key"],
        "genesis_fragment": home.genesis_fragment().display().to_string(),
    }));
    Ok(())
}
