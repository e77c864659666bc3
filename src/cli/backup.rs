//! `stave backup` and `stave restore` ([`crate::backup`]).

use std::path::{Path, PathBuf};

use serde_json::json;
use zeroize::Zeroizing;

use super::Output;
use crate::backup::files::{self, BackupOptions};
use crate::config::Home;

#[derive(clap::Args, Debug)]
pub struct BackupArgs {
    #[arg(long, env = "STAVE_HOME")]
    pub home: PathBuf,
    /// A new (or empty) directory to write the backup into.
    #[arg(long)]
    pub out: PathBuf,
    /// Also copy the local store (wrapped DEKs, replicas, private KV); the
    /// node must be stopped.
    #[arg(long)]
    pub local: bool,
    /// Seal the KEK under the passphrase in this file (first line, at least
    /// 12 characters); without it the KEK stays out of the backup.
    #[arg(long)]
    pub kek_passphrase_file: Option<PathBuf>,
    /// The chain, when the home has no chain store yet (right after `init`);
    /// checked against the store when there is one.
    #[arg(long)]
    pub chain_id: Option<String>,
}

#[derive(clap::Args, Debug)]
pub struct RestoreArgs {
    /// The backup's directory.
    #[arg(long)]
    pub from: PathBuf,
    /// The home to restore into; it must hold no config, keys or local store.
    #[arg(long, env = "STAVE_HOME")]
    pub home: PathBuf,
    /// The chain this validator is restored for: a backup of another chain is refused.
    #[arg(long)]
    pub chain_id: String,
    /// The passphrase the KEK was sealed under.
    #[arg(long)]
    pub kek_passphrase_file: Option<PathBuf>,
}

/// The first line of the passphrase file (a warning if others may read it).
fn passphrase(file: Option<&Path>) -> anyhow::Result<Option<Zeroizing<String>>> {
    use std::os::unix::fs::PermissionsExt;
    let Some(f) = file else { return Ok(None) };
    let text = Zeroizing::new(
        std::fs::read_to_string(f)
            .map_err(|e| anyhow::anyhow!("reading the passphrase file {}: {e}", f.display()))?,
    );
    if let Ok(md) = std::fs::metadata(f) {
        if md.permissions().mode() & 0o077 != 0 {
            eprintln!(
                "warning: {} is readable by others; chmod 600 it",
                f.display()
            );
        }
    }
    Ok(Some(Zeroizing::new(
        text.lines().next().unwrap_or_default().to_string(),
    )))
}

pub fn backup(a: BackupArgs, out: Output) -> anyhow::Result<()> {
    let o = BackupOptions {
        local: a.local,
        passphrase: passphrase(a.kek_passphrase_file.as_deref())?,
        chain_id: a.chain_id,
    };
    let m = files::backup(&Home::new(&a.home), &a.out, &o)?;
    let bytes: u64 = m
        .files
        .iter()
        .filter_map(|f| std::fs::metadata(a.out.join(&f.path)).ok())
        .map(|md| md.len())
        .sum();
    out.print(&json!({
        "backup": a.out.display().to_string(),
        "chain_id": m.chain_id,
        "height": m.height,
        "operator": m.operator,
        "files": m.files.len(),
        "total_bytes": bytes,
        "local": m.local,
        "kek": if m.kek_sealed { "sealed under the passphrase" } else { "not included" },
    }));
    Ok(())
}

pub fn restore(a: RestoreArgs, out: Output) -> anyhow::Result<()> {
    let pass = passphrase(a.kek_passphrase_file.as_deref())?;
    let home = Home::new(&a.home);
    let m = files::restore(
        &a.from,
        &home,
        &a.chain_id,
        pass.as_ref().map(|p| p.as_str()),
    )?;
    out.print(&json!({
        "restored": home.root.display().to_string(),
        "chain_id": m.chain_id,
        "backup_height": m.height,
        "operator": m.operator,
        "local": m.local,
        "kek": m.kek_sealed,
        "next": "the chain store starts empty: start the node (CometBFT replays its blocks) or state-sync it",
    }));
    Ok(())
}
