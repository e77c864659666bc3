//! Content and rights helpers for in-process scenario tests: a genesis with
//! validators, action builders (manifest, ERN, grants, policies), and a
//! [`World`] that sends one tx per block and reports its code.

#[path = "../fixtures/facts.rs"]
mod facts;

use std::collections::BTreeMap;

use ed25519_dalek::SigningKey;
use stave::keyspaces::accounts::AccountsRead;
use stave::keyspaces::entitlements::{GrantEntitlement, RevokeEntitlement};
use stave::keyspaces::grants::RecordGrant;
use stave::keyspaces::policies::SetPolicy;
use stave::keyspaces::releases::PublishRelease;
use stave::keyspaces::uploads::sign_manifest;
pub use stave::media::cid::label_cid;
use stave::proto::ddex::NewReleaseMessage;
use stave::proto::rights as pb;
use stave::tx::{build::sign_tx, Action, Code};

use super::{key, Node, CHAIN};

/// Validator seeds of the rights genesis (operator keys are `key(seed)`).
pub const VALIDATORS: [u8; 4] = [201, 202, 203, 204];
/// The uploader, publisher and first OWNER.
pub const UPLOADER: u8 = 1;
pub const ADMIN: u8 = 2;
pub const DISTRIBUTOR: u8 = 3;
pub const CONSUMER: u8 = 4;
pub const STRANGER: u8 = 5;
pub const OWNER2: u8 = 6;

pub fn pk(seed: u8) -> [u8; 32] {
    key(seed).verifying_key().to_bytes()
}

fn consensus_key(seed: u8) -> [u8; 32] {
    SigningKey::from_bytes(&[seed.wrapping_add(17); 32])
        .verifying_key()
        .to_bytes()
}

/// Genesis with the four validators of [`VALIDATORS`].
pub fn rights_genesis() -> (serde_json::Value, Vec<([u8; 32], u64)>) {
    let mut vals = Vec::new();
    let mut comet = Vec::new();
    for s in VALIDATORS {
        let x = x25519_dalek::PublicKey::from(&x25519_dalek::StaticSecret::from([s; 32]));
        vals.push(serde_json::json!({
            "operator_key": hex::encode(pk(s)),
            "consensus_key": hex::encode(consensus_key(s)),
            "x25519_key": hex::encode(x.as_bytes()),
            "address": format!("127.0.0.1:{}", 20000 + s as u32),
            "power": 10,
        }));
        comet.push((consensus_key(s), 10));
    }
    (serde_json::json!({ "validators": vals }), comet)
}

/// A valid manifest: processed by `VALIDATORS[0]`, replicated and held by
/// the first three validators.
pub fn manifest(cid: &[u8]) -> pb::UploadManifest {
    let set: Vec<Vec<u8>> = VALIDATORS[..3].iter().map(|s| pk(*s).to_vec()).collect();
    let eph = x25519_dalek::PublicKey::from(&x25519_dalek::StaticSecret::from([9; 32]));
    pb::UploadManifest {
        chain_id: CHAIN.into(),
        flac_cid: label_cid(cid),
        encrypted_cid: label_cid(&[b"enc-", cid].concat()),
        // images: tests/uploads_carry_images_with_their_sizes.rs
        image_cids: vec![],
        image_sizes: vec![],
        facts: Some(facts::cd_master_facts()),
        encrypted_size: 4096,
        replication_set: set.clone(),
        dek_holder_set: set,
        processing_validator: pk(VALIDATORS[0]).to_vec(),
        group_id: String::new(),
        recovery_dek: Some(pb::WrappedDek {
            wrapped_dek: vec![7; 60],
            ephemeral_pubkey: eph.as_bytes().to_vec(),
            ..Default::default()
        }),
        uploader_pubkey: vec![],
        dek_commitment: vec![0x11; 32],
    }
}

pub fn upload_action(uploader: u8, m: pb::UploadManifest) -> Action {
    Action::UploadComplete(sign_manifest(&key(uploader), m).try_into().unwrap())
}

/// A valid one-track release of `cid` (its ICPN derived from the cid),
/// with one worldwide deal for streams and downloads.
pub fn release_of(cid: &[u8]) -> NewReleaseMessage {
    stave::ddex::build::single(&label_cid(cid))
}

/// `PublishRelease` of [`release_of`]`(cid)`.
pub fn publish(cid: &[u8]) -> Action {
    publish_msg(release_of(cid))
}

