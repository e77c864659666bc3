//! `stave content upload FILE --group G --from KEY` and `stave content
//! status JOB`: one command from a file to content registered on chain;
//! `access`, `fetch` and `recover` ([`super::fetch`]) on the way back.

use std::path::PathBuf;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

use super::{keys, Output};
use crate::client::StaveClient;
use crate::content::client::{self as up, Plan};
use crate::proto::content::JobState;

#[derive(clap::Subcommand, Debug)]
pub enum ContentCmd {
    /// Upload an audio file (WAV, AIFF, FLAC, MP3, AAC, Ogg Vorbis): the
    /// node transcodes it to FLAC, encrypts it and prepares the manifest;
    /// this command checks the manifest, signs it and waits until the
    /// upload is registered on chain.
    Upload(UploadArgs),
    /// Follow a job's state until it is COMPLETE or FAILED.
    Status {
        /// The job id (hex) `upload` printed.
        job: String,
        #[arg(long, default_value = "http://127.0.0.1:9090")]
        node: String,
    },
    /// Ask a DEK holder of the cid for its key (RequestAccess), without
    /// downloading: prints the holder's receipt.
    Access(super::fetch::AskArgs),
    /// Get the key from a DEK holder and the file from any replica; verify
    /// every chunk, both cids, and write the decrypted FLAC.
    Fetch(super::fetch::FetchArgs),
    /// The uploader's recovery: the DEK from the chain's recovery copy, the
    /// file from any replica, decrypted and checked.
    Recover(super::fetch::RecoverArgs),
}

#[derive(clap::Args, Debug)]
pub struct UploadArgs {
    /// The audio file.
    pub file: Option<PathBuf>,
    /// Artwork (JPEG, PNG or WebP), sent after the audio; repeat for
    /// more. The node stores each as a PNG, unencrypted.
    #[arg(long, value_name = "IMG")]
    pub art: Vec<PathBuf>,
    /// The publisher group the upload joins (empty: ungrouped).
    #[arg(long, default_value = "")]
    pub group: String,
    /// Validators that store the file (hex operator keys). Default: this
    /// node plus others, `--copies` in all.
    #[arg(long = "replica", value_name = "KEY")]
    pub replicas: Vec<String>,
    /// Validators that hold the DEK (hex operator keys). Default: the
    /// replicas.
    #[arg(long = "holder", value_name = "KEY")]
    pub holders: Vec<String>,
    /// Replicas in the default set.
    #[arg(long, default_value_t = 3)]
    pub copies: usize,
    /// Go on with a job instead of starting one: sign its manifest, or
    /// send FILE again if a restart failed it while receiving.
    #[arg(long, value_name = "JOB")]
    pub resume: Option<String>,
    /// Key name in the keyring.
    #[arg(long)]
    pub from: String,
    #[arg(long, env = "STAVE_KEYRING", default_value_t = keys::default_keyring())]
    pub keyring_dir: String,
    /// The node's gRPC endpoint; it processes the upload.
    #[arg(long, default_value = "http://127.0.0.1:9090")]
    pub node: String,
}

pub async fn run(cmd: ContentCmd, out: Output) -> anyhow::Result<()> {
    match cmd {
        ContentCmd::Upload(a) => upload(a, out).await,
        ContentCmd::Access(a) => super::fetch::access(a, out).await,
        ContentCmd::Fetch(a) => super::fetch::fetch(a, out).await,
        ContentCmd::Recover(a) => super::fetch::recover(a, out).await,
        ContentCmd::Status { job, node } => {
            let mut c = StaveClient::connect(&node).await?;
            let job = hex::decode(&job).map_err(|e| anyhow::anyhow!("job {job:?}: {e}"))?;
            let s = up::follow(&mut c, &job, |s| eprintln!("{}", s.status), |_| false).await?;
            out.print(&state_json(&s));
            Ok(())
        }
    }
}

fn key32(s: &str) -> anyhow::Result<[u8; 32]> {
    hex::decode(s)
        .ok()
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| anyhow::anyhow!("{s:?} is not a 32-byte hex key"))
}

async fn plan(c: &mut StaveClient, a: &UploadArgs, uploader: &[u8; 32]) -> anyhow::Result<Plan> {
    let node = c
        .content
        .node(crate::proto::content::NodeRequest {})
        .await?
        .into_inner();
    let me: [u8; 32] = node
        .operator
        .as_slice()
        .try_into()
        .map_err(|_| anyhow::anyhow!("the node's operator key is not 32 bytes"))?;
    let replication_set = if a.replicas.is_empty() {
        let active = up::active_validators(c).await?;
        up::default_set(&me, &active, uploader, a.copies)
    } else {
        a.replicas
            .iter()
            .map(|k| key32(k))
            .collect::<anyhow::Result<_>>()?
    };
    let dek_holder_set = if a.holders.is_empty() {
        replication_set.clone()
    } else {
        a.holders
            .iter()
            .map(|k| key32(k))
            .collect::<anyhow::Result<_>>()?
    };
    Ok(Plan {
        processing_validator: me,
        replication_set,
        dek_holder_set,
        group_id: a.group.clone(),
    })
}

