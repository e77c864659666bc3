//! `stave local kv get|set|remove|list|relinquish`: the node's private KV
//! (BRC-35 local profile, docs/local-kv.md) over the admin socket
//! (`<home>/admin.sock`). Keys and values are UTF-8 on the command line;
//! a value that is not UTF-8 prints as hex.

use std::path::PathBuf;

use serde_json::{json, Value};

use super::Output;
use crate::proto::local::{
    LocalKvGetRequest, LocalKvListRequest, LocalKvRelinquishRequest, LocalKvRemoveRequest,
    LocalKvSetRequest,
};

#[derive(clap::Subcommand, Debug)]
pub enum LocalCmd {
    /// The node's private key-value store, encrypted by default.
    #[command(subcommand)]
    Kv(KvCmd),
    /// The databases replicated between validators (CAD037).
    #[command(subcommand)]
    Db(super::local_db::DbCmd),
}

/// Which node and which context.
#[derive(clap::Args, Debug)]
pub struct At {
    /// The node's home; the call goes to `<home>/admin.sock`.
    #[arg(long, env = "STAVE_HOME")]
    home: PathBuf,
    /// The namespace: 1 to 128 bytes of letters, digits and `. _ : -`.
    #[arg(long)]
    context: String,
}

#[derive(clap::Subcommand, Debug)]
pub enum KvCmd {
    /// The value of a key (an error for a corrupt entry).
    Get {
        #[command(flatten)]
        at: At,
        key: String,
    },
    /// Writes a value, replacing the key's entry (encrypted unless --plaintext).
    Set {
        #[command(flatten)]
        at: At,
        key: String,
        value: String,
        /// Store the value unencrypted.
        #[arg(long)]
        plaintext: bool,
    },
    /// Deletes a key's entry, healthy or corrupt.
    Remove {
        #[command(flatten)]
        at: At,
        key: String,
    },
    /// The context's keys in order, marking corrupt entries.
    List {
        #[command(flatten)]
        at: At,
        /// Only keys starting with this.
        #[arg(long, default_value = "")]
        prefix: String,
        /// Keys after this one (the last key of the previous page).
        #[arg(long, default_value = "")]
        start_after: String,
        /// At most this many (at most 1,000).
        #[arg(long, default_value_t = 100)]
        limit: u32,
        /// Print each healthy entry's value too.
        #[arg(long)]
        values: bool,
    },
    /// Removes an entry that does not decode or decrypt (refuses a healthy one).
    Relinquish {
        #[command(flatten)]
        at: At,
        key: String,
    },
}

fn text(bytes: &[u8]) -> Value {
    match std::str::from_utf8(bytes) {
        Ok(s) => json!(s),
        Err(_) => json!({ "hex": hex::encode(bytes) }),
    }
}

pub async fn run(cmd: LocalCmd, out: Output) -> anyhow::Result<()> {
    let cmd = match cmd {
        LocalCmd::Kv(c) => c,
        LocalCmd::Db(c) => return super::local_db::run(c, out).await,
    };
    let home = match &cmd {
        KvCmd::Get { at, .. }
        | KvCmd::Set { at, .. }
        | KvCmd::Remove { at, .. }
        | KvCmd::List { at, .. }
        | KvCmd::Relinquish { at, .. } => at.home.clone(),
    };
    let socket = crate::config::Home::new(home).admin_socket();
    let mut c = crate::client::admin_kv_client(&socket).await?;
    let v = match cmd {
        KvCmd::Get { at, key } => {
            let r = c
                .get(LocalKvGetRequest {
                    context: at.context,
                    key: key.into_bytes(),
                })
                .await?
                .into_inner();
            if !r.found {
                anyhow::bail!("no entry for that key");
            }
            json!({"value": text(&r.value), "encrypted": r.encrypted, "updated_ms": r.updated_ms})
        }
        KvCmd::Set {
            at,
            key,
            value,
            plaintext,
        } => {
            let r = c
                .set(LocalKvSetRequest {
                    context: at.context,
                    key: key.into_bytes(),
                    value: value.into_bytes(),
                    plaintext,
                })
                .await?
                .into_inner();
            json!({"replaced": r.replaced, "updated_ms": r.updated_ms, "encrypted": !plaintext})
        }
        KvCmd::Remove { at, key } => {
            let r = c
                .remove(LocalKvRemoveRequest {
                    context: at.context,
                    key: key.into_bytes(),
                })
                .await?
                .into_inner();
            json!({"removed": r.removed})
        }
        KvCmd::List {
            at,
            prefix,
            start_after,
            limit,
            values,
        } => {
            let r = c
                .list(LocalKvListRequest {
                    context: at.context,
                    prefix: prefix.into_bytes(),
                    start_after: start_after.into_bytes(),
                    limit,
                    values,
                })
                .await?
                .into_inner();
            let entries: Vec<Value> = r
                .entries
                .iter()
                .map(|e| {
                    let mut m = json!({"key": text(&e.key), "encrypted": e.encrypted, "updated_ms": e.updated_ms});
                    if !e.corrupt.is_empty() {
                        m = json!({"key": text(&e.key), "corrupt": e.corrupt});
                    } else if values {
                        m["value"] = text(&e.value);
                    }
                    m
                })
                .collect();
            json!({"entries": entries, "more": r.more})
        }
        KvCmd::Relinquish { at, key } => {
            let r = c
                .relinquish(LocalKvRelinquishRequest {
                    context: at.context,
                    key: key.into_bytes(),
                })
                .await?
                .into_inner();
            json!({"removed": r.removed})
        }
    };
    out.print(&v);
    Ok(())
}
