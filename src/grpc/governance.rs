//! `GovernanceService`: validator records with their pending effect on
//! CometBFT's set, over the latest committed state.

// tonic's `Status` is large; it is the error type every handler must return.
#![allow(clippy::result_large_err)]

use tonic::{Request, Response, Status};

use super::answers;
use super::query::{answer, blocking, internal, key32, read};
use crate::keyspaces::groups;
use crate::keyspaces::takedowns;
use crate::keyspaces::validators::{query, ValidatorsRead};
use crate::proto::governance::{
    governance_service_server::GovernanceService, FlagsRequest, FlagsResponse, GetTakedownRequest,
    GetTakedownResponse, GroupRequest, GroupResponse, GroupsRequest, GroupsResponse,
    UpgradesRequest, UpgradesResponse, ValidatorRequest, ValidatorResponse, ValidatorSetRequest,
    ValidatorSetResponse, ValidatorsRequest, ValidatorsResponse,
};
use crate::store::ChainStore;

pub struct GovernanceServiceImpl {
    pub store: ChainStore,
}

fn page(limit: u32) -> usize {
    match limit {
        0 => groups::MAX_PAGE,
        n => n as usize,
    }
}

#[tonic::async_trait]
impl GovernanceService for GovernanceServiceImpl {
    async fn validator(
        &self,
        req: Request<ValidatorRequest>,
    ) -> Result<Response<ValidatorResponse>, Status> {
        answer(&self.store, req.into_inner(), answers::validator).await
    }

    async fn validators(
        &self,
        req: Request<ValidatorsRequest>,
    ) -> Result<Response<ValidatorsResponse>, Status> {
        let req = req.into_inner();
        let after = match req.start_after.as_slice() {
            [] => None,
            b => Some(key32("start_after", b)?),
        };
        let limit = match req.limit {
            0 => query::MAX_PAGE,
            n => n as usize,
        };
        let store = self.store.clone();
        blocking(move || {
            let view = store.view();
            let height = view.commit_info().map_err(internal)?.height.unwrap_or(0);
            let (validators, next) = query::list(&view, after.as_ref(), limit).map_err(internal)?;
            Ok(Response::new(ValidatorsResponse {
                validators,
                next: next.map(|k| k.to_vec()).unwrap_or_default(),
                height,
            }))
        })
        .await
    }

    async fn validator_set(
        &self,
        _: Request<ValidatorSetRequest>,
    ) -> Result<Response<ValidatorSetResponse>, Status> {
        let store = self.store.clone();
        blocking(move || {
            let view = store.view();
            let height = view.commit_info().map_err(internal)?.height.unwrap_or(0);
            Ok(Response::new(ValidatorSetResponse {
                set: Some(view.comet_set().map_err(internal)?),
                queue: Some(view.update_queue().map_err(internal)?),
                totals: Some(view.validator_totals().map_err(internal)?),
                height,
            }))
        })
        .await
    }

    async fn group(&self, req: Request<GroupRequest>) -> Result<Response<GroupResponse>, Status> {
        answer(&self.store, req.into_inner(), answers::group).await
    }

    async fn groups(
        &self,
        req: Request<GroupsRequest>,
    ) -> Result<Response<GroupsResponse>, Status> {
        let req = req.into_inner();
        read(&self.store, move |v, height| {
            let (groups, next) =
                groups::list(v, &req.start_after, page(req.limit)).map_err(internal)?;
            Ok(GroupsResponse {
                groups,
                next: next.unwrap_or_default(),
                height,
            })
        })
        .await
    }

    async fn takedown(
        &self,
        req: Request<GetTakedownRequest>,
    ) -> Result<Response<GetTakedownResponse>, Status> {
        answer(&self.store, req.into_inner(), answers::takedown).await
    }

    async fn flags(&self, req: Request<FlagsRequest>) -> Result<Response<FlagsResponse>, Status> {
        let req = req.into_inner();
        read(&self.store, move |v, height| {
            let (flags, next) = takedowns::flags_of(v, &req.cid, &req.start_after, page(req.limit))
                .map_err(internal)?;
            Ok(FlagsResponse {
                flags,
                next: next.unwrap_or_default(),
                height,
            })
        })
        .await
    }
    async fn upgrades(
        &self,
        _: Request<UpgradesRequest>,
    ) -> Result<Response<UpgradesResponse>, Status> {
        use crate::keyspaces::upgrades::UpgradesRead;
        read(&self.store, move |v, height| {
            Ok(UpgradesResponse {
                app_version: v.app_version().map_err(internal)?,
                scheduled: v.scheduled_upgrade().map_err(internal)?,
                proposals: v.upgrade_proposals().map_err(internal)?,
                applied: v.upgrades_applied().map_err(internal)?,
                height,
            })
        })
        .await
    }
}
