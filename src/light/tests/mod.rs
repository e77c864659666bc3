//! Tests against a real CometBFT node ([`node`]) and on tampered copies of
//! its blocks through the pure functions.

mod client;
mod node;
mod tamper;
mod trust;

use std::time::Duration;

use tendermint::block::CommitSig;

use super::rpc::Rpc;
use super::{init_from_node, LightBlock, LightClient, LightOptions, TrustRoot, REQUEST_TIMEOUT};

/// An unverified RPC client for the node.
fn rpc(node: &node::Node) -> Rpc {
    Rpc::new(&node.rpc, REQUEST_TIMEOUT).expect("rpc client")
}

/// The (unverified) light block at `height`.
async fn block(node: &node::Node, height: u64) -> LightBlock {
    rpc(node).light_block(height).await.expect("light block")
}

/// The node's own root at `height`.
async fn root(node: &node::Node, height: u64) -> TrustRoot {
    init_from_node(&node.rpc, Some(height))
        .await
        .expect("init_from_node")
}

/// A light client from the node's root at `height`.
async fn client(node: &node::Node, height: u64, opts: LightOptions) -> LightClient {
    LightClient::new(&node.rpc, root(node, height).await, opts).expect("client")
}

/// Every signature of `block`'s commit replaced by an absent one.
fn absent_signatures(block: &mut LightBlock) {
    for sig in &mut block.signed_header.commit.signatures {
        *sig = CommitSig::BlockIdFlagAbsent;
    }
}

/// Every vote for the block turned into a vote for nil (signature kept): the
/// commit is well formed but carries no power for the block.
fn nil_votes(block: &mut LightBlock) {
    for sig in &mut block.signed_header.commit.signatures {
        if let CommitSig::BlockIdFlagCommit {
            validator_address,
            timestamp,
            signature,
        } = sig.clone()
        {
            *sig = CommitSig::BlockIdFlagNil {
                validator_address,
                timestamp,
                signature,
            };
        }
    }
}

/// `now` plus `secs` seconds.
fn later(secs: u64) -> tendermint::Time {
    tendermint::Time::now()
        .checked_add(Duration::from_secs(secs))
        .expect("time")
}
