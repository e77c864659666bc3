//! `GovernanceService`: validator records with their pending effect on
//! CometBFT's set, over the latest committed state.

// tonic's `Status` is large; it is the error type every handler must return.
#![allow(clippy::result_large_err)]

use tonic::{Request, Response, Status};

use super::query::{blocking, internal, key32};
use crate::keyspaces::validators::{query, ValidatorsRead};
use crate::proto::governance::{
    governance_service_server::GovernanceService, ValidatorRequest, ValidatorResponse,
    ValidatorSetRequest, ValidatorSetResponse, ValidatorsRequest, ValidatorsResponse,
};
use crate::store::ChainStore;

pub struct GovernanceServiceImpl {
    pub store: ChainStore,
}

#[tonic::async_trait]
impl GovernanceService for GovernanceServiceImpl {
    async fn validator(
        &self,
        req: Request<ValidatorRequest>,
    ) -> Result<Response<ValidatorResponse>, Status> {
        let op = key32("operator_key", &req.into_inner().operator_key)?;
        let store = self.store.clone();
        blocking(move || {
            let view = store.view();
            let height = view.commit_info().map_err(internal)?.height.unwrap_or(0);
            let v = query::get(&view, &op).map_err(internal)?;
            Ok(Response::new(ValidatorResponse {
                found: v.is_some(),
                validator: v,
                height,
            }))
        })
        .await
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
}
