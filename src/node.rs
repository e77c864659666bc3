//! `stave start`: raises `RLIMIT_NOFILE`, opens the chain store and the
//! local store, starts the consensus actor and the ABCI server, the three
//! gRPC listeners (public client, peer, admin socket), the metrics endpoint,
//! the local store's reconcile worker and the grant recorder, and runs until SIGINT/SIGTERM or
//! until any of them stops.

use std::net::SocketAddr;
use std::sync::Arc;

use futures::FutureExt;

use crate::app::App;
use crate::client::CometRpc;
use crate::config::{Config, Home};
use crate::local::node::LocalNode;
use crate::local::worker::{Worker, WorkerConfig};
use crate::store::ChainStore;

/// Runs a node from its home directory.
pub async fn run(home: &Home) -> anyhow::Result<()> {
    let config = Config::load(&home.config_file())?;
    set_peer_source(&config.peer.listen)?;
    let nofile = crate::net::rlimit::raise_nofile();
    tracing::info!(?nofile, "descriptor limit");
    if let Err(e) = crate::net::rlimit::caps_fit(&config.limits, nofile) {
        tracing::warn!("{e}");
    }
    crate::grpc::pool::init(config.limits.query_threads);
    config.apply_cache_budgets();
    for dir in [home.local_dir(), home.snapshots_dir(), home.content_dir()] {
        std::fs::create_dir_all(&dir)?;
    }
    crate::metrics::disk::watch(vec![
        ("chain", home.chain_dir()),
        ("local", home.local_dir()),
        ("content", home.content_dir()),
    ]);
    let store = ChainStore::open_with(&home.chain_dir(), config.storage.memory())?;
    let info = store.commit_info()?;
    tracing::info!(
        home = %home.root.display(),
        height = ?info.height,
        app_hash = %hex::encode(&info.app_hash),
        chain_id = %info.chain_id,
        "chain store opened"
    );
    let app = match App::load(store.clone(), config.app_config()) {
        Err(e @ crate::app::AppError::VersionAhead { .. }) => {
            crate::abci::consensus::halt_for_upgrade(&e.to_string(), std::time::Duration::ZERO)
        }
        other => other?,
    };
    let app = app.with_snapshots(
        crate::snapshot::SnapshotFiles::open(&home.snapshots_dir())?,
        config.snapshots.clone(),
    );
    let notifier = app.notifier();
    let mempool = app.mempool();
    let local_node = LocalNode::open(
        home,
        store.clone(),
        crate::local::chain_assignments(),
        config.reconcile.takedown_retention_blocks,
    )?;
    let replica = crate::replica::Replica::open(
        local_node.local.clone(),
        store.clone(),
        local_node.operator.clone(),
        config.replica.clone(),
    )?;
    crate::replica::run::spawn(replica.clone(), Some(local_node.content.clone()))?;
    let worker = Worker::new(local_node.clone(), WorkerConfig::default())
        .with_announcements(replica.clone())
        .with_takedowns(notifier.subscribe_takedowns());
    let heights = notifier.subscribe_height();
    if let Some(h) = info.height {
        crate::metrics::metrics().height.set(h as i64);
    }
    if let Ok(hash) = <[u8; 32]>::try_from(info.app_hash.as_slice()) {
        crate::metrics::metrics().chain.committed(&hash);
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
    let submitter = Arc::new(crate::content::Submitter::new(
        local_node.operator.clone(),
        store.clone(),
        CometRpc::new(&config.cometbft.rpc),
        notifier.clone(),
        mempool.clone(),
    ));
    // One KEK for the upload jobs and the admin socket's local KV.
    let kek = Arc::new(crate::crypto::kek::Kek::load_or_create(&home.kek_file())?);
    let pipeline = upload_pipeline(home, &config, &local_node, kek.clone(), submitter.clone())?;
    let access = Arc::new(crate::access::Access::new(
        local_node.clone(),
        config.access.clone(),
        notifier.subscribe_height(),
    )?);
    let recorder = crate::access::recorder::run(
        access.clone(),
        submitter.clone(),
        notifier.subscribe_height(),
    );
    tasks.spawn(recorder.map(Ok));
    let confirmer =
        crate::local::confirm::run(local_node.clone(), submitter, notifier.subscribe_height());
    tasks.spawn(confirmer.map(Ok));
    let api = crate::grpc::ClientApi {
        store: store.clone(),
        comet: CometRpc::new(&config.cometbft.rpc),
        notifier,
        mempool,
        content: Some((pipeline, access)),
        replica: Some(replica.clone()),
    };
    spawn_listeners(&mut tasks, home, &config, api, (local_node, replica), kek).await?;
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
    let _ = std::fs::remove_file(home.admin_socket());
    Ok(())
}

type Tasks = tokio::task::JoinSet<anyhow::Result<()>>;

/// The upload pipeline: its jobs under the KEK, the operator-key tx
/// submitter (shared with the grant recorder), and the jobs a restart
/// interrupted, resumed.
fn upload_pipeline(
    home: &Home,
    config: &Config,
    node: &Arc<LocalNode>,
    kek: Arc<crate::crypto::kek::Kek>,
    submitter: Arc<crate::content::Submitter>,
) -> anyhow::Result<Arc<crate::content::Pipeline>> {
    let jobs = crate::local::processing::Jobs::new(node.local.clone(), kek);
    crate::local::private_dir(&home.processing_dir())?;
    let pipeline = crate::content::Pipeline::new(
        node.clone(),
        jobs,
        config.upload.clone(),
        std::env::current_exe()?,
        home.processing_dir(),
        submitter,
    );
    pipeline.resume()?;
    Ok(pipeline)
}

/// Binds and serves the public client, peer and admin gRPC listeners and
/// the metrics endpoint, each with its `[limits]`.
async fn spawn_listeners(
    tasks: &mut Tasks,
    home: &Home,
    config: &Config,
    api: crate::grpc::ClientApi,
    (local_node, replica): (Arc<LocalNode>, Arc<crate::replica::Replica>),
    kek: Arc<crate::crypto::kek::Kek>,
) -> anyhow::Result<()> {
    let limits = Arc::new(config.limits.clone());
    let (store, notifier) = (api.store.clone(), api.notifier.clone());
    if !config.grpc.listen.is_empty() {
        let listener = bind_tcp("gRPC client", &config.grpc.listen).await?;
        let limits = limits.clone();
        tasks.spawn(async move {
            crate::grpc::serve_client(listener, api, &limits)
                .await
                .map_err(|e| e.context("grpc client"))
        });
    }
    if config.peer.listen.is_empty() {
        tracing::warn!("[peer] listen is empty: this node serves no PeerService");
    } else {
        let listener = bind_tcp("gRPC peer", &config.peer.listen).await?;
        let allow = Arc::new(crate::net::allow::AllowList::default());
        let heights = notifier.subscribe_height();
        tasks.spawn(crate::net::allow::keep_fresh(allow.clone(), store.clone(), heights).map(Ok));
        let (node, replica, limits) = (local_node.clone(), replica.clone(), limits.clone());
        tasks.spawn(async move {
            crate::grpc::serve_peer(listener, node, replica, allow, &limits)
                .await
                .map_err(|e| e.context("grpc peer"))
        });
    }
    let admin = home.admin_socket();
    let listener = crate::net::unix::bind_private(&admin)?;
    listener.set_nonblocking(true)?;
    let listener = tokio::net::UnixListener::from_std(listener)?;
    tracing::info!(socket = %admin.display(), "gRPC admin listening (mode 0600)");
    tasks.spawn(async move {
        crate::grpc::serve_admin(listener, local_node, kek, replica, &limits)
            .await
            .map_err(|e| e.context("grpc admin"))
    });
    if !config.metrics.listen.is_empty() {
        let listener = bind_tcp("metrics", &config.metrics.listen).await?;
        let max = config.limits.metrics_max_connections;
        tasks.spawn(async move {
            crate::metrics::serve(listener, max).await;
            Ok(())
        });
    }
    Ok(())
}

/// Makes peer connections leave from the IP of `[peer] listen` (unless it
/// is empty or unspecified), before any task can dial a peer: a channel
/// opened earlier would keep the OS's source address for good, and peers
/// admit connections by source IP (`net::allow`).
fn set_peer_source(listen: &str) -> anyhow::Result<()> {
    if listen.is_empty() {
        return Ok(());
    }
    let sa: SocketAddr = listen
        .parse()
        .map_err(|e| anyhow::anyhow!("[peer] listen address {listen:?}: {e}"))?;
    if !sa.ip().is_unspecified() {
        crate::local::peer_client::bind_source(sa.ip());
    }
    Ok(())
}

/// Binds `addr` for the listener `what`, saying where.
async fn bind_tcp(what: &str, addr: &str) -> anyhow::Result<tokio::net::TcpListener> {
    let sa: SocketAddr = addr
        .parse()
        .map_err(|e| anyhow::anyhow!("{what} listen address {addr:?}: {e}"))?;
    let l = tokio::net::TcpListener::bind(sa)
        .await
        .map_err(|e| anyhow::anyhow!("{what}: binding {sa}: {e}"))?;
    tracing::info!(addr = %sa, "{what} listening");
    Ok(l)
}
