//! `stave tx rights …`: the content and rights actions (their queries,
//! `stave query rights …`, are in `rights_query.rs`). Byte fields (cids,
//! keys) are hex; a public key may also be the name of a keyring entry.

use clap::{Args, Subcommand};
use prost::Message;
use serde_json::json;

use super::query::resolve_pubkey;
use super::tx::{submit, TxOpts};
use super::{keys, Output};
use crate::client::StaveClient;
use crate::keyspaces::entitlements::{GrantEntitlement, RevokeEntitlement};
use crate::keyspaces::grants::RecordGrant;
use crate::keyspaces::policies::SetPolicy;
use crate::keyspaces::uploads::sign_manifest;
use crate::proto::query::StatusRequest;
use crate::proto::rights as pb;
use crate::tx::Action;

pub(super) fn unhex(what: &str, s: &str) -> anyhow::Result<Vec<u8>> {
    hex::decode(s).map_err(|e| anyhow::anyhow!("{what} {s:?} is not hex: {e}"))
}

fn unhex_all(what: &str, v: &[String]) -> anyhow::Result<Vec<Vec<u8>>> {
    v.iter().map(|s| unhex(what, s)).collect()
}

#[derive(Args, Debug)]
pub struct ManifestArgs {
    /// The uploader's key name in the keyring (it signs the manifest).
    #[arg(long)]
    pub from: String,
    #[arg(long, env = "STAVE_KEYRING", default_value_t = keys::default_keyring())]
    pub keyring_dir: String,
    /// Chain id (default: the node's).
    #[arg(long)]
    pub chain_id: Option<String>,
    #[arg(long, default_value = "http://127.0.0.1:9090")]
    pub node: String,
    #[arg(long)]
    pub flac_cid: String,
    #[arg(long)]
    pub encrypted_cid: String,
    #[arg(long = "image-cid")]
    pub image_cids: Vec<String>,
    /// Bytes of each `--image-cid`, in the same order.
    #[arg(long = "image-size")]
    pub image_sizes: Vec<u64>,
    /// The audio facts (`--duration-ms` is computed from them).
    #[arg(long)]
    pub sample_rate: u32,
    #[arg(long)]
    pub channels: u32,
    #[arg(long)]
    pub bits_per_sample: u32,
    /// Samples per channel.
    #[arg(long)]
    pub frames: u64,
    /// The source codec (`pcm_s16le`, `flac`, `mp3`, ...).
    #[arg(long)]
    pub source_codec: String,
    #[arg(long)]
    pub lossless_source: bool,
    #[arg(long)]
    pub encrypted_size: u64,
    /// Validator operator key (hex), repeated.
    #[arg(long = "replica", required = true)]
    pub replication_set: Vec<String>,
    /// Validator operator key (hex), repeated.
    #[arg(long = "dek-holder", required = true)]
    pub dek_holder_set: Vec<String>,
    #[arg(long)]
    pub processing_validator: String,
    #[arg(long, default_value = "")]
    pub group_id: String,
    #[arg(long)]
    pub wrapped_dek: String,
    #[arg(long)]
    pub ephemeral_pubkey: String,
    /// SHA-256("stave/dek-commit/v1" ‖ DEK ‖ encrypted_cid), hex.
    #[arg(long)]
    pub dek_commitment: String,
}

#[derive(Subcommand, Debug)]
pub enum RightsTx {
    /// Uploader side: build and sign an UploadComplete; prints it as hex.
    SignManifest(ManifestArgs),
    /// Processing validator: submit an UploadComplete (hex from sign-manifest).
    UploadComplete {
        signed: String,
        #[command(flatten)]
        opts: TxOpts,
    },
    /// Grant (or replace) ROLE on CID to PUBKEY.
    Grant {
        cid: String,
        pubkey: String,
        /// owner, admin, distributor or consumer.
        role: String,
        #[arg(long = "scope-territory")]
        territories: Vec<String>,
        #[arg(long, default_value_t = 0)]
        not_before: u64,
        #[arg(long, default_value_t = 0)]
        not_after: u64,
        /// `key=value`, repeated (sorted by key before sending).
        #[arg(long = "condition")]
        conditions: Vec<String>,
        #[command(flatten)]
        opts: TxOpts,
    },
    /// Revoke PUBKEY's entitlement on CID.
    Revoke {
        cid: String,
        pubkey: String,
        #[command(flatten)]
        opts: TxOpts,
    },
    /// Set CID's policy: public, direct-grant, role-based, conditional, programmable.
    SetPolicy {
        cid: String,
        policy_type: String,
        #[arg(long, default_value = "")]
        model: String,
        #[arg(long, default_value = "")]
        script_cid: String,
        #[command(flatten)]
        opts: TxOpts,
    },
    /// DEK holder: record an access grant to CONSUMER from TERRITORY.
    RecordGrant {
        cid: String,
        consumer: String,
        territory: String,
        /// The request's context, `key=value`, repeated: it must meet the
        /// entitlement scope's conditions.
        #[arg(long = "context")]
        context: Vec<String>,
        /// The use delivered: on-demand-stream (default),
        /// non-interactive-stream, content-influenced-stream,
        /// permanent-download, conditional-download, tethered-download.
        #[arg(long = "use", default_value = "on-demand-stream", value_parser = crate::cli::release::parse_use)]
        use_type: i32,
        #[command(flatten)]
        opts: TxOpts,
    },
}

