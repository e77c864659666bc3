//! A userspace TCP proxy on every CometBFT p2p link of a localnet, so the
//! driver can partition a node: node `from` dials node `to` through
//! `127.0.0.1:<link port>`, and cutting a node closes every live
//! connection to or from it and refuses new ones until it heals.

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::io::copy_bidirectional;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// Bit of `node` in the mask of partitioned nodes.
fn bit(node: usize) -> u32 {
    1 << node
}

/// The proxies of a network: one listener per directed link.
pub struct Links {
    base: u16,
    cut: Arc<watch::Sender<u32>>,
    tasks: Vec<JoinHandle<()>>,
}

impl Links {
    /// Listens on `base + 10*from + to` for every ordered pair of distinct
    /// nodes, forwarding to `p2p(to)`.
    pub async fn start(nodes: usize, base: u16, p2p: impl Fn(usize) -> u16) -> Self {
        let last = base as u32 + 10 * nodes as u32;
        crate::common::localnet::assert_below_ephemeral(base, last);
        let cut = Arc::new(watch::channel(0u32).0);
        let mut tasks = Vec::new();
        for from in 0..nodes {
            for to in (0..nodes).filter(|&to| to != from) {
                let port = link_port(base, from, to);
                let l = TcpListener::bind(("127.0.0.1", port))
                    .await
                    .unwrap_or_else(|e| panic!("binding the p2p proxy on port {port}: {e}"));
                let target: SocketAddr = ([127, 0, 0, 1], p2p(to)).into();
                let mask = bit(from) | bit(to);
                tasks.push(tokio::spawn(serve(l, target, mask, cut.clone())));
            }
        }
        Links { base, cut, tasks }
    }

    /// The address node `from` dials to reach node `to`.
    pub fn addr(&self, from: usize, to: usize) -> String {
        format!("127.0.0.1:{}", link_port(self.base, from, to))
    }

    /// Cuts (`true`) or heals every link to or from `node`.
    pub fn set_cut(&self, node: usize, cut: bool) {
        self.cut.send_modify(|m| {
            if cut {
                *m |= bit(node)
            } else {
                *m &= !bit(node)
            }
        });
    }

    /// Heals every link.
    pub fn heal_all(&self) {
        self.cut.send_replace(0);
    }
}

impl Drop for Links {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

fn link_port(base: u16, from: usize, to: usize) -> u16 {
    base + 10 * from as u16 + to as u16
}

/// Accepts forever; a connection accepted while the link is cut is
/// dropped at once.
async fn serve(l: TcpListener, target: SocketAddr, mask: u32, cut: Arc<watch::Sender<u32>>) {
    loop {
        let Ok((inbound, _)) = l.accept().await else {
            continue;
        };
        let rx = cut.subscribe();
        if *rx.borrow() & mask != 0 {
            continue;
        }
        tokio::spawn(forward(inbound, target, mask, rx));
    }
}

/// Copies both ways until either side closes or the link is cut.
async fn forward(
    mut inbound: TcpStream,
    target: SocketAddr,
    mask: u32,
    mut rx: watch::Receiver<u32>,
) {
    let Ok(mut outbound) = TcpStream::connect(target).await else {
        return;
    };
    tokio::select! {
        _ = copy_bidirectional(&mut inbound, &mut outbound) => {}
        _ = rx.wait_for(|m| m & mask != 0) => {}
    }
}
