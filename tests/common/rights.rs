//! Content-and-rights helpers for end-to-end tests on a real localnet:
//! node operator keys, signed submission through BroadcastAndWait, an
//! upload manifest, an ERN release, and CheckAccess polled until it gives
//! the expected answer.

#[path = "../fixtures/facts.rs"]
mod facts;

use std::time::Duration;

use ed25519_dalek::SigningKey;
use stave::config::Home;
use stave::media::cid::label_cid;
use stave::proto::query::AccountRequest;
use stave::proto::rights as pb;
use stave::tx::{build::sign_tx, Action};

use super::localnet::Localnet;

pub const WAIT: Duration = Duration::from_secs(120);

/// Node `node`'s operator key, read from its home.
pub fn operator(net: &Localnet, node: usize) -> SigningKey {
    stave::keyfile::load_ed25519(&Home::new(net.stave_home(node)).operator_key())
        .expect("node operator key")
}

pub fn set_key(k: &SigningKey) -> Vec<u8> {
    k.verifying_key().to_bytes().to_vec()
}

/// Signs `actions` with the signer's next nonce on `node` (`next_nonce`,
/// which counts its txs that node admitted but has not committed), submits
/// with BroadcastAndWait and requires code 0; returns the commit height
/// once every node has reached it.
pub async fn submit(
    net: &Localnet,
    node: usize,
    key: &SigningKey,
    actions: Vec<Action>,
    what: &str,
) -> u64 {
    let mut c = net.client(node).await;
    let nonce = c
        .query
        .account(AccountRequest {
            pubkey: set_key(key),
            ..Default::default()
        })
        .await
        .map(|r| r.into_inner().next_nonce)
        .unwrap_or_else(|e| net.fail(&format!("{what}: Account: {e}")));
    let tx = sign_tx(key, &net.chain_id, nonce, actions, "");
    let height = net.commit_tx(node, tx, what).await;
    eprintln!("{what}: committed at height {height} on node{node}");
    // The next step may submit through another node: it must have committed
    // this height too, or its Account query would still show the old nonce.
    for i in 0..net.nodes {
        net.wait_stave_height(i, height, Duration::from_secs(60))
            .await;
    }
    height
}

/// A manifest for `flac_cid` whose replication and DEK-holder sets are
/// `ops`, processed by `ops[0]`, in group `group_id` (empty for none).
pub fn manifest(
    net: &Localnet,
    ops: &[SigningKey],
    flac_cid: &[u8],
    group_id: &str,
) -> pb::UploadManifest {
    let set: Vec<Vec<u8>> = ops.iter().map(set_key).collect();
    let eph = x25519_dalek::PublicKey::from(&x25519_dalek::StaticSecret::random_from_rng(
        rand::rngs::OsRng,
    ));
    pb::UploadManifest {
        chain_id: net.chain_id.clone(),
        flac_cid: label_cid(flac_cid),
        encrypted_cid: label_cid(&[b"enc-", flac_cid].concat()),
        image_cids: vec![stave::media::cid::raw_cid(&[b"cover-", flac_cid].concat()).to_vec()],
        image_sizes: vec![1000],
        facts: Some(facts::cd_master_facts()),
        encrypted_size: 1 << 20,
        replication_set: set.clone(),
        dek_holder_set: set,
        processing_validator: set_key(&ops[0]),
        group_id: group_id.into(),
        recovery_dek: Some(pb::WrappedDek {
            wrapped_dek: vec![0xab; 60],
            ephemeral_pubkey: eph.as_bytes().to_vec(),
            ..Default::default()
        }),
        uploader_pubkey: vec![],
        dek_commitment: vec![0x11; 32],
    }
}

/// `PublishRelease` of a one-track release of `cid` (ICPN derived from
/// it) with one worldwide deal for streams and downloads.
pub fn publish_single(cid: &[u8]) -> stave::tx::Action {
    stave::tx::Action::PublishRelease(stave::keyspaces::releases::PublishRelease::unsigned(
        stave::ddex::build::single(cid),
    ))
}

/// Polls `node`'s CheckAccess for `consumer` on `cid` from `territory`
/// until it answers `allowed`; returns that answer.
pub async fn access_until(
    net: &Localnet,
    node: usize,
    cid: &[u8],
    consumer: &[u8],
    territory: &str,
    allowed: bool,
) -> pb::CheckAccessResponse {
    access_for(net, node, cid, consumer, territory, 0, allowed).await
}

/// [`access_until`] for one use type (`stave.ddex.v1.UseType`).
pub async fn access_for(
    net: &Localnet,
    node: usize,
    cid: &[u8],
    consumer: &[u8],
    territory: &str,
    use_type: i32,
    allowed: bool,
) -> pb::CheckAccessResponse {
    let req = pb::CheckAccessRequest {
        cid: label_cid(cid),
        consumer_pubkey: consumer.to_vec(),
        territory: territory.into(),
        context: Vec::new(),
        use_type,
    };
    let what = format!("node{node} CheckAccess {territory} use {use_type} = {allowed}");
    let r = net
        .wait_for(&what, WAIT, || {
            let req = req.clone();
            async move {
                let mut c = net.client(node).await;
                let r = c
                    .rights
                    .check_access(req)
                    .await
                    .map_err(|e| e.to_string())?
                    .into_inner();
                if r.allowed == allowed {
                    Ok(r)
                } else {
                    Err(format!("{r:?}"))
                }
            }
        })
        .await;
    eprintln!("{what}: {} (code {})", r.reason, r.code);
    r
}

/// Waits until `node`'s `GrantsByKey` for `consumer` answers exactly one
/// grant record, and returns it.
pub async fn one_grant_by_key(net: &Localnet, node: usize, consumer: &[u8]) -> pb::Grant {
    net.wait_for(
        &format!("node{node}: one grant in GrantsByKey"),
        WAIT,
        || {
            let pk = consumer.to_vec();
            async move {
                let mut c = net.client(node).await;
                let r = c
                    .rights
                    .grants_by_key(pb::ListByKeyRequest {
                        pubkey: pk,
                        cursor: vec![],
                        limit: 0,
                        ..Default::default()
                    })
                    .await
                    .map_err(|e| e.to_string())?
                    .into_inner();
                match r.grants.as_slice() {
                    [g] => Ok(g.clone()),
                    other => Err(format!("{} grants", other.len())),
                }
            }
        },
    )
    .await
}
