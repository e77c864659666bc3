//! The soak's network: 4 validators and a full node whose CometBFT p2p
//! links all run through the driver's proxies, and one validator's Stave
//! `data/` on a size-capped tmpfs (CometBFT's home stays off it).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use super::proxy::Links;
use crate::common::localnet::{Binaries, Localnet, LocalnetConfig};

/// The first port of the network; the proxies use `PROXY_BASE..=+43`.
pub const BASE_PORT: u16 = 30000;
pub const PROXY_BASE: u16 = 30500;
pub const VALIDATORS: usize = 4;
pub const NODES: usize = 5;
/// The disk-full node's tmpfs: room for a 30-minute soak's data.
pub const TMPFS_SIZE: &str = "1536m";

/// `testnet up 4`, then `add-node` (node 4, a full node).
pub fn create(bins: &Binaries) -> Localnet {
    let mut cfg = LocalnetConfig::new(VALIDATORS, BASE_PORT);
    cfg.chain_id = "stave-chaos".into();
    let mut net = Localnet::new(bins, cfg);
    net.up();
    let mut add = net.script_spawn(&["add-node"], &[("STAVE_UP_TIMEOUT", "120")]);
    let status = add.wait().expect("waiting for add-node");
    if !status.success() {
        net.fail(&format!("`testnet add-node` failed ({status})"));
    }
    net.nodes = NODES;
    net
}

/// Node `i`'s CometBFT p2p port.
pub fn p2p_port(i: usize) -> u16 {
    BASE_PORT + 10 * i as u16 + 6
}

/// With the network down: every node's persistent peers go through
/// `links`, peer exchange is off and the address book is forgotten.
pub fn route_through(net: &Localnet, links: &Links) {
    let ids: Vec<String> = (0..net.nodes).map(|i| node_id(net, i)).collect();
    for i in 0..net.nodes {
        let peers: Vec<String> = (0..net.nodes)
            .filter(|&j| j != i)
            .map(|j| format!("{}@{}", ids[j], links.addr(i, j)))
            .collect();
        let config = net.comet_home(i).join("config/config.toml");
        let text = std::fs::read_to_string(&config).expect("reading config.toml");
        let text = set_p2p(
            &text,
            "persistent_peers",
            &format!("\"{}\"", peers.join(",")),
        );
        let text = set_p2p(&text, "pex", "false");
        std::fs::write(&config, text).expect("writing config.toml");
        let _ = std::fs::remove_file(net.comet_home(i).join("config/addrbook.json"));
    }
}

fn node_id(net: &Localnet, i: usize) -> String {
    let home = net.comet_home(i);
    let out = net.cometbft_cmd(&["show-node-id", "--home", &home.to_string_lossy()]);
    net.expect_success("cometbft show-node-id", &out)
        .trim()
        .to_string()
}

/// `text` with `key = value` in the `[p2p]` table (the key must be there).
fn set_p2p(text: &str, key: &str, value: &str) -> String {
    let mut section = String::new();
    let mut found = false;
    let lines: Vec<String> = text
        .lines()
        .map(|l| {
            let t = l.trim();
            if t.starts_with('[') {
                section = t.trim_matches(|c| c == '[' || c == ']').to_string();
            } else if section == "p2p" && t.split('=').next().map(str::trim) == Some(key) {
                found = true;
                return format!("{key} = {value}");
            }
            l.to_string()
        })
        .collect();
    assert!(found, "no {key} in [p2p] of config.toml");
    lines.join("\n") + "\n"
}

/// A tmpfs mounted over a node's Stave `data/`, holding its former
/// content. Dropping it stops the network (nothing may keep the mount
/// busy) and unmounts, lazily if it must.
pub struct Tmpfs {
    pub node: usize,
    pub path: PathBuf,
    net: Arc<Localnet>,
}

impl Tmpfs {
    /// With the network down: moves node's `data/` onto a new tmpfs.
    pub fn mount(net: &Arc<Localnet>, node: usize) -> Self {
        let path = net.stave_home(node).join("data");
        let aside = net.stave_home(node).join("data.disk");
        std::fs::rename(&path, &aside).expect("moving data/ aside");
        std::fs::create_dir(&path).expect("creating the mount point");
        run(
            "mount",
            &["-t", "tmpfs", "-o", &format!("size={TMPFS_SIZE}"), "tmpfs"],
            &path,
        );
        let guard = Tmpfs {
            node,
            path: path.clone(),
            net: net.clone(),
        };
        let src = format!("{}/.", aside.display());
        run("cp", &["-a", &src], &path);
        std::fs::remove_dir_all(&aside).expect("removing the old data/");
        guard
    }

    /// The filler file that fills the disk.
    pub fn filler(&self) -> PathBuf {
        self.path.join("chaos-filler")
    }
}

/// Runs `prog ARGS PATH`; panics unless it succeeds.
fn run(prog: &str, args: &[&str], path: &Path) {
    let out = Command::new(prog)
        .args(args)
        .arg(path)
        .output()
        .unwrap_or_else(|e| panic!("{prog}: {e}"));
    assert!(
        out.status.success(),
        "{prog} {args:?} {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = self.net.script(&["down"]);
        let ok = Command::new("umount")
            .arg(&self.path)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            let _ = Command::new("umount").arg("-l").arg(&self.path).status();
        }
    }
}
