//! `stave tx kv token …`, `stave tx kvdb …`, `stave query kv tokens|history`
//! and `stave query kvdb`: KV tokens (signed with the client library in
//! `keyspaces::kv::token::client`) and kvdb over gRPC.

use serde_json::json;

use super::tx::{arg_bytes, submit, TxOpts};
use super::{keys, Output};
use crate::client::StaveClient;
use crate::keyspaces::kv::token::client;
use crate::keyspaces::kv::{KvdbAction, KvdbOp};
use crate::proto::kv::{HistoryRequest, KvdbRequest, LookupRequest, TokenView, TupleRequest};
use crate::proto::query::StatusRequest;
use crate::tx::Action;

#[derive(clap::Args, Debug, Clone)]
pub struct Tuple {
    pub key: String,
    /// The canonical protocol id JSON, e.g. '[1,"profile data"]'.
    #[arg(long)]
    pub protocol_id: String,
    /// Controller key name (default: --from); it signs the token.
    #[arg(long)]
    pub controller: Option<String>,
}

#[derive(clap::Subcommand, Debug)]
pub enum TokenTx {
    /// Create the tuple's live token (the tx signer may be a relayer).
    Create {
        #[command(flatten)]
        t: Tuple,
        value: String,
        #[arg(long = "tag")]
        tags: Vec<String>,
        #[command(flatten)]
        opts: TxOpts,
    },
    /// Replace the live token.
    Update {
        #[command(flatten)]
        t: Tuple,
        value: String,
        #[arg(long = "tag")]
        tags: Vec<String>,
        #[command(flatten)]
        opts: TxOpts,
    },
    /// Spend the live token without replacement.
    Delete {
        #[command(flatten)]
        t: Tuple,
        #[command(flatten)]
        opts: TxOpts,
    },
}

/// `stave tx kvdb OP DB KEY [ARGS…]`.
#[derive(clap::Args, Debug)]
pub struct KvdbTx {
    /// set del expire hset hdel sadd srem zadd zrem lpush rpush lpop rpop incrby decrby
    pub op: String,
    pub db: String,
    pub key: String,
    /// set: VALUE; expire: TTL_MS; hset: FIELD VALUE; hdel: FIELD; sadd/srem/zrem: MEMBERS…;
    /// zadd: SCORE MEMBER; lpush/rpush: VALUES…; incrby/decrby: N.
    pub args: Vec<String>,
    /// TTL of `set`, in ms.
    #[arg(long, default_value_t = 0)]
    pub ttl_ms: u64,
    #[command(flatten)]
    pub opts: TxOpts,
}

fn kvdb_op(op: &str, a: &[String], ttl_ms: u64, hex: bool) -> anyhow::Result<KvdbOp> {
    let b = |i: usize| -> anyhow::Result<Vec<u8>> {
        arg_bytes(
            a.get(i)
                .ok_or_else(|| anyhow::anyhow!("{op}: missing argument {}", i + 1))?,
            hex,
        )
    };
    let all = || {
        a.iter()
            .map(|s| arg_bytes(s, hex))
            .collect::<anyhow::Result<Vec<_>>>()
    };
    let num = |i: usize| -> anyhow::Result<i64> { Ok(String::from_utf8(b(i)?)?.parse()?) };
    Ok(match op.to_ascii_lowercase().as_str() {
        "set" => KvdbOp::Set {
            value: b(0)?,
            ttl_ms,
        },
        "del" => KvdbOp::Del,
        "expire" => KvdbOp::Expire {
            ttl_ms: num(0)?.try_into()?,
        },
        "hset" => KvdbOp::HSet {
            field: b(0)?,
            value: b(1)?,
        },
        "hdel" => KvdbOp::HDel { field: b(0)? },
        "sadd" => KvdbOp::SAdd(all()?),
        "srem" => KvdbOp::SRem(all()?),
        "zadd" => KvdbOp::ZAdd {
            score: a.first().cloned().unwrap_or_default(),
            member: b(1)?,
        },
        "zrem" => KvdbOp::ZRem(all()?),
        "lpush" | "rpush" => KvdbOp::Push {
            values: all()?,
            left: op.starts_with('l'),
        },
        "lpop" | "rpop" => KvdbOp::Pop {
            left: op.starts_with('l'),
        },
        "incrby" => KvdbOp::IncrBy(num(0)?),
        "decrby" => KvdbOp::IncrBy(
            num(0)?
                .checked_neg()
                .ok_or_else(|| anyhow::anyhow!("decrby overflows"))?,
        ),
        other => anyhow::bail!("unknown kvdb op {other:?}"),
    })
}

pub async fn run_kvdb(cmd: KvdbTx, out: Output) -> anyhow::Result<()> {
    let op = kvdb_op(&cmd.op, &cmd.args, cmd.ttl_ms, cmd.opts.hex)?;
    let action = Action::Kvdb(KvdbAction {
        db: cmd.db,
        key: arg_bytes(&cmd.key, cmd.opts.hex)?,
        op,
    });
    submit(vec![action], &cmd.opts, out).await
}

