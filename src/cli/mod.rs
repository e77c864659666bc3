//! The command line: `init`, `start`, `reset`, `backup`, `restore`, `genesis`, `keys`, `tx`,
//! `query`, `content` and `loadtest`. Output is human-readable by default;
//! `--output json` prints JSON.

mod backup;
mod casbin;
mod content;
mod fetch;
mod genesis;
mod governance;
mod governance_tx;
mod groups;
mod init;
mod keys;
mod kv;
pub mod loadtest;
mod local;
mod local_db;
mod local_kv;
mod output;
mod query;
pub mod release;
mod reset;
mod rights;
mod rights_query;
mod script;
mod transcode_worker;
mod tx;
mod verify;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub use output::Output;

#[derive(Parser, Debug)]
#[command(
    name = "stave",
    version,
    about = "Stave: a content-rights validator node beside CometBFT v0.38"
)]
pub struct Cli {
    /// Output format.
    #[arg(long, global = true, value_enum, default_value = "text")]
    pub output: Output,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Create a home directory: config, node keys and a genesis fragment.
    Init(init::InitArgs),
    /// Run the node: ABCI server, gRPC API, metrics, the local store worker.
    Start {
        #[arg(long, env = "STAVE_HOME")]
        home: PathBuf,
    },
    /// Wipe the chain store and the local store together, keeping keys and config.
    Reset(reset::ResetArgs),
    /// Back up config and keys (the KEK sealed under a passphrase), and optionally the local store.
    Backup(backup::BackupArgs),
    /// Restore a backup into an empty home, for a named chain.
    Restore(backup::RestoreArgs),
    /// Build a CometBFT genesis from node homes.
    #[command(subcommand)]
    Genesis(genesis::GenesisCmd),
    /// Manage client keys.
    #[command(subcommand)]
    Keys(keys::KeysCmd),
    /// Sign and submit transactions over gRPC.
    #[command(subcommand)]
    Tx(tx::TxCmd),
    /// Read state over gRPC (`--verify`: check it against verified headers).
    #[command(subcommand)]
    Query(query::QueryCmd),
    /// The light client's trust root for `--verify` reads.
    #[command(subcommand)]
    Light(verify::LightCmd),
    /// The node's own data over the admin socket: `stave local kv|db ...`.
    #[command(subcommand)]
    Local(local_kv::LocalCmd),
    /// Upload audio to a validator and follow upload jobs.
    #[command(subcommand)]
    Content(content::ContentCmd),
    /// DDEX ERN 4.3 releases: import a NewReleaseMessage and publish it.
    #[command(subcommand)]
    Release(release::ReleaseCmd),
    /// The script engine on this machine: `stave script run FILE`, a dry
    /// run that prints a call's result and fuel.
    #[command(subcommand)]
    Script(script::ScriptCmd),
    /// Send signed txs at a fixed rate and measure commit latency.
    Loadtest(loadtest::LoadtestArgs),
    /// Transcode one audio file to FLAC under resource limits (the child
    /// process the upload pipeline starts; not for direct use).
    #[command(hide = true)]
    TranscodeWorker(transcode_worker::TranscodeWorkerArgs),
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    // The worker lowers its own limits first: no runtime, no tracing.
    if let Command::TranscodeWorker(a) = &cli.command {
        return transcode_worker::run(a);
    }
    init_tracing(&cli.command);
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("stave: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match rt.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let msg = format!("{e:#}");
            if let Some(note) = crate::abci::consensus::disk_full_note(&msg) {
                eprintln!("stave: {note}");
            }
            eprintln!("stave: error: {msg}");
            ExitCode::FAILURE
        }
    }
}

fn init_tracing(cmd: &Command) {
    let default = match cmd {
        Command::Start { .. } => "info",
        _ => "warn",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    let out = cli.output;
    match cli.command {
        Command::Init(a) => init::run(a, out),
        Command::Start { home } => crate::node::run(&crate::config::Home::new(home)).await,
        Command::Reset(a) => reset::run(a, out),
        Command::Backup(a) => backup::backup(a, out),
        Command::Restore(a) => backup::restore(a, out),
        Command::Genesis(c) => genesis::run(c, out),
        Command::Keys(c) => keys::run(c, out),
        Command::Tx(c) => tx::run(c, out).await,
        Command::Query(c) => query::run(c, out).await,
        Command::Light(c) => verify::run_light(c, out).await,
        Command::Local(c) => local_kv::run(c, out).await,
        Command::Content(c) => content::run(c, out).await,
        Command::Release(c) => release::run(c, out).await,
        Command::Script(c) => script::run(c, out),
        Command::Loadtest(a) => loadtest::run(a, out).await,
        Command::TranscodeWorker(_) => Ok(()),
    }
}