fn bar(len: u64) -> ProgressBar {
    let b = ProgressBar::new(len);
    b.set_style(
        ProgressStyle::with_template("{msg:>12} [{bar:40}] {bytes}/{total_bytes} {bytes_per_sec}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    b.set_message("sending");
    b
}

async fn upload(a: UploadArgs, out: Output) -> anyhow::Result<()> {
    let key = keys::load(&a.keyring_dir, &a.from)?;
    let mut c = StaveClient::connect(&a.node).await?;
    let mut job = match &a.resume {
        Some(j) => hex::decode(j).map_err(|e| anyhow::anyhow!("job {j:?}: {e}"))?,
        None => Vec::new(),
    };
    let mut plan_made = None;
    let mut state = if job.is_empty() {
        None
    } else {
        Some(up::follow(&mut c, &job, |_| {}, |_| true).await?)
    };
    let receiving_lost = state.as_ref().is_some_and(|s| {
        s.status == "FAILED" && s.error_code == "RESTARTED" && s.manifest.is_none()
    });
    if job.is_empty() || receiving_lost {
        let file = a
            .file
            .clone()
            .ok_or_else(|| anyhow::anyhow!("give the FILE to upload"))?;
        let p = plan(&mut c, &a, &key.verifying_key().to_bytes()).await?;
        let mut size = std::fs::metadata(&file)?.len();
        for art in &a.art {
            size += std::fs::metadata(art)
                .map_err(|e| anyhow::anyhow!("{}: {e}", art.display()))?
                .len();
        }
        let b = bar(size);
        let pb = b.clone();
        let r = up::send(&mut c, &key, &p, &file, &a.art, move |n| pb.set_position(n)).await?;
        b.finish_with_message("sent");
        job = r.job_id;
        plan_made = Some(p);
        state = None;
    }
    let spin = ProgressBar::new_spinner();
    spin.enable_steady_tick(Duration::from_millis(200));
    let s = match state.filter(up::awaiting_signature) {
        Some(s) => s,
        None => {
            up::follow(
                &mut c,
                &job,
                |s| spin.set_message(s.status.clone()),
                up::awaiting_signature,
            )
            .await?
        }
    };
    if up::awaiting_signature(&s) {
        let m = s.manifest.clone().unwrap_or_default();
        // a resumed job without --art again takes the images it was sent
        let images = if plan_made.is_none() && a.art.is_empty() {
            m.image_cids.len()
        } else {
            a.art.len()
        };
        let p = plan_made.unwrap_or_else(|| plan_of(&m));
        let chain = c
            .content
            .node(crate::proto::content::NodeRequest {})
            .await?
            .into_inner()
            .chain_id;
        up::check_manifest(&m, &p, &key, &chain, images)?;
        up::complete(&mut c, &key, &job, &m).await?;
    }
    let done = |s: &JobState| s.status == "SEEDING";
    let s = up::follow(&mut c, &job, |s| spin.set_message(s.status.clone()), done).await?;
    spin.finish_with_message(s.status.clone());
    out.print(&state_json(&s));
    anyhow::ensure!(
        matches!(s.status.as_str(), "SEEDING" | "COMPLETE"),
        "upload not registered: job {} is {} {} {}",
        hex::encode(&job),
        s.status,
        s.error_code,
        s.error
    );
    Ok(())
}

/// The plan a manifest states (for `--resume`, which has no other).
fn plan_of(m: &crate::proto::rights::UploadManifest) -> Plan {
    let keys = |s: &[Vec<u8>]| {
        s.iter()
            .filter_map(|k| k.as_slice().try_into().ok())
            .collect()
    };
    Plan {
        processing_validator: m
            .processing_validator
            .as_slice()
            .try_into()
            .unwrap_or([0; 32]),
        replication_set: keys(&m.replication_set),
        dek_holder_set: keys(&m.dek_holder_set),
        group_id: m.group_id.clone(),
    }
}

fn state_json(s: &JobState) -> serde_json::Value {
    let m = s.manifest.clone().unwrap_or_default();
    let f = s.facts.clone().unwrap_or_default();
    json!({
        "job_id": hex::encode(&s.job_id),
        "status": s.status,
        "error_code": s.error_code,
        "error": s.error,
        "height": s.height,
        "flac_cid": hex::encode(&m.flac_cid),
        "encrypted_cid": hex::encode(&m.encrypted_cid),
        "encrypted_size": m.encrypted_size,
        "images": s.images.iter().map(|i| json!({
            "cid": hex::encode(&i.cid),
            "cid_string": crate::media::cid::RawCid::try_from(i.cid.as_slice())
                .map(|c| crate::media::cid::cid_string(&c))
                .unwrap_or_default(),
            "bytes": i.bytes,
        })).collect::<Vec<_>>(),
        "dek_commitment": hex::encode(&m.dek_commitment),
        "replication_set": m.replication_set.iter().map(hex::encode).collect::<Vec<_>>(),
        "dek_holder_set": m.dek_holder_set.iter().map(hex::encode).collect::<Vec<_>>(),
        "phases_ms": s
            .phases
            .iter()
            .map(|p| (p.name.clone(), json!(p.ms)))
            .collect::<serde_json::Map<_, _>>(),
        "audio": {
            "sample_rate": f.sample_rate, "channels": f.channels,
            "bits_per_sample": f.bits_per_sample, "duration_ms": f.duration_ms,
            "source_codec": f.source_codec, "lossless_source": f.lossless_source,
            "flac_bytes": f.flac_bytes,
        },
    })
}