pub async fn run_token(cmd: TokenTx, out: Output) -> anyhow::Result<()> {
    let (t, opts) = match &cmd {
        TokenTx::Create { t, opts, .. }
        | TokenTx::Update { t, opts, .. }
        | TokenTx::Delete { t, opts } => (t, opts),
    };
    let ctl = keys::load(
        &opts.keyring_dir,
        t.controller.as_deref().unwrap_or(&opts.from),
    )?;
    let ctl_hex = client::controller_hex(&ctl);
    let mut c = StaveClient::connect(&opts.node).await?;
    let chain = c
        .query
        .status(StatusRequest {})
        .await?
        .into_inner()
        .chain_id;
    let tuple =
        c.kv.tuple(TupleRequest {
            protocol_id: t.protocol_id.clone(),
            key: t.key.clone(),
            controller: ctl_hex,
        })
        .await?
        .into_inner();
    let gen = tuple.generation + 1;
    let live = || -> anyhow::Result<[u8; 32]> {
        let l = tuple
            .live
            .clone()
            .ok_or_else(|| anyhow::anyhow!("the tuple has no live token"))?;
        l.token_id
            .as_slice()
            .try_into()
            .map_err(|_| anyhow::anyhow!("bad live token id"))
    };
    let (pid, key) = (t.protocol_id.as_str(), t.key.as_str());
    let action = match &cmd {
        TokenTx::Create { value, tags, .. } => Action::KvTokenCreate(client::create(
            &ctl,
            &chain,
            pid,
            key,
            value.as_bytes(),
            &client::tags_json(tags),
            gen,
        )),
        TokenTx::Update { value, tags, .. } => Action::KvTokenUpdate(client::update(
            &ctl,
            &chain,
            pid,
            key,
            value.as_bytes(),
            &client::tags_json(tags),
            gen,
            live()?,
        )),
        TokenTx::Delete { .. } => {
            Action::KvTokenDelete(client::delete(&ctl, &chain, pid, key, gen, live()?))
        }
    };
    submit(vec![action], opts, out).await
}

fn token_json(t: &TokenView) -> serde_json::Value {
    let tok = t.token.clone().unwrap_or_default();
    json!({"token_id": hex::encode(&t.token_id), "protocol_id": tok.protocol_id, "key": tok.key,
        "value": String::from_utf8_lossy(&tok.value), "controller": tok.controller, "tags": tok.tags,
        "signature": hex::encode(&tok.signature), "generation": t.generation,
        "created_height": t.created_height, "spent_height": t.spent_height,
        "op": t.op, "replaces": hex::encode(&t.replaces)})
}

/// `stave query kv tokens`.
pub async fn query_tokens(
    node: &str,
    req: LookupRequest,
    v: &super::verify::VerifyArgs,
    out: Output,
) -> anyhow::Result<()> {
    let r = StaveClient::connect(node)
        .await?
        .kv
        .lookup(req.clone())
        .await?
        .into_inner();
    let ok = v.check(&req, &r, crate::grpc::answers::lookup).await?;
    if let Some(ok) = &ok {
        // The proof covers what the chain holds; the signature says the
        // controller wrote it, under the verified chain id.
        for t in &r.tokens {
            crate::keyspaces::kv::token::client::verify_token(&ok.chain_id, t).map_err(|e| {
                anyhow::anyhow!(
                    "verification failed: token {}: {e}",
                    hex::encode(&t.token_id)
                )
            })?;
        }
    }
    let tokens: Vec<_> = r.tokens.iter().map(token_json).collect();
    out.print(&super::verify::with_verified(
        json!({"tokens": tokens, "height": r.height}),
        ok,
    ));
    Ok(())
}

/// `stave query kv history`.
pub async fn query_history(node: &str, req: HistoryRequest, out: Output) -> anyhow::Result<()> {
    let r = StaveClient::connect(node)
        .await?
        .kv
        .history(req)
        .await?
        .into_inner();
    let tokens: Vec<_> = r.tokens.iter().map(token_json).collect();
    out.print(&json!({"history": tokens, "more": r.more, "next": r.next, "height": r.height}));
    Ok(())
}

/// `stave query kvdb OP OWNER DB KEY [ARG]`.
#[derive(clap::Args, Debug)]
pub struct KvdbQuery {
    /// GET EXISTS TYPE TTL KEYS HGET HGETALL HLEN SISMEMBER SMEMBERS SCARD ZSCORE ZRANGE ZCARD LRANGE LLEN
    pub op: String,
    /// Hex public key or key name.
    pub owner: String,
    pub db: String,
    #[arg(default_value = "")]
    pub key: String,
    #[arg(default_value = "")]
    pub arg: String,
    #[arg(long, default_value = "")]
    pub min: String,
    #[arg(long, default_value = "")]
    pub max: String,
    #[arg(long, default_value_t = 0)]
    pub start: i64,
    #[arg(long, default_value_t = -1)]
    pub stop: i64,
    #[arg(long, default_value_t = 0)]
    pub limit: u32,
    #[arg(long, default_value = "http://127.0.0.1:9090")]
    pub node: String,
    #[arg(long, env = "STAVE_KEYRING", default_value_t = keys::default_keyring())]
    pub keyring_dir: String,
}

pub async fn query_kvdb(q: KvdbQuery, owner: Vec<u8>, out: Output) -> anyhow::Result<()> {
    let req = KvdbRequest {
        op: q.op,
        owner,
        db: q.db,
        key: q.key.into_bytes(),
        arg: q.arg.into_bytes(),
        min: q.min,
        max: q.max,
        start: q.start,
        stop: q.stop,
        limit: q.limit,
    };
    let r = StaveClient::connect(&q.node)
        .await?
        .kv
        .kvdb(req)
        .await?
        .into_inner();
    let items: Vec<_> = r
        .items
        .iter()
        .map(|p| {
            json!([
                String::from_utf8_lossy(&p.key),
                String::from_utf8_lossy(&p.value)
            ])
        })
        .collect();
    out.print(&json!({"found": r.found, "value": String::from_utf8_lossy(&r.value), "number": r.number,
        "type": r.r#type, "items": items, "next": String::from_utf8_lossy(&r.next), "height": r.height}));
    Ok(())
}
