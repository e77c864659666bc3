//! `stave start`: opens the chain store and the local store, starts the
//! consensus actor and the ABCI server, the gRPC API, the metrics endpoint
//! and the local store's reconcile worker, and runs until SIGINT/SIGTERM or
//! until any of them stops.

use std::net::SocketAddr;

use crate::app::App;
use crate::client::CometRpc;
use crate::config::{Config, Home};
use crate::local::node::LocalNode;
use crate::local::worker::{Worker, WorkerConfig};
use crate::store::ChainStore;

/// Runs a node from its home directory.
pub async fn run(home: &Home) -> anyhow::Result<()> {
    let config = Config::load(&home.config_file())?;
    for dir in [home.local_dir(), home.snapshots_dir(), home.content_dir()] {
        std::fs::create_dir_all(&dir)?;
    }
    let store = ChainStore::open_with_cache(&home.chain_dir(), config.storage.cache_mb << 20)?;
    let info = store.commit_info()?;
    tracing::info!(
        home = %home.root.display(),
        height = ?info.height,
        app_hash = %hex::encode(&info.app_hash),
        chain_id = %info.chain_id,
        "chain store opened"
    );
    let app = App::load(store.clone(), config.app_config())?;
    let notifier = app.notifier();
    let local_node = LocalNode::open(home, store.clone(), crate::local::chain_assignments())?;
    let worker = Worker::new(local_node.clone(), WorkerConfig::default());
    let heights = notifier.subscribe_height();
    if let Some(h) = info.height {
        crate::metrics::metrics().height.set(h as i64);
    }

    let mut tasks = tokio::task::JoinSet::new();
    tasks.spawn(async move {
        worker.run(heights).await;
        Ok(())
    });
    let abci = config.abci.clone();
    tasks.spawn(async move {
        crate::abci::serve(app, &abci)
            .await
            .map_err(|e| e.context("abci"))
    });
    if !config.grpc.listen.is_empty() {
        let addr: SocketAddr = config.grpc.listen.parse()?;
        let comet = CometRpc::new(&config.cometbft.rpc);
        let store = store.clone();
        tasks.spawn(async move {
            crate::grpc::serve(addr, store, comet, notifier, local_node)
                .await
                .map_err(|e| e.context("grpc"))
        });
        tracing::info!(%addr, "gRPC listening");
    }
    if !config.metrics.listen.is_empty() {
        let listener = tokio::net::TcpListener::bind(&config.metrics.listen).await?;
        tracing::info!(addr = %config.metrics.listen, "metrics listening");
        tasks.spawn(async move {
            crate::metrics::serve(listener).await;
            Ok(())
        });
    }
    tracing::info!(abci = %config.abci.listen, "stave started");

    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        _ = tokio::signal::ctrl_c() => tracing::info!("SIGINT: stopping"),
        _ = term.recv() => tracing::info!("SIGTERM: stopping"),
        Some(done) = tasks.join_next() => {
            match done {
                Ok(Ok(())) => anyhow::bail!("a server stopped unexpectedly"),
                Ok(Err(e)) => return Err(e),
                Err(e) => anyhow::bail!("a server task failed: {e}"),
            }
        }
    }
    if let crate::abci::listen::Addr::Unix(path) =
        crate::abci::listen::Addr::parse(&config.abci.listen)
    {
        let _ = std::fs::remove_file(path);
    }
    Ok(())
}