pub fn publish_msg(message: NewReleaseMessage) -> Action {
    Action::PublishRelease(PublishRelease::unsigned(message))
}

pub fn grant(cid: &[u8], to: u8, role: pb::Role, scope: Option<pb::Scope>) -> Action {
    Action::GrantEntitlement(GrantEntitlement {
        cid: label_cid(cid),
        pubkey: pk(to).to_vec(),
        role,
        scope,
    })
}

pub fn revoke(cid: &[u8], of: u8) -> Action {
    Action::RevokeEntitlement(RevokeEntitlement {
        cid: label_cid(cid),
        pubkey: pk(of).to_vec(),
    })
}

pub fn policy(cid: &[u8], t: pb::PolicyType, model: &str, script: &[u8]) -> Action {
    Action::SetPolicy(SetPolicy {
        cid: label_cid(cid),
        policy_type: t,
        casbin_model_id: model.into(),
        script_cid: script.to_vec(),
    })
}

pub fn record(cid: &[u8], consumer: u8, territory: &str) -> Action {
    Action::RecordGrant(RecordGrant {
        cid: label_cid(cid),
        consumer_pubkey: pk(consumer).to_vec(),
        territory: territory.into(),
        context: Vec::new(),
        count: 0,
        use_type: 0,
    })
}

pub fn territories(ts: &[&str]) -> Option<pb::Scope> {
    Some(pb::Scope {
        territories: ts.iter().map(|t| t.to_string()).collect(),
        ..Default::default()
    })
}

/// Everything in the verifiable state except accounts, and every index
/// entry: what a refused action must leave alone.
pub fn rights_dump(node: &Node) -> Vec<(Vec<u8>, Vec<u8>)> {
    let view = node.store.view();
    let mut all: Vec<_> = super::state_dump(&node.store)
        .into_iter()
        .filter(|(k, _)| !k.starts_with(b"accounts/"))
        .collect();
    for p in [&b"entitlements_by_key/"[..], b"grants_by_key/"] {
        all.extend(view.index_prefix_list(p, None, usize::MAX).unwrap());
    }
    all
}

/// A node with the rights genesis, sending one tx per block.
pub struct World {
    pub node: Node,
    pub height: u64,
    _dir: tempfile::TempDir,
}

/// The result of one tx: its code and log.
#[derive(Debug, Clone)]
pub struct Res {
    pub code: u32,
    pub log: String,
}

impl Res {
    pub fn ok(&self) -> &Self {
        assert_eq!(self.code, 0, "expected OK, got {}: {}", self.code, self.log);
        self
    }
    pub fn is(&self, c: Code) -> &Self {
        assert_eq!(
            self.code,
            c.value(),
            "expected {} ({}), got {}: {}",
            c.name(),
            c.value(),
            self.code,
            self.log
        );
        self
    }
}

impl World {
    pub async fn new() -> World {
        World::with_governance(serde_json::json!({})).await
    }

    /// A world whose genesis sets these `params.governance`.
    pub async fn with_governance(governance: serde_json::Value) -> World {
        World::with_params(serde_json::json!({ "governance": governance })).await
    }

    /// A world whose genesis sets these `params`.
    pub async fn with_params(params: serde_json::Value) -> World {
        let dir = tempfile::tempdir().unwrap();
        let mut node = Node::open(dir.path());
        let (mut g, comet) = rights_genesis();
        g["params"] = params;
        node.init_chain_with_validators(g, comet).await;
        World {
            node,
            height: 0,
            _dir: dir,
        }
    }

    /// A world where `UPLOADER` uploaded and published `cid`.
    pub async fn published(cid: &[u8]) -> World {
        World::new().await.publish(cid).await
    }

    /// This world, after `UPLOADER` uploaded and published `cid`.
    pub async fn publish(mut self, cid: &[u8]) -> World {
        let w = &mut self;
        w.send(VALIDATORS[0], vec![upload_action(UPLOADER, manifest(cid))])
            .await
            .ok();
        w.send(UPLOADER, vec![publish(cid)]).await.ok();
        self
    }

    /// This world after a restart of its node: the node's own caches (its
    /// verified-signature cache, RocksDB's block cache) start empty.
    /// Process-wide caches (Casbin's compiled models, identity keys) are
    /// the caller's to clear.
    pub fn restart(self) -> World {
        let World { node, height, _dir } = self;
        let path = node.shutdown();
        World {
            node: Node::open(&path),
            height,
            _dir,
        }
    }

