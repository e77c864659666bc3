//! `CasbinQueryService`: models, rules and evaluation over the latest
//! committed state.

// tonic's `Status` is large; it is the error type every handler must return.
#![allow(clippy::result_large_err)]

use tonic::{Request, Response, Status};

/// The longest `sub`, `obj` or `act` an `Enforce` query may pass: a regex
/// call costs up to (pattern size × haystack length), and the operation
/// budget counts the call, not that product.
pub const MAX_ENFORCE_FIELD_BYTES: usize = 1024;

use crate::keyspaces::casbin::{
    self, query, CacheUse, CasbinDecision, CasbinRead, CasbinRequest, ModelId,
};
use crate::proto::casbin::{
    casbin_query_service_server::CasbinQueryService, EnforceRequest, EnforceResponse, IndexedRule,
    ModelRequest, ModelResponse, RulesRequest, RulesResponse,
};
use crate::store::{ChainStore, StoreError, View};

pub struct CasbinQueryServiceImpl {
    pub store: ChainStore,
}

fn internal(e: StoreError) -> Status {
    Status::internal(e.to_string())
}

fn model_id(s: &str) -> Result<ModelId, Status> {
    ModelId::parse(s).map_err(Status::invalid_argument)
}

/// Runs `f` over one consistent view, on the bounded query pool.
async fn with_view<T: Send + 'static>(
    store: &ChainStore,
    f: impl FnOnce(&View<'_>, u64) -> Result<T, Status> + Send + 'static,
) -> Result<T, Status> {
    let store = store.clone();
    super::pool::run(move || {
        let view = store.view();
        let height = view.commit_info().map_err(internal)?.height.unwrap_or(0);
        f(&view, height)
    })
    .await
}

#[tonic::async_trait]
impl CasbinQueryService for CasbinQueryServiceImpl {
    async fn model(&self, req: Request<ModelRequest>) -> Result<Response<ModelResponse>, Status> {
        let id = model_id(&req.into_inner().model_id)?;
        with_view(&self.store, move |view, height| {
            let m = view.casbin_model(&id).map_err(internal)?;
            Ok(Response::new(ModelResponse {
                found: m.is_some(),
                model: m.as_ref().map(Into::into),
                height,
            }))
        })
        .await
    }

    async fn rules(&self, req: Request<RulesRequest>) -> Result<Response<RulesResponse>, Status> {
        let req = req.into_inner();
        let id = model_id(&req.model_id)?;
        let limit = match req.limit {
            0 => 100,
            n => n as usize,
        };
        with_view(&self.store, move |view, height| {
            let subject = (!req.subject.is_empty()).then_some(req.subject.as_str());
            let after = req.has_start_after.then_some(req.start_after);
            let (rows, has_more, last) = query::rules(view, &id, subject, after, limit)
                .map_err(internal)?
                .ok_or_else(|| Status::not_found(format!("casbin model {id}")))?;
            Ok(Response::new(RulesResponse {
                next_index: last.unwrap_or(0),
                has_more,
                rules: rows
                    .into_iter()
                    .map(|(i, r)| IndexedRule {
                        rule_index: i,
                        ptype: r.ptype.as_str().into(),
                        values: r.values,
                    })
                    .collect(),
                height,
            }))
        })
        .await
    }

    async fn enforce(
        &self,
        req: Request<EnforceRequest>,
    ) -> Result<Response<EnforceResponse>, Status> {
        let r = req.into_inner();
        for (what, v) in [("sub", &r.sub), ("obj", &r.obj), ("act", &r.act)] {
            if v.len() > MAX_ENFORCE_FIELD_BYTES {
                return Err(Status::invalid_argument(format!(
                    "{what} is {} bytes, over {MAX_ENFORCE_FIELD_BYTES}",
                    v.len()
                )));
            }
        }
        with_view(&self.store, move |view, height| {
            let creq = CasbinRequest {
                sub: &r.sub,
                obj: &r.obj,
                act: &r.act,
                territory: &r.territory,
            };
            let (decision, reason) =
                match casbin::enforce_with(view, &r.model_id, &creq, CacheUse::Query)
                    .map_err(internal)?
                {
                    CasbinDecision::Allow => ("allow", String::new()),
                    CasbinDecision::Deny(why) => ("deny", why),
                    CasbinDecision::Failed(why) => ("failed", why),
                };
            Ok(Response::new(EnforceResponse {
                decision: decision.into(),
                reason,
                height,
            }))
        })
        .await
    }
}
