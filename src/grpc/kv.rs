//! `KvService`: KV token lookup, history and tuple state, and kvdb reads,
//! all over the latest committed state (kvdb at the last block's time).

// tonic's `Status` is large; it is the error type every handler must return.
#![allow(clippy::result_large_err)]

use tonic::{Request, Response, Status};

use super::answers;
use super::query::{answer, blocking, internal, key32};
use crate::keyspaces::kv::db::{now_ms, parse_score, query as dbq, At};
use crate::keyspaces::kv::token::{query, StoredToken, TokenRead};
use crate::keyspaces::kv::{KvError, KvType};
use crate::proto::kv::{
    kv_service_server::KvService, HistoryRequest, HistoryResponse, KvdbPair, KvdbRequest,
    KvdbResponse, LookupRequest, LookupResponse, TokenView, TupleRequest, TupleResponse,
};
use crate::store::{ChainStore, View};

pub struct KvServiceImpl {
    pub store: ChainStore,
}

/// The served form of a stored token.
pub fn token_view(t: StoredToken) -> TokenView {
    TokenView {
        token_id: t.id.to_vec(),
        generation: t.generation,
        created_height: t.created_height,
        seq: t.seq,
        spent_height: t.spent_height,
        spent_by: t.spent_by.map(|b| b.to_vec()).unwrap_or_default(),
        op: t.op,
        replaces: t.replaces.map(|b| b.to_vec()).unwrap_or_default(),
        token: Some(t.token.into()),
    }
}

fn height(view: &View<'_>) -> Result<u64, Status> {
    Ok(view.commit_info().map_err(internal)?.height.unwrap_or(0))
}

fn opt(s: String) -> Option<String> {
    (!s.is_empty()).then_some(s)
}

/// The domain lookup of a request.
pub fn to_lookup(r: LookupRequest) -> Result<query::Lookup, Status> {
    let any = match r.tag_query_mode.as_str() {
        "" | "all" => false,
        "any" => true,
        m => {
            return Err(Status::invalid_argument(format!(
                "tag_query_mode {m:?}: all or any"
            )))
        }
    };
    let desc = match r.sort_order.as_str() {
        "" | "asc" => false,
        "desc" => true,
        s => {
            return Err(Status::invalid_argument(format!(
                "sort_order {s:?}: asc or desc"
            )))
        }
    };
    Ok(query::Lookup {
        key: opt(r.key),
        controller: opt(r.controller),
        protocol_id: opt(r.protocol_id),
        tags: r.tags,
        any,
        limit: r.limit,
        skip: r.skip,
        desc,
    })
}

#[tonic::async_trait]
impl KvService for KvServiceImpl {
    async fn lookup(
        &self,
        req: Request<LookupRequest>,
    ) -> Result<Response<LookupResponse>, Status> {
        answer(&self.store, req.into_inner(), answers::lookup).await
    }

    async fn history(
        &self,
        req: Request<HistoryRequest>,
    ) -> Result<Response<HistoryResponse>, Status> {
        let r = req.into_inner();
        let store = self.store.clone();
        blocking(move || {
            let view = store.view();
            let (tokens, next) = query::history(
                &view,
                &r.protocol_id,
                &r.key,
                &r.controller,
                r.from,
                r.limit,
            )
            .map_err(internal)?;
            Ok(Response::new(HistoryResponse {
                tokens: tokens.into_iter().map(token_view).collect(),
                more: next.is_some(),
                next: next.unwrap_or(0),
                height: height(&view)?,
            }))
        })
        .await
    }

    async fn tuple(&self, req: Request<TupleRequest>) -> Result<Response<TupleResponse>, Status> {
        let r = req.into_inner();
        let store = self.store.clone();
        blocking(move || {
            let view = store.view();
            let tuple =
                crate::keyspaces::kv::token::tuple_hash(&r.protocol_id, &r.key, &r.controller);
            let rec = view.tuple(&tuple).map_err(internal)?;
            let live = match rec.live {
                None => None,
                Some(id) => view.stored_token(&id).map_err(internal)?.map(token_view),
            };
            Ok(Response::new(TupleResponse {
                generation: rec.generation,
                live,
                history_len: rec.history_len,
                height: height(&view)?,
            }))
        })
        .await
    }

    async fn kvdb(&self, req: Request<KvdbRequest>) -> Result<Response<KvdbResponse>, Status> {
        let r = req.into_inner();
        let owner = key32("owner", &r.owner)?;
        let store = self.store.clone();
        blocking(move || {
            let view = store.view();
            let ci = view.commit_info().map_err(internal)?;
            let now = now_ms(ci.block_time_ns().map_err(internal)?);
            let mut resp = kvdb_read(&view, &owner, now, &r).map_err(read_status)?;
            resp.height = ci.height.unwrap_or(0);
            Ok(Response::new(resp))
        })
        .await
    }
}

