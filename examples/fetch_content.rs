//! A consumer fetches a licensed track: the key from one of its DEK
//! holders, the encrypted blob from any replica, verified chunk by chunk
//! and against both cids, decrypted into a FLAC file.
//!
//! ```text
//! cargo run --release --example fetch_content -- \
//!     http://127.0.0.1:9090 <flac_cid hex> GB consumer.json consumer.x25519 out.flac
//! ```
//! `consumer.json` is an ed25519 key file (`stave keys add`) the cid's
//! entitlement names; `consumer.x25519` an X25519 key file (created when
//! missing). PUBLIC content needs no entitlement.

use std::path::Path;

use stave::client::content::{fetch, Consumer};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [node, cid, territory, key, x25519, out] = args.as_slice() else {
        anyhow::bail!("usage: fetch_content NODE_URL CID TERRITORY KEY_FILE X25519_FILE OUT");
    };
    let x_path = Path::new(x25519);
    if !x_path.exists() {
        stave::keyfile::create_x25519(x_path)?;
    }
    let consumer = Consumer {
        key: stave::keyfile::load_ed25519(Path::new(key))?,
        x25519: stave::keyfile::load_x25519(x_path)?,
        use_type: 0,
    };
    let cid = hex::decode(cid)?;
    let mut shown = 0;
    let fetched = fetch(
        node,
        &consumer,
        &cid,
        territory,
        &[],
        Path::new(out),
        &mut |done, total| {
            let pct = done * 100 / total.max(1);
            if pct >= shown + 10 {
                shown = pct;
                eprintln!("{pct}%");
            }
        },
    )
    .await?;
    println!(
        "{} FLAC bytes in {} (key from holder {})",
        fetched.bytes,
        fetched.path.display(),
        fetched.holder
    );
    Ok(())
}
