//! `stave local db ...`: this validator's replicated CAD037 databases
//! (docs/replica.md) over the admin socket. Writes go to this node's own
//! record and reach the other validators by anti-entropy; reads merge
//! every current validator's record. Keys, members and values are UTF-8
//! on the command line; bytes that are not UTF-8 print as hex.

use std::path::PathBuf;

use serde_json::{json, Value};

use super::Output;
use crate::proto::replica as pb;
use pb::db_op::Op;

/// Which node and which database.
#[derive(clap::Args, Debug)]
pub struct At {
    /// The node's home; the call goes to `<home>/admin.sock`.
    #[arg(long, env = "STAVE_HOME")]
    home: PathBuf,
    /// The database: 1 to 64 bytes of letters, digits and `. _ : -`.
    #[arg(long)]
    db: String,
}

#[derive(clap::Subcommand, Debug)]
pub enum DbCmd {
    /// A key's merged value.
    Get {
        #[command(flatten)]
        at: At,
        key: String,
    },
    /// The database's keys in order.
    Keys {
        #[command(flatten)]
        at: At,
        #[arg(long, default_value = "")]
        start_after: String,
        /// At most this many (at most 1,000).
        #[arg(long, default_value_t = 100)]
        limit: u32,
    },
    /// SET, with an optional deadline (Unix ms).
    Set {
        #[command(flatten)]
        at: At,
        key: String,
        value: String,
        #[arg(long, default_value_t = 0)]
        expire_at_ms: u64,
    },
    /// DEL: a tombstone.
    Del {
        #[command(flatten)]
        at: At,
        key: String,
    },
    Hset {
        #[command(flatten)]
        at: At,
        key: String,
        field: String,
        value: String,
    },
    Hdel {
        #[command(flatten)]
        at: At,
        key: String,
        field: String,
    },
    Sadd {
        #[command(flatten)]
        at: At,
        key: String,
        #[arg(required = true)]
        members: Vec<String>,
    },
    Srem {
        #[command(flatten)]
        at: At,
        key: String,
        #[arg(required = true)]
        members: Vec<String>,
    },
    Zadd {
        #[command(flatten)]
        at: At,
        key: String,
        member: String,
        #[arg(allow_hyphen_values = true)]
        score: i64,
    },
    Zrem {
        #[command(flatten)]
        at: At,
        key: String,
        #[arg(required = true)]
        members: Vec<String>,
    },
    /// INCRBY (a negative amount decrements) on this validator's counter.
    Incr {
        #[command(flatten)]
        at: At,
        key: String,
        #[arg(long, default_value_t = 1, allow_hyphen_values = true)]
        by: i64,
    },
    /// EXPIRE at a Unix ms deadline, or PERSIST with 0.
    Expire {
        #[command(flatten)]
        at: At,
        key: String,
        at_ms: u64,
    },
}

fn text(bytes: &[u8]) -> Value {
    match std::str::from_utf8(bytes) {
        Ok(s) => json!(s),
        Err(_) => json!({ "hex": hex::encode(bytes) }),
    }
}

fn bytes(v: Vec<String>) -> Vec<Vec<u8>> {
    v.into_iter().map(String::into_bytes).collect()
}

/// The JSON form of a merged value.
pub fn value_json(v: &pb::DbValue) -> Value {
    use pb::db_value::Kind;
    let (kind, value) = match &v.kind {
        None => ("none", Value::Null),
        Some(Kind::Value(b)) => ("value", text(b)),
        Some(Kind::List(l)) => (
            "list",
            json!(l.items.iter().map(|i| text(i)).collect::<Vec<_>>()),
        ),
        Some(Kind::Hash(h)) => (
            "hash",
            Value::Object(
                h.fields
                    .iter()
                    .map(|p| {
                        (
                            String::from_utf8_lossy(&p.field).into_owned(),
                            text(&p.value),
                        )
                    })
                    .collect(),
            ),
        ),
        Some(Kind::Set(s)) => (
            "set",
            json!(s.members.iter().map(|m| text(m)).collect::<Vec<_>>()),
        ),
        Some(Kind::Zset(z)) => (
            "zset",
            json!(z
                .members
                .iter()
                .map(|m| json!({"member": text(&m.member), "score": m.score}))
                .collect::<Vec<_>>()),
        ),
        Some(Kind::Counter(n)) => ("counter", json!(n)),
    };
    let mut out = json!({"type": kind, "value": value});
    if v.expire_at_ms != 0 {
        out["expire_at_ms"] = json!(v.expire_at_ms);
    }
    out
}

