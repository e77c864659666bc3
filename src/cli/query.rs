//! `stave query …`: reads over gRPC.

use serde_json::json;

use super::verify::{with_verified, VerifyArgs};
use super::{keys, tx::arg_bytes, Output};
use crate::client::StaveClient;
use crate::grpc::answers;
use crate::proto::query::{AccountRequest, KvGetRequest, KvListRequest, StatusRequest};

#[derive(clap::Subcommand, Debug)]
pub enum QueryCmd {
    /// Chain id, height and app hash.
    Status {
        #[arg(long, default_value = "http://127.0.0.1:9090")]
        node: String,
    },
    /// An account, by hex public key or key name.
    Account {
        /// Hex public key, or the name of a key in the keyring.
        who: String,
        #[arg(long, default_value = "http://127.0.0.1:9090")]
        node: String,
        #[arg(long, env = "STAVE_KEYRING", default_value_t = keys::default_keyring())]
        keyring_dir: String,
        #[command(flatten)]
        v: VerifyArgs,
    },
    /// kv reads.
    #[command(subcommand)]
    Kv(KvQuery),
    /// Governance reads: validator, validators, validator-set.
    #[command(flatten)]
    Governance(super::governance::GovernanceQuery),
    /// Publisher groups, takedowns and jurisdiction flags.
    #[command(subcommand)]
    Groups(super::groups::GroupsQuery),
    /// Casbin models, rules and evaluation.
    #[command(subcommand)]
    Casbin(super::casbin::CasbinQuery),
    /// Content and rights reads and the access decision.
    #[command(subcommand)]
    Rights(super::rights_query::RightsQuery),
    /// A release by id (`--ern`: as ERN 4.3 XML; `--deals`; `--versions`).
    Release(super::release::ReleaseQuery),
    /// The releases of a cid (`--cid`) or a party (`--party`).
    Releases(super::release::ReleasesQuery),
    /// kvdb reads.
    Kvdb(super::kv::KvdbQuery),
    /// The node's local store.
    #[command(subcommand)]
    Local(super::local::LocalQuery),
}

#[derive(clap::Subcommand, Debug)]
pub enum KvQuery {
    /// Live KV tokens by key, controller, protocol id and tags.
    Tokens {
        #[arg(long, default_value = "")]
        key: String,
        #[arg(long, default_value = "")]
        controller: String,
        #[arg(long, default_value = "")]
        protocol_id: String,
        #[arg(long = "tag")]
        tags: Vec<String>,
        #[command(flatten)]
        v: VerifyArgs,
        /// all or any
        #[arg(long, default_value = "all")]
        mode: String,
        #[arg(long, default_value_t = 50)]
        limit: u32,
        #[arg(long, default_value_t = 0)]
        skip: u64,
        /// asc or desc
        #[arg(long, default_value = "asc")]
        sort: String,
        #[arg(long, default_value = "http://127.0.0.1:9090")]
        node: String,
    },
    /// A tuple's history, oldest to newest.
    History {
        key: String,
        #[arg(long)]
        protocol_id: String,
        #[arg(long)]
        controller: String,
        #[arg(long, default_value_t = 0)]
        from: u64,
        #[arg(long, default_value_t = 0)]
        limit: u32,
        #[arg(long, default_value = "http://127.0.0.1:9090")]
        node: String,
    },
    /// The value of SIGNER's KEY (SIGNER: hex public key or key name).
    Get {
        signer: String,
        key: String,
        #[arg(long, default_value = "http://127.0.0.1:9090")]
        node: String,
        #[arg(long)]
        hex: bool,
        #[arg(long, env = "STAVE_KEYRING", default_value_t = keys::default_keyring())]
        keyring_dir: String,
        #[command(flatten)]
        v: VerifyArgs,
    },
    /// One page of SIGNER's entries.
    List {
        signer: String,
        #[arg(long, default_value = "")]
        start_after: String,
        #[arg(long, default_value_t = 100)]
        limit: u32,
        #[arg(long, default_value = "http://127.0.0.1:9090")]
        node: String,
        #[arg(long)]
        hex: bool,
        #[arg(long, env = "STAVE_KEYRING", default_value_t = keys::default_keyring())]
        keyring_dir: String,
    },
}

/// A hex public key, or the public key of a keyring entry.
pub(super) fn resolve_pubkey(who: &str, keyring: &str) -> anyhow::Result<Vec<u8>> {
    if who.len() == 64 {
        if let Ok(b) = hex::decode(who) {
            return Ok(b);
        }
    }
    Ok(keys::load(keyring, who)?
        .verifying_key()
        .to_bytes()
        .to_vec())
}

fn show(bytes: &[u8], hex_mode: bool) -> String {
    match (hex_mode, std::str::from_utf8(bytes)) {
        (false, Ok(s)) => s.to_string(),
        _ => hex::encode(bytes),
    }
}

