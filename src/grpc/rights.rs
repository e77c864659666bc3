//! `RightsService`: reads of the content and rights keyspaces and the
//! access decision, over the latest committed state (one consistent view
//! per request).

// tonic's `Status` is large; it is the error type every handler must return.
#![allow(clippy::result_large_err)]

use tonic::{Request, Response, Status};

use super::answers;
use super::query::{answer, internal, key32, read};
use crate::keyspaces::casbin::CacheUse;
use crate::keyspaces::entitlements::{self};
use crate::keyspaces::params::ParamsRead;
use crate::keyspaces::releases::{self};
use crate::keyspaces::rights::{access, block_secs, is_territory, RightsError};
use crate::proto::rights::{
    rights_service_server::RightsService, CheckAccessRequest, CheckAccessResponse, CidRequest,
    DekResponse, EntitlementRequest, EntitlementResponse, EntitlementsResponse, GrantsResponse,
    ListByCidRequest, ListByKeyRequest, ListByPartyRequest, ListVersionsRequest, PolicyResponse,
    ReleaseRequest, ReleaseResponse, ReleasesResponse, UploadResponse,
};
use crate::store::{ChainStore, View};

pub struct RightsServiceImpl {
    pub store: ChainStore,
}

/// The answer to `CheckAccess` at the view's height and block time.
///
/// # Errors
/// `UNIMPLEMENTED` for a PROGRAMMABLE policy ("unsupported policy type"),
/// never allow or deny.
pub fn check_access(
    view: &View<'_>,
    req: &CheckAccessRequest,
) -> Result<CheckAccessResponse, Status> {
    let consumer = key32("consumer_pubkey", &req.consumer_pubkey)?;
    if !is_territory(&req.territory) {
        return Err(Status::invalid_argument(format!(
            "territory {:?} is not an ISO 3166-1 alpha-2 code",
            req.territory
        )));
    }
    if !req.context.is_empty() {
        let params = view.params().map_err(internal)?.unwrap_or_default();
        entitlements::scope::check_conditions("request context", &req.context, &params.rights)
            .map_err(|e| Status::invalid_argument(e.to_string()))?;
    }
    let info = view.commit_info().map_err(internal)?;
    let now = block_secs(info.block_time_ns().map_err(internal)?);
    let (cid, ctx) = (&req.cid, &req.context);
    let areq = access::AccessRequest {
        cid,
        consumer: &consumer,
        territory: &req.territory,
        use_type: req.use_type,
        now,
        context: ctx,
    };
    let d = access::decide_with(view, &areq, CacheUse::Query).map_err(internal)?;
    let policy_type = d.policy_type.into();
    let height = info.height.unwrap_or(0);
    match d.outcome {
        Ok(reason) => Ok(CheckAccessResponse {
            allowed: true,
            reason,
            code: 0,
            height,
            policy_type,
        }),
        Err(e @ RightsError::UnsupportedPolicyType(_)) => Err(Status::unimplemented(e.to_string())),
        Err(e) => Ok(CheckAccessResponse {
            allowed: false,
            reason: e.to_string(),
            code: e.code().value(),
            height,
            policy_type,
        }),
    }
}

#[tonic::async_trait]
impl RightsService for RightsServiceImpl {
    async fn get_upload(
        &self,
        req: Request<CidRequest>,
    ) -> Result<Response<UploadResponse>, Status> {
        answer(&self.store, req.into_inner(), answers::get_upload).await
    }

    async fn get_dek(&self, req: Request<CidRequest>) -> Result<Response<DekResponse>, Status> {
        answer(&self.store, req.into_inner(), answers::get_dek).await
    }

    async fn get_release(
        &self,
        req: Request<ReleaseRequest>,
    ) -> Result<Response<ReleaseResponse>, Status> {
        answer(&self.store, req.into_inner(), answers::get_release).await
    }

    async fn releases_by_cid(
        &self,
        req: Request<ListByCidRequest>,
    ) -> Result<Response<ReleasesResponse>, Status> {
        answer(&self.store, req.into_inner(), answers::releases_by_cid).await
    }

    async fn releases_by_party(
        &self,
        req: Request<ListByPartyRequest>,
    ) -> Result<Response<ReleasesResponse>, Status> {
        let r = req.into_inner();
        read(&self.store, move |v, height| {
            let (releases, next_cursor) =
                releases::query::by_party(v, &r.party, &r.cursor, r.limit).map_err(internal)?;
            Ok(ReleasesResponse {
                releases,
                next_cursor,
                height,
                ..Default::default()
            })
        })
        .await
    }

    async fn release_versions(
        &self,
        req: Request<ListVersionsRequest>,
    ) -> Result<Response<ReleasesResponse>, Status> {
        let r = req.into_inner();
        read(&self.store, move |v, height| {
            let (releases, next_cursor) =
                releases::query::versions(v, &r.release_id, &r.cursor, r.limit)
                    .map_err(internal)?;
            Ok(ReleasesResponse {
                releases,
                next_cursor,
                height,
                ..Default::default()
            })
        })
        .await
    }

    async fn get_policy(
        &self,
        req: Request<CidRequest>,
    ) -> Result<Response<PolicyResponse>, Status> {
        answer(&self.store, req.into_inner(), answers::get_policy).await
    }

    async fn get_entitlement(
        &self,
        req: Request<EntitlementRequest>,
    ) -> Result<Response<EntitlementResponse>, Status> {
        answer(&self.store, req.into_inner(), answers::get_entitlement).await
    }

    async fn entitlements_by_cid(
        &self,
        req: Request<ListByCidRequest>,
    ) -> Result<Response<EntitlementsResponse>, Status> {
        answer(&self.store, req.into_inner(), answers::entitlements_by_cid).await
    }

    async fn entitlements_by_key(
        &self,
        req: Request<ListByKeyRequest>,
    ) -> Result<Response<EntitlementsResponse>, Status> {
        answer(&self.store, req.into_inner(), answers::entitlements_by_key).await
    }

    async fn grants_by_cid(
        &self,
        req: Request<ListByCidRequest>,
    ) -> Result<Response<GrantsResponse>, Status> {
        answer(&self.store, req.into_inner(), answers::grants_by_cid).await
    }

    async fn under_replicated(
        &self,
        req: Request<crate::proto::rights::PageRequest>,
    ) -> Result<Response<crate::proto::rights::UnderReplicatedResponse>, Status> {
        let r = req.into_inner();
        read(&self.store, move |v, height| {
            let (uploads, next) =
                crate::keyspaces::uploads::query::under_replicated(v, &r.cursor, r.limit)
                    .map_err(internal)?;
            Ok(crate::proto::rights::UnderReplicatedResponse {
                uploads,
                next_cursor: next.unwrap_or_default(),
                height,
            })
        })
        .await
    }

    async fn grants_by_key(
        &self,
        req: Request<ListByKeyRequest>,
    ) -> Result<Response<GrantsResponse>, Status> {
        answer(&self.store, req.into_inner(), answers::grants_by_key).await
    }

    async fn check_access(
        &self,
        req: Request<CheckAccessRequest>,
    ) -> Result<Response<CheckAccessResponse>, Status> {
        let req = req.into_inner();
        read(&self.store, move |v, _| check_access(v, &req)).await
    }
}