fn read_status(e: dbq::ReadError) -> Status {
    match e {
        dbq::ReadError::Store(s) => internal(s),
        dbq::ReadError::Kv(k) => Status::failed_precondition(k.to_string()),
    }
}

fn score_arg(s: &str, default: i128) -> Result<i128, dbq::ReadError> {
    if s.is_empty() {
        return Ok(default);
    }
    Ok(parse_score(s)?)
}

fn pairs(rows: Vec<(Vec<u8>, Vec<u8>)>) -> Vec<KvdbPair> {
    rows.into_iter()
        .map(|(key, value)| KvdbPair { key, value })
        .collect()
}

fn found(value: Option<Vec<u8>>) -> KvdbResponse {
    KvdbResponse {
        found: value.is_some(),
        value: value.unwrap_or_default(),
        ..Default::default()
    }
}

fn number(n: i64) -> KvdbResponse {
    KvdbResponse {
        found: true,
        number: n,
        ..Default::default()
    }
}

/// Answers one kvdb read.
pub fn kvdb_read(
    view: &View<'_>,
    owner: &[u8; 32],
    now: i64,
    r: &KvdbRequest,
) -> Result<KvdbResponse, dbq::ReadError> {
    let at = At {
        owner,
        db: &r.db,
        key: &r.key,
    };
    let limit = if r.limit == 0 { 100 } else { r.limit as usize };
    let list = |t: KvType| -> Result<KvdbResponse, dbq::ReadError> {
        let (rows, next) = dbq::members(view, at, now, t, &r.arg, limit)?;
        Ok(KvdbResponse {
            found: true,
            items: pairs(rows),
            next: next.unwrap_or_default(),
            ..Default::default()
        })
    };
    let len = |t: KvType| Ok::<_, dbq::ReadError>(number(dbq::len(view, at, now, t)? as i64));
    Ok(match r.op.to_ascii_uppercase().as_str() {
        "GET" => found(dbq::get(view, at, now)?),
        "EXISTS" => number(dbq::entry(view, at, now)?.is_some() as i64),
        "TYPE" => match dbq::entry(view, at, now)? {
            Some(e) => KvdbResponse {
                found: true,
                r#type: e.kind.name().into(),
                ..Default::default()
            },
            None => KvdbResponse {
                r#type: "none".into(),
                ..Default::default()
            },
        },
        "TTL" => number(dbq::ttl(view, at, now)?),
        "KEYS" => {
            let (keys, next) = dbq::keys_page(view, owner, &r.db, &r.arg, limit, now)?;
            let items = keys
                .into_iter()
                .map(|key| KvdbPair {
                    key,
                    value: Vec::new(),
                })
                .collect();
            KvdbResponse {
                found: true,
                items,
                next: next.unwrap_or_default(),
                ..Default::default()
            }
        }
        "HGET" => found(dbq::member(view, at, now, KvType::Hash, &r.arg)?),
        "HGETALL" => list(KvType::Hash)?,
        "HLEN" => len(KvType::Hash)?,
        "SISMEMBER" => number(dbq::member(view, at, now, KvType::Set, &r.arg)?.is_some() as i64),
        "SMEMBERS" => list(KvType::Set)?,
        "SCARD" => len(KvType::Set)?,
        "ZSCORE" => found(dbq::zscore(view, at, now, &r.arg)?.map(String::into_bytes)),
        "ZRANGE" => {
            let (min, max) = (score_arg(&r.min, i128::MIN)?, score_arg(&r.max, i128::MAX)?);
            let rows = dbq::zrange_by_score(view, at, now, min, max, limit)?;
            let items = rows
                .into_iter()
                .map(|(key, s)| KvdbPair {
                    key,
                    value: s.into_bytes(),
                })
                .collect();
            KvdbResponse {
                found: true,
                items,
                ..Default::default()
            }
        }
        "ZCARD" => len(KvType::ZSet)?,
        "LRANGE" => {
            let rows = dbq::lrange(view, at, now, r.start, r.stop)?;
            let items = rows
                .into_iter()
                .map(|value| KvdbPair {
                    key: Vec::new(),
                    value,
                })
                .collect();
            KvdbResponse {
                found: true,
                items,
                ..Default::default()
            }
        }
        "LLEN" => len(KvType::List)?,
        other => return Err(KvError::BadField(format!("unknown kvdb read {other:?}")).into()),
    })
}
