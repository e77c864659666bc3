//! `stave tx casbin …` and `stave query casbin …`.

use serde_json::json;

use super::tx::{submit, TxOpts};
use super::{keys, Output};
use crate::keyspaces::casbin::{AddCasbinModel, AddCasbinRule, RemoveCasbinRule};
use crate::proto::casbin::casbin_query_service_client::CasbinQueryServiceClient;
use crate::proto::casbin::{EnforceRequest, ModelRequest, RulesRequest};
use crate::tx::Action;

#[derive(clap::Subcommand, Debug)]
pub enum CasbinTx {
    /// Add a model. MODEL is "{owner_hex}/{name}" or just a name under the signer.
    AddModel {
        model: String,
        /// File holding the PERM model text.
        #[arg(long)]
        file: std::path::PathBuf,
        #[command(flatten)]
        opts: TxOpts,
    },
    /// Add a rule in slot INDEX: PTYPE ("p" or "g") and its VALUES.
    AddRule {
        model: String,
        index: u32,
        ptype: String,
        #[arg(required = true)]
        values: Vec<String>,
        #[command(flatten)]
        opts: TxOpts,
    },
    /// Remove the rule in slot INDEX.
    RemoveRule {
        model: String,
        index: u32,
        #[command(flatten)]
        opts: TxOpts,
    },
}

#[derive(clap::Subcommand, Debug)]
pub enum CasbinQuery {
    /// A model, by its full id "{owner_hex}/{name}".
    Model {
        model: String,
        #[arg(long, default_value = "http://127.0.0.1:9090")]
        node: String,
    },
    /// One page of a model's rules, optionally only one subject's.
    Rules {
        model: String,
        #[arg(long)]
        subject: Option<String>,
        #[arg(long)]
        start_after: Option<u32>,
        #[arg(long, default_value_t = 100)]
        limit: u32,
        #[arg(long, default_value = "http://127.0.0.1:9090")]
        node: String,
    },
    /// Evaluate a request against a model with the chain's evaluator.
    Enforce {
        model: String,
        sub: String,
        obj: String,
        act: String,
        #[arg(default_value = "")]
        territory: String,
        #[arg(long, default_value = "http://127.0.0.1:9090")]
        node: String,
    },
}

/// A full model id, or `name` under the `--from` key.
fn full_id(model: &str, opts: &TxOpts) -> anyhow::Result<String> {
    if model.contains('/') {
        return Ok(model.to_string());
    }
    let key = keys::load(&opts.keyring_dir, &opts.from)?;
    Ok(format!(
        "{}/{model}",
        hex::encode(key.verifying_key().to_bytes())
    ))
}

pub async fn run_tx(cmd: CasbinTx, out: Output) -> anyhow::Result<()> {
    let (action, opts) = match cmd {
        CasbinTx::AddModel { model, file, opts } => {
            let perm_model = std::fs::read_to_string(&file)
                .map_err(|e| anyhow::anyhow!("reading {}: {e}", file.display()))?;
            let model_id = full_id(&model, &opts)?;
            (
                Action::AddCasbinModel(AddCasbinModel {
                    model_id,
                    perm_model,
                }),
                opts,
            )
        }
        CasbinTx::AddRule {
            model,
            index,
            ptype,
            values,
            opts,
        } => {
            let model_id = full_id(&model, &opts)?;
            let rule = AddCasbinRule {
                model_id,
                rule_index: index,
                ptype,
                values,
            };
            (Action::AddCasbinRule(rule), opts)
        }
        CasbinTx::RemoveRule { model, index, opts } => {
            let model_id = full_id(&model, &opts)?;
            (
                Action::RemoveCasbinRule(RemoveCasbinRule {
                    model_id,
                    rule_index: index,
                }),
                opts,
            )
        }
    };
    submit(vec![action], &opts, out).await
}

async fn client(node: &str) -> anyhow::Result<CasbinQueryServiceClient<tonic::transport::Channel>> {
    let url = if node.starts_with("http") {
        node.to_string()
    } else {
        format!("http://{node}")
    };
    CasbinQueryServiceClient::connect(url.clone())
        .await
        .map_err(|e| anyhow::anyhow!("connecting to {url}: {e}"))
}

pub async fn run_query(cmd: CasbinQuery, out: Output) -> anyhow::Result<()> {
    match cmd {
        CasbinQuery::Model { model, node } => {
            let r = client(&node)
                .await?
                .model(ModelRequest { model_id: model })
                .await?
                .into_inner();
            let m = r.model.unwrap_or_default();
            out.print(&json!({"found": r.found, "model_id": m.model_id, "owner": hex::encode(&m.owner_pubkey),
                "perm_model": m.perm_model, "rule_indices": m.rule_indices,
                "content_digest": hex::encode(&m.content_digest), "created_height": m.created_height, "height": r.height}));
            anyhow::ensure!(r.found, "model not found");
        }
        CasbinQuery::Rules {
            model,
            subject,
            start_after,
            limit,
            node,
        } => {
            let req = RulesRequest {
                model_id: model,
                subject: subject.unwrap_or_default(),
                start_after: start_after.unwrap_or(0),
                has_start_after: start_after.is_some(),
                limit,
            };
            let r = client(&node).await?.rules(req).await?.into_inner();
            let rules: Vec<_> = r
                .rules
                .iter()
                .map(|x| json!({"rule_index": x.rule_index, "ptype": x.ptype, "values": x.values}))
                .collect();
            out.print(&json!({"rules": rules, "has_more": r.has_more, "next_index": r.next_index, "height": r.height}));
        }
        CasbinQuery::Enforce {
            model,
            sub,
            obj,
            act,
            territory,
            node,
        } => {
            let req = EnforceRequest {
                model_id: model,
                sub,
                obj,
                act,
                territory,
            };
            let r = client(&node).await?.enforce(req).await?.into_inner();
            out.print(&json!({"decision": r.decision, "reason": r.reason, "height": r.height}));
        }
    }
    Ok(())
}