    pub fn nonce(&self, seed: u8) -> u64 {
        self.node
            .store
            .committed()
            .account(&pk(seed))
            .unwrap()
            .map(|a| a.nonce)
            .unwrap_or(0)
    }

    /// Signs `actions` by `seed` with its next nonce, runs one block.
    pub async fn send(&mut self, seed: u8, actions: Vec<Action>) -> Res {
        let tx = sign_tx(&key(seed), CHAIN, self.nonce(seed), actions, "");
        self.height += 1;
        let (_, r) = self.node.block(self.height, vec![tx.into()]).await;
        let t = &r.tx_results[0];
        Res {
            code: t.code.value(),
            log: t.log.clone(),
        }
    }

    /// Signs one tx per `(seed, actions)` (nonces counted within the block)
    /// and runs them in one block; returns each tx's code.
    pub async fn send_block(&mut self, txs: Vec<(u8, Vec<Action>)>) -> Vec<u32> {
        let mut next: BTreeMap<u8, u64> = BTreeMap::new();
        let mut raw = Vec::new();
        for (seed, actions) in txs {
            let n = *next.entry(seed).or_insert_with(|| self.nonce(seed));
            raw.push(sign_tx(&key(seed), CHAIN, n, actions, "").into());
            next.insert(seed, n + 1);
        }
        self.height += 1;
        let (_, r) = self.node.block(self.height, raw).await;
        r.tx_results.iter().map(|t| t.code.value()).collect()
    }

    /// Sends and asserts the code, that the nonce moved only for an
    /// authenticated tx, and that a refusal changed nothing else.
    pub async fn refused(&mut self, seed: u8, actions: Vec<Action>, code: Code) -> Res {
        let before = rights_dump(&self.node);
        let r = self.send(seed, actions).await;
        r.is(code);
        assert_eq!(
            before,
            rights_dump(&self.node),
            "a refused tx changed state"
        );
        r
    }

    /// The grant record of `cid` to `who` last recorded at `height`, from
    /// committed state.
    pub fn grant_at(&self, cid: &[u8], who: u8, height: u64) -> Option<pb::Grant> {
        let view = self.node.store.view();
        let (all, _) = stave::keyspaces::grants::by_cid(&view, &label_cid(cid), b"", 0).unwrap();
        all.into_iter()
            .find(|g| g.consumer_pubkey == pk(who) && g.last_height == height)
    }

    /// `CheckAccess` for `who` on `cid` from `territory` (no context), at
    /// the latest committed height; an error is the gRPC status code.
    pub fn check_access(
        &self,
        cid: &[u8],
        who: u8,
        territory: &str,
    ) -> Result<pb::CheckAccessResponse, tonic::Code> {
        let req = pb::CheckAccessRequest {
            cid: label_cid(cid),
            consumer_pubkey: pk(who).to_vec(),
            territory: territory.into(),
            context: Vec::new(),
            use_type: 0,
        };
        stave::grpc::rights::check_access(&self.node.store.view(), &req).map_err(|s| s.code())
    }

    /// The role `who` holds on `cid`, from committed state.
    pub fn role(&self, cid: &[u8], who: u8) -> Option<pb::Role> {
        use stave::keyspaces::entitlements::EntitlementsRead;
        self.node
            .store
            .committed()
            .role_of(&label_cid(cid), &pk(who))
            .unwrap()
    }
}

/// The by-key index rebuilt from `entitlements/`, and as stored.
pub type KeyValues = BTreeMap<Vec<u8>, Vec<u8>>;

pub fn index_vs_primary(node: &Node) -> (KeyValues, KeyValues) {
    use stave::keyspaces::entitlements::{
        entitlement_by_key_key, entitlements_by_key_root, entitlements_prefix,
    };
    let view = node.store.view();
    let mut rebuilt = BTreeMap::new();
    for (_, v) in view
        .prefix_list(&entitlements_prefix(), None, usize::MAX)
        .unwrap()
    {
        let e = <pb::Entitlement as prost::Message>::decode(v.as_slice()).unwrap();
        let k: [u8; 32] = e.pubkey.as_slice().try_into().unwrap();
        rebuilt.insert(entitlement_by_key_key(&k, &e.cid), v);
    }
    let stored = view
        .index_prefix_list(&entitlements_by_key_root(), None, usize::MAX)
        .unwrap()
        .into_iter()
        .collect();
    (rebuilt, stored)
}