/// The op a write subcommand names, and its home.
fn op_of(cmd: DbCmd) -> Result<(PathBuf, pb::DbOp), DbCmd> {
    let (at, key, op) = match cmd {
        DbCmd::Set {
            at,
            key,
            value,
            expire_at_ms,
        } => (
            at,
            key,
            Op::Set(pb::DbSet {
                value: value.into_bytes(),
                expire_at_ms,
            }),
        ),
        DbCmd::Del { at, key } => (at, key, Op::Del(pb::DbDel {})),
        DbCmd::Hset {
            at,
            key,
            field,
            value,
        } => (
            at,
            key,
            Op::Hset(pb::DbHSet {
                field: field.into_bytes(),
                value: value.into_bytes(),
            }),
        ),
        DbCmd::Hdel { at, key, field } => (
            at,
            key,
            Op::Hdel(pb::DbHDel {
                field: field.into_bytes(),
            }),
        ),
        DbCmd::Sadd { at, key, members } => (
            at,
            key,
            Op::Sadd(pb::DbMembers {
                members: bytes(members),
            }),
        ),
        DbCmd::Srem { at, key, members } => (
            at,
            key,
            Op::Srem(pb::DbMembers {
                members: bytes(members),
            }),
        ),
        DbCmd::Zadd {
            at,
            key,
            member,
            score,
        } => (
            at,
            key,
            Op::Zadd(pb::DbZAdd {
                member: member.into_bytes(),
                score,
            }),
        ),
        DbCmd::Zrem { at, key, members } => (
            at,
            key,
            Op::Zrem(pb::DbMembers {
                members: bytes(members),
            }),
        ),
        DbCmd::Incr { at, key, by } => (at, key, Op::Incr(pb::DbIncr { amount: by })),
        DbCmd::Expire { at, key, at_ms } => (at, key, Op::Expire(pb::DbExpire { at_ms })),
        other => return Err(other),
    };
    let op = pb::DbOp {
        db: at.db,
        key: key.into_bytes(),
        op: Some(op),
    };
    Ok((at.home, op))
}

fn socket(home: PathBuf) -> PathBuf {
    crate::config::Home::new(home).admin_socket()
}

pub async fn run(cmd: DbCmd, out: Output) -> anyhow::Result<()> {
    let v = match op_of(cmd) {
        Ok((home, op)) => {
            let mut c = crate::client::admin_db_client(&socket(home)).await?;
            let r = c
                .write(pb::DbWriteRequest { ops: vec![op] })
                .await?
                .into_inner();
            let res = r.results.first().cloned().unwrap_or_default();
            if !res.error.is_empty() {
                anyhow::bail!("{}", res.error);
            }
            let mut v = json!({"records": r.records, "count": res.count});
            if !res.counter.is_empty() {
                v["counter"] = json!(res.counter);
            }
            v
        }
        Err(DbCmd::Get { at, key }) => {
            let mut c = crate::client::admin_db_client(&socket(at.home)).await?;
            let r = c
                .get(pb::DbGetRequest {
                    db: at.db,
                    key: key.into_bytes(),
                })
                .await?
                .into_inner();
            let owners: Vec<_> = r.owners.iter().map(hex::encode).collect();
            match r.value.filter(|_| r.found) {
                None => json!({"found": false, "owners": owners}),
                Some(val) => {
                    let mut v = value_json(&val);
                    v["found"] = json!(true);
                    v["owners"] = json!(owners);
                    v
                }
            }
        }
        Err(DbCmd::Keys {
            at,
            start_after,
            limit,
        }) => {
            let mut c = crate::client::admin_db_client(&socket(at.home)).await?;
            let r = c
                .keys(pb::DbKeysRequest {
                    db: at.db,
                    start_after: start_after.into_bytes(),
                    limit,
                })
                .await?
                .into_inner();
            json!({"keys": r.keys.iter().map(|k| text(k)).collect::<Vec<_>>(), "more": r.more})
        }
        Err(other) => anyhow::bail!("not a write: {other:?}"),
    };
    out.print(&v);
    Ok(())
}
