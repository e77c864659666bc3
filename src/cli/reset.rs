//! `stave reset`: wipes the chain store and the local store together (and
//! snapshots), keeping keys and config. Never one store without the other.

use std::path::PathBuf;

use serde_json::json;

use super::Output;
use crate::config::Home;

#[derive(clap::Args, Debug)]
pub struct ResetArgs {
    #[arg(long, env = "STAVE_HOME")]
    pub home: PathBuf,
}

pub fn run(a: ResetArgs, out: Output) -> anyhow::Result<()> {
    let home = Home::new(&a.home);
    anyhow::ensure!(
        home.config_file().exists(),
        "{} is not a Stave home (no config/stave.toml)",
        home.root.display()
    );
    let mut removed = Vec::new();
    for dir in [home.chain_dir(), home.local_dir(), home.snapshots_dir()] {
        if dir.exists() {
            std::fs::remove_dir_all(&dir)?;
            removed.push(dir.display().to_string());
        }
        std::fs::create_dir_all(&dir)?;
    }
    out.print(&json!({
        "reset": removed,
        "kept": ["config", "keys", "content"],
        "note": "start the new chain under a new chain_id: every old signed tx names the old one",
    }));
    Ok(())
}
