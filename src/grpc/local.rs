//! `stave.local.v1.LocalService`: the operator's view of the local store.
//! It says which content this validator holds and why fetches failed, and a
//! call reads every upload and sync entry, so it is served only on the admin
//! socket (`<home>/admin.sock`, mode 0600: the node's user alone can
//! connect), one call at a time.

use std::sync::Arc;

use tonic::{Request, Response, Status};

use crate::local::node::LocalNode;
use crate::proto::local::local_service_server::LocalService;
use crate::proto::local::{LocalStatusRequest, LocalStatusResponse};

pub struct LocalServiceImpl {
    pub node: Arc<LocalNode>,
    pub busy: Arc<tokio::sync::Semaphore>,
}

impl LocalServiceImpl {
    pub fn new(node: Arc<LocalNode>) -> Self {
        LocalServiceImpl {
            node,
            busy: Arc::new(tokio::sync::Semaphore::new(1)),
        }
    }
}

#[tonic::async_trait]
impl LocalService for LocalServiceImpl {
    async fn status(
        &self,
        _request: Request<LocalStatusRequest>,
    ) -> Result<Response<LocalStatusResponse>, Status> {
        let one = self
            .busy
            .clone()
            .try_acquire_owned()
            .map_err(|_| Status::resource_exhausted("a local status call is running"))?;
        let node = self.node.clone();
        // the permit goes with the work, which runs on if the client leaves
        tokio::task::spawn_blocking(move || {
            let _one = one;
            crate::local::status::status(&node)
        })
        .await
        .map_err(|e| Status::internal(e.to_string()))?
        .map(Response::new)
        .map_err(|e| Status::internal(e.to_string()))
    }
}
