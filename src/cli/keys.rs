//! `stave keys add|list|show`: client keys in files of mode 0600.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::Output;
use crate::keyfile;

#[derive(clap::Subcommand, Debug)]
pub enum KeysCmd {
    /// Create a new ed25519 key.
    Add {
        name: String,
        #[arg(long, env = "STAVE_KEYRING", default_value_t = default_keyring())]
        keyring_dir: String,
    },
    /// List keys.
    List {
        #[arg(long, env = "STAVE_KEYRING", default_value_t = default_keyring())]
        keyring_dir: String,
    },
    /// Show one key's public key.
    Show {
        name: String,
        #[arg(long, env = "STAVE_KEYRING", default_value_t = default_keyring())]
        keyring_dir: String,
    },
}

/// `~/.stave/keyring`.
pub fn default_keyring() -> String {
    let home = std::env::var("HOME").unwrap_or_else(|_| ".".into());
    format!("{home}/.stave/keyring")
}

fn check_name(name: &str) -> anyhow::Result<()> {
    anyhow::ensure!(
        !name.is_empty()
            && name.len() <= 64
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
        "key name {name:?}: use 1-64 letters, digits, '-' or '_'"
    );
    Ok(())
}

/// The file of key `name`.
pub fn key_path(dir: &str, name: &str) -> anyhow::Result<PathBuf> {
    check_name(name)?;
    Ok(Path::new(dir).join(format!("{name}.json")))
}

/// Loads key `name` from a keyring.
pub fn load(dir: &str, name: &str) -> anyhow::Result<ed25519_dalek::SigningKey> {
    keyfile::load_ed25519(&key_path(dir, name)?)
}

pub fn run(cmd: KeysCmd, out: Output) -> anyhow::Result<()> {
    match cmd {
        KeysCmd::Add { name, keyring_dir } => {
            let path = key_path(&keyring_dir, &name)?;
            let key = keyfile::create_ed25519(&path)?;
            out.print(&json!({"name": name, "pubkey": hex::encode(key.verifying_key().to_bytes()), "file": path.display().to_string()}));
        }
        KeysCmd::Show { name, keyring_dir } => {
            let key = load(&keyring_dir, &name)?;
            out.print(
                &json!({"name": name, "pubkey": hex::encode(key.verifying_key().to_bytes())}),
            );
        }
        KeysCmd::List { keyring_dir } => {
            let mut keys = Vec::new();
            if let Ok(rd) = std::fs::read_dir(&keyring_dir) {
                let mut names: Vec<String> = rd
                    .filter_map(|e| e.ok())
                    .filter_map(|e| {
                        e.file_name()
                            .to_str()
                            .and_then(|n| n.strip_suffix(".json"))
                            .map(String::from)
                    })
                    .collect();
                names.sort();
                for n in names {
                    if let Ok(k) = load(&keyring_dir, &n) {
                        keys.push(
                            json!({"name": n, "pubkey": hex::encode(k.verifying_key().to_bytes())}),
                        );
                    }
                }
            }
            out.print(&json!({"keys": keys}));
        }
    }
    Ok(())
}
