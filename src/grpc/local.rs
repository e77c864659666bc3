//! `stave.local.v1.LocalService`: the operator's view of the local store.

use std::sync::Arc;

use tonic::{Request, Response, Status};

use crate::local::node::LocalNode;
use crate::proto::local::local_service_server::LocalService;
use crate::proto::local::{LocalStatusRequest, LocalStatusResponse};

pub struct LocalServiceImpl {
    pub node: Arc<LocalNode>,
}

#[tonic::async_trait]
impl LocalService for LocalServiceImpl {
    async fn status(
        &self,
        _request: Request<LocalStatusRequest>,
    ) -> Result<Response<LocalStatusResponse>, Status> {
        let node = self.node.clone();
        tokio::task::spawn_blocking(move || crate::local::status::status(&node))
            .await
            .map_err(|e| Status::internal(e.to_string()))?
            .map(Response::new)
            .map_err(|e| Status::internal(e.to_string()))
    }
}
