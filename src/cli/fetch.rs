//! The consumer's commands: `stave content access CID …` asks a DEK holder
//! for the key, `stave content fetch CID …` also downloads, verifies and
//! decrypts the file, and `stave content recover CID …` is the uploader's
//! way back to its own content through the chain's recovery copy.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::{keys, Output};
use crate::client::content::{self as cc, Consumer};
use crate::client::StaveClient;
use crate::proto::rights::Condition;

/// Who asks, and what they declare.
#[derive(clap::Args, Debug)]
pub struct AskArgs {
    /// The upload's cid (its flac_cid, hex).
    pub cid: String,
    /// The consumer's key name in the keyring (the key entitlements name).
    #[arg(long)]
    pub from: String,
    /// The consumer's X25519 key file the DEK is wrapped to (created, 0600,
    /// when missing).
    #[arg(long, value_name = "FILE")]
    pub x25519: PathBuf,
    /// Where the consumer is (ISO 3166-1 alpha-2). Declared and signed: the
    /// consumer answers for it; nothing checks it.
    #[arg(long)]
    pub territory: String,
    /// A request context condition, `key=value`; repeat, keys ascending.
    #[arg(long = "context", value_name = "K=V")]
    pub context: Vec<String>,
    /// The use asked for: on-demand-stream (default), non-interactive-stream,
    /// content-influenced-stream, permanent-download, conditional-download,
    /// tethered-download. A deal of the cid's releases must cover it.
    #[arg(long = "use", default_value = "on-demand-stream", value_parser = crate::cli::release::parse_use)]
    pub use_type: i32,
    #[arg(long, env = "STAVE_KEYRING", default_value_t = keys::default_keyring())]
    pub keyring_dir: String,
    /// Any node's gRPC endpoint, for chain reads; holders and replicas are
    /// found from chain state.
    #[arg(long, default_value = "http://127.0.0.1:9090")]
    pub node: String,
}

#[derive(clap::Args, Debug)]
pub struct FetchArgs {
    #[command(flatten)]
    pub ask: AskArgs,
    /// The decrypted FLAC file to write.
    #[arg(long)]
    pub out: PathBuf,
}

#[derive(clap::Args, Debug)]
pub struct RecoverArgs {
    /// The upload's cid (its flac_cid, hex).
    pub cid: String,
    /// The uploader's ed25519 key file; the recovery X25519 key derives
    /// from it.
    #[arg(long, value_name = "FILE")]
    pub recovery_key: PathBuf,
    /// Where the uploader is (ISO 3166-1 alpha-2).
    #[arg(long)]
    pub territory: String,
    #[arg(long)]
    pub out: PathBuf,
    #[arg(long, default_value = "http://127.0.0.1:9090")]
    pub node: String,
}

fn context(list: &[String]) -> anyhow::Result<Vec<Condition>> {
    list.iter()
        .map(|kv| {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| anyhow::anyhow!("context {kv:?} is not key=value"))?;
            Ok(Condition {
                key: k.to_string(),
                value: v.to_string(),
            })
        })
        .collect()
}

fn consumer(a: &AskArgs) -> anyhow::Result<Consumer> {
    if !a.x25519.exists() {
        crate::keyfile::create_x25519(&a.x25519)?;
    }
    Ok(Consumer {
        key: keys::load(&a.keyring_dir, &a.from)?,
        x25519: crate::keyfile::load_x25519(&a.x25519)?,
        use_type: a.use_type,
    })
}

fn cid_of(s: &str) -> anyhow::Result<Vec<u8>> {
    hex::decode(s).map_err(|e| anyhow::anyhow!("cid {s:?}: {e}"))
}

/// `stave content access`: the key, not the file.
pub async fn access(a: AskArgs, out: Output) -> anyhow::Result<()> {
    let me = consumer(&a)?;
    let mut c = StaveClient::connect(&a.node).await?;
    let upload = cc::upload_of(&mut c, &cid_of(&a.cid)?).await?;
    let k = cc::access(&mut c, &me, &upload, &a.territory, &context(&a.context)?).await?;
    let r = k.granted.receipt.clone().unwrap_or_default();
    out.print(&json!({
        "cid": hex::encode(&k.granted.cid),
        "holder": hex::encode(k.holder),
        "encrypted_cid": hex::encode(&k.granted.encrypted_cid),
        "encrypted_size": k.granted.encrypted_size,
        "policy_type": r.policy_type,
        "reason": r.reason,
        "height": r.height,
        "request_hash": hex::encode(&r.request_hash),
        "receipt_signature": hex::encode(&k.granted.receipt_signature),
    }));
    Ok(())
}

fn bar() -> (indicatif::ProgressBar, impl FnMut(u64, u64) + Send) {
    let b = indicatif::ProgressBar::new(0);
    b.set_style(
        indicatif::ProgressStyle::with_template(
            "{msg:>12} [{bar:40}] {bytes}/{total_bytes} {bytes_per_sec}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    b.set_message("downloading");
    let b2 = b.clone();
    (b, move |done, total| {
        b2.set_length(total);
        b2.set_position(done);
    })
}

fn print_fetched(f: &cc::Fetched, out: Output) {
    out.print(&json!({
        "path": f.path.display().to_string(),
        "bytes": f.bytes,
        "holder": f.holder,
        "verified": true,
    }));
}

/// `stave content fetch`: key, download, verify, decrypt.
pub async fn fetch(a: FetchArgs, out: Output) -> anyhow::Result<()> {
    let me = consumer(&a.ask)?;
    let ctx = context(&a.ask.context)?;
    let (b, mut progress) = bar();
    let cid = cid_of(&a.ask.cid)?;
    let f = cc::fetch(
        &a.ask.node,
        &me,
        &cid,
        &a.ask.territory,
        &ctx,
        &a.out,
        &mut progress,
    )
    .await;
    b.finish_and_clear();
    print_fetched(&f?, out);
    Ok(())
}

/// `stave content recover`: the uploader's own content, through the
/// chain's recovery copy of the DEK.
pub async fn recover(a: RecoverArgs, out: Output) -> anyhow::Result<()> {
    let key = crate::keyfile::load_ed25519(Path::new(&a.recovery_key))?;
    let (b, mut progress) = bar();
    let cid = cid_of(&a.cid)?;
    let f = cc::recover(&a.node, &key, &cid, &a.territory, &a.out, &mut progress).await;
    b.finish_and_clear();
    print_fetched(&f?, out);
    Ok(())
}
