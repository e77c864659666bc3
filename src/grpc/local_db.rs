//! `stave.replica.v1.LocalDbService` on the admin socket: this node's
//! writes to its replica, merged reads, and the replication's status
//! ([`crate::replica`]). `ReplicaQueryService.Holders` (public) says which
//! validators announce a cid. Calls run on the blocking pool.
//!
//! Status codes: a malformed op, database name or key is
//! `INVALID_ARGUMENT` (nothing is written); this node not being a current
//! validator is `FAILED_PRECONDITION`; a WRONGTYPE write is reported in its
//! op's result, and the call's other ops apply.

use std::sync::Arc;

use tonic::{Request, Response, Status};

use crate::crdt::{View, Visible};
use crate::local::peer_auth::now_ms;
use crate::proto::replica as pb;
use crate::proto::replica::local_db_service_server::LocalDbService;
use crate::proto::replica::replica_query_service_server::ReplicaQueryService;
use crate::replica::db::DbOp;
use crate::replica::{Replica, ReplicaError};

#[derive(Clone)]
pub struct LocalDbServiceImpl {
    pub replica: Arc<Replica>,
}

fn status(e: ReplicaError) -> Status {
    let msg = e.to_string();
    match e {
        ReplicaError::Invalid(_) => Status::invalid_argument(msg),
        ReplicaError::NotValidator(_) => Status::failed_precondition(msg),
        ReplicaError::Local(_) | ReplicaError::Chain(_) => Status::internal(msg),
    }
}

impl LocalDbServiceImpl {
    async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Replica) -> Result<T, ReplicaError> + Send + 'static,
    ) -> Result<Response<T>, Status> {
        let r = self.replica.clone();
        tokio::task::spawn_blocking(move || f(&r))
            .await
            .map_err(|e| Status::internal(e.to_string()))?
            .map(Response::new)
            .map_err(status)
    }
}

/// The wire form of a merged value.
pub fn value_pb(v: View) -> pb::DbValue {
    use pb::db_value::Kind;
    let kind = match v.value {
        Visible::Value(b) => Kind::Value(b),
        Visible::List(items) => Kind::List(pb::DbList { items }),
        Visible::Hash(h) => Kind::Hash(pb::DbHash {
            fields: h
                .into_iter()
                .map(|(field, value)| pb::DbPair { field, value })
                .collect(),
        }),
        Visible::Set(s) => Kind::Set(pb::DbMembers {
            members: s.into_iter().collect(),
        }),
        Visible::ZSet(z) => Kind::Zset(pb::DbZSet {
            members: z
                .into_iter()
                .map(|(member, score)| pb::DbScore { member, score })
                .collect(),
        }),
        Visible::Counter(n) => Kind::Counter(n.to_string()),
    };
    pb::DbValue {
        kind: Some(kind),
        expire_at_ms: v.expire_at.unwrap_or(0),
    }
}

#[tonic::async_trait]
impl LocalDbService for LocalDbServiceImpl {
    async fn write(
        &self,
        request: Request<pb::DbWriteRequest>,
    ) -> Result<Response<pb::DbWriteResponse>, Status> {
        let ops = request
            .into_inner()
            .ops
            .into_iter()
            .map(DbOp::try_from)
            .collect::<Result<Vec<_>, _>>()
            .map_err(status)?;
        self.run(move |r| {
            let (outcomes, records) = r.write(&ops)?;
            Ok(pb::DbWriteResponse {
                results: outcomes.iter().map(|o| o.to_pb()).collect(),
                records: records as u32,
            })
        })
        .await
    }

    async fn get(
        &self,
        request: Request<pb::DbGetRequest>,
    ) -> Result<Response<pb::DbGetResponse>, Status> {
        let q = request.into_inner();
        self.run(move |r| {
            let (view, owners) = r.read(&q.db, &q.key, now_ms())?;
            Ok(pb::DbGetResponse {
                found: view.is_some(),
                value: view.map(value_pb),
                owners: owners.iter().map(|o| o.to_vec()).collect(),
            })
        })
        .await
    }

    async fn keys(
        &self,
        request: Request<pb::DbKeysRequest>,
    ) -> Result<Response<pb::DbKeysResponse>, Status> {
        let q = request.into_inner();
        self.run(move |r| {
            crate::replica::codec::check_db(&q.db)?;
            let limit = match q.limit {
                0 => 1_000,
                n => n.min(1_000) as usize,
            };
            let (keys, more) = r.records.keys(&q.db, &q.start_after, limit)?;
            Ok(pb::DbKeysResponse { keys, more })
        })
        .await
    }

    async fn replicas(
        &self,
        _request: Request<pb::ReplicasRequest>,
    ) -> Result<Response<pb::ReplicasResponse>, Status> {
        self.run(|r| {
            let (records, stored_bytes) = r.records.footprint();
            let params = r.params()?;
            Ok(pb::ReplicasResponse {
                peers: r.stats.to_pb(),
                records,
                own_records: r.own_count(),
                stored_bytes,
                pow_base: params.pow_base,
                horizon_ms: params.horizon_ms(),
                root_crc: r.records.summary(&[]).crc,
            })
        })
        .await
    }
}

#[tonic::async_trait]
impl ReplicaQueryService for LocalDbServiceImpl {
    async fn holders(
        &self,
        request: Request<pb::HoldersRequest>,
    ) -> Result<Response<pb::HoldersResponse>, Status> {
        let cid = request.into_inner().cid;
        if cid.is_empty() || cid.len() > 128 {
            return Err(Status::invalid_argument("cid must be 1-128 bytes"));
        }
        self.run(move |r| {
            Ok(pb::HoldersResponse {
                holders: r.holders(&cid)?,
            })
        })
        .await
    }
}