fn enum_arg(s: &str) -> String {
    s.to_ascii_uppercase().replace('-', "_")
}

async fn sign(a: ManifestArgs, out: Output) -> anyhow::Result<()> {
    let key = keys::load(&a.keyring_dir, &a.from)?;
    let chain_id = match a.chain_id {
        Some(c) => c,
        None => {
            let mut c = StaveClient::connect(&a.node).await?;
            c.query
                .status(StatusRequest {})
                .await?
                .into_inner()
                .chain_id
        }
    };
    let m = pb::UploadManifest {
        chain_id,
        flac_cid: unhex("flac_cid", &a.flac_cid)?,
        encrypted_cid: unhex("encrypted_cid", &a.encrypted_cid)?,
        image_cids: unhex_all("image cid", &a.image_cids)?,
        image_sizes: a.image_sizes.clone(),
        facts: Some(pb::AudioFacts {
            sample_rate: a.sample_rate,
            channels: a.channels,
            bits_per_sample: a.bits_per_sample,
            frames: a.frames,
            duration_ms: a.frames.saturating_mul(1000) / u64::from(a.sample_rate.max(1)),
            source_codec: a.source_codec.clone(),
            lossless_source: a.lossless_source,
        }),
        encrypted_size: a.encrypted_size,
        replication_set: unhex_all("replica", &a.replication_set)?,
        dek_holder_set: unhex_all("dek holder", &a.dek_holder_set)?,
        processing_validator: unhex("processing_validator", &a.processing_validator)?,
        group_id: a.group_id,
        recovery_dek: Some(pb::WrappedDek {
            wrapped_dek: unhex("wrapped_dek", &a.wrapped_dek)?,
            ephemeral_pubkey: unhex("ephemeral_pubkey", &a.ephemeral_pubkey)?,
            ..Default::default()
        }),
        uploader_pubkey: vec![],
        dek_commitment: unhex("dek_commitment", &a.dek_commitment)?,
    };
    let uc = sign_manifest(&key, m);
    out.print(&json!({"upload_complete": hex::encode(uc.encode_to_vec())}));
    Ok(())
}

/// `key=value` arguments as conditions, sorted by key (the canonical order).
pub fn conditions(args: &[String]) -> anyhow::Result<Vec<pb::Condition>> {
    let mut conditions = Vec::new();
    for c in args {
        let (k, v) = c
            .split_once('=')
            .ok_or_else(|| anyhow::anyhow!("condition {c:?} is not key=value"))?;
        conditions.push(pb::Condition {
            key: k.into(),
            value: v.into(),
        });
    }
    conditions.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(conditions)
}

fn scope(ts: Vec<String>, nb: u64, na: u64, conds: &[String]) -> anyhow::Result<Option<pb::Scope>> {
    let conditions = conditions(conds)?;
    let empty = ts.is_empty() && nb == 0 && na == 0 && conditions.is_empty();
    Ok((!empty).then_some(pb::Scope {
        territories: ts,
        not_before: nb,
        not_after: na,
        conditions,
    }))
}

pub async fn run_tx(cmd: RightsTx, out: Output) -> anyhow::Result<()> {
    let (action, opts) = match cmd {
        RightsTx::SignManifest(a) => return sign(a, out).await,
        RightsTx::UploadComplete { signed, opts } => {
            let uc = pb::UploadComplete::decode(unhex("signed", &signed)?.as_slice())?;
            (
                Action::UploadComplete(uc.try_into().map_err(anyhow::Error::msg)?),
                opts,
            )
        }
        RightsTx::Grant {
            cid,
            pubkey,
            role,
            territories,
            not_before,
            not_after,
            conditions,
            opts,
        } => {
            let role = pb::Role::from_str_name(&enum_arg(&role))
                .ok_or_else(|| anyhow::anyhow!("unknown role {role:?}"))?;
            let a = GrantEntitlement {
                cid: unhex("cid", &cid)?,
                pubkey: resolve_pubkey(&pubkey, &opts.keyring_dir)?,
                role,
                scope: scope(territories, not_before, not_after, &conditions)?,
            };
            (Action::GrantEntitlement(a), opts)
        }
        RightsTx::Revoke { cid, pubkey, opts } => {
            let a = RevokeEntitlement {
                cid: unhex("cid", &cid)?,
                pubkey: resolve_pubkey(&pubkey, &opts.keyring_dir)?,
            };
            (Action::RevokeEntitlement(a), opts)
        }
        RightsTx::SetPolicy {
            cid,
            policy_type,
            model,
            script_cid,
            opts,
        } => {
            let t = pb::PolicyType::from_str_name(&enum_arg(&policy_type))
                .ok_or_else(|| anyhow::anyhow!("unknown policy type {policy_type:?}"))?;
            let a = SetPolicy {
                cid: unhex("cid", &cid)?,
                policy_type: t,
                casbin_model_id: model,
                script_cid: unhex("script_cid", &script_cid)?,
            };
            (Action::SetPolicy(a), opts)
        }
        RightsTx::RecordGrant {
            cid,
            consumer,
            territory,
            context,
            use_type,
            opts,
        } => {
            let a = RecordGrant {
                cid: unhex("cid", &cid)?,
                consumer_pubkey: resolve_pubkey(&consumer, &opts.keyring_dir)?,
                territory,
                context: conditions(&context)?,
                count: 0,
                use_type,
            };
            (Action::RecordGrant(a), opts)
        }
    };
    submit(vec![action], &opts, out).await
}