pub async fn run(cmd: QueryCmd, out: Output) -> anyhow::Result<()> {
    match cmd {
        QueryCmd::Governance(q) => super::governance::run_query(q, out).await?,
        QueryCmd::Groups(q) => return super::groups::run_query(q, out).await,
        QueryCmd::Casbin(c) => return super::casbin::run_query(c, out).await,
        QueryCmd::Rights(r) => return super::rights_query::run_query(r, out).await,
        QueryCmd::Release(r) => return super::release::query_release(r, out).await,
        QueryCmd::Releases(r) => return super::release::query_releases(r, out).await,
        QueryCmd::Kv(KvQuery::Tokens {
            key,
            controller,
            protocol_id,
            tags,
            mode,
            limit,
            skip,
            sort,
            node,
            v,
        }) => {
            let req = crate::proto::kv::LookupRequest {
                key,
                controller,
                protocol_id,
                tags,
                tag_query_mode: mode,
                limit,
                skip,
                sort_order: sort,
                prove: v.verify,
            };
            super::kv::query_tokens(&node, req, &v, out).await?;
        }
        QueryCmd::Kv(KvQuery::History {
            key,
            protocol_id,
            controller,
            from,
            limit,
            node,
        }) => {
            let req = crate::proto::kv::HistoryRequest {
                protocol_id,
                key,
                controller,
                from,
                limit,
            };
            super::kv::query_history(&node, req, out).await?;
        }
        QueryCmd::Kvdb(q) => {
            let owner = resolve_pubkey(&q.owner, &q.keyring_dir)?;
            super::kv::query_kvdb(q, owner, out).await?;
        }
        QueryCmd::Local(c) => return super::local::run(c, out).await,
        QueryCmd::Status { node } => {
            let s = StaveClient::connect(&node)
                .await?
                .query
                .status(StatusRequest {})
                .await?
                .into_inner();
            out.print(&json!({"chain_id": s.chain_id, "height": s.height, "app_hash": s.app_hash,
                "earliest_height": s.earliest_height, "app_version": s.app_version, "schema_version": s.schema_version}));
        }
        QueryCmd::Account {
            who,
            node,
            keyring_dir,
            v,
        } => {
            let pubkey = resolve_pubkey(&who, &keyring_dir)?;
            let req = AccountRequest {
                pubkey: pubkey.clone(),
                prove: v.verify,
            };
            let a = StaveClient::connect(&node)
                .await?
                .query
                .account(req.clone())
                .await?
                .into_inner();
            let ok = v.check(&req, &a, answers::account).await?;
            let mut shown = json!({"pubkey": hex::encode(pubkey), "found": a.found, "nonce": a.nonce,
                "created_height": a.created_height, "created_at": a.created_at, "stored_bytes": a.stored_bytes,
                "quota": a.quota, "height": a.height});
            if !a.acts_as.is_empty() {
                // a rotated operator key: the account is its validator's
                shown["acts_as"] = json!(hex::encode(&a.acts_as));
            }
            if a.retired || !a.acts_as.is_empty() {
                shown["retired"] = json!(a.retired);
            }
            // next_nonce counts the node's mempool: never proven.
            let key = if ok.is_some() {
                "unverified"
            } else {
                "next_nonce"
            };
            shown[key] = if ok.is_some() {
                json!({"next_nonce": a.next_nonce})
            } else {
                json!(a.next_nonce)
            };
            // an account's created_at is a block time in Unix nanoseconds
            let nanos = crate::cli::output::Unit::UnixNanos;
            out.print_as(&with_verified(shown, ok), &[("created_at", nanos)]);
        }
        QueryCmd::Kv(KvQuery::Get {
            signer,
            key,
            node,
            hex,
            keyring_dir,
            v,
        }) => {
            let signer = resolve_pubkey(&signer, &keyring_dir)?;
            let req = KvGetRequest {
                signer,
                key: arg_bytes(&key, hex)?,
                prove: v.verify,
            };
            let r = StaveClient::connect(&node)
                .await?
                .query
                .kv_get(req.clone())
                .await?
                .into_inner();
            let ok = v.check(&req, &r, answers::kv_get).await?;
            out.print(&with_verified(json!({"found": r.found, "kind": r.kind, "value": show(&r.value, hex), "updated_height": r.updated_height, "height": r.height}), ok));
            anyhow::ensure!(r.found, "key not found");
        }
        QueryCmd::Kv(KvQuery::List {
            signer,
            start_after,
            limit,
            node,
            hex,
            keyring_dir,
        }) => {
            let signer = resolve_pubkey(&signer, &keyring_dir)?;
            let req = KvListRequest {
                signer,
                start_after: arg_bytes(&start_after, hex)?,
                limit,
            };
            let r = StaveClient::connect(&node)
                .await?
                .query
                .kv_list(req)
                .await?
                .into_inner();
            let entries: Vec<_> = r.entries.iter().map(|e| json!({"key": show(&e.key, hex), "kind": e.kind, "value": show(&e.value, hex), "updated_height": e.updated_height})).collect();
            out.print(&json!({"entries": entries, "next_key": show(&r.next_key, hex), "height": r.height}));
        }
    }
    Ok(())
}
