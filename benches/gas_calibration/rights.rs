//! The validator-signed kinds: `RecordGrant`s evaluating a heavy Casbin
//! model, and `UploadComplete`s. Their signers are genesis validators, so
//! their txs run at each validator's next nonce.
//!
//! Each grant is of its own cid, whose ROLE_BASED policy names its own
//! model, so every evaluation misses the compiled-model cache and compiles
//! the model's 93 patterns (as after a restart, or with a cache churned by
//! many models); the warm case is cheaper for the same gas.

#[path = "../../tests/fixtures/facts.rs"]
mod facts;

use ed25519_dalek::SigningKey;
use stave::keyspaces::casbin::{AddCasbinModel, AddCasbinRule};
use stave::keyspaces::grants::RecordGrant;
use stave::keyspaces::policies::SetPolicy;
use stave::keyspaces::releases::PublishRelease;
use stave::keyspaces::uploads::sign_manifest;
use stave::media::cid::label_cid;
use stave::proto::rights as pb;
use stave::tx::Action;

use super::world::{fresh, pk, seed_key, World, CHAIN, VALIDATORS};

/// `RecordGrant`s per tx: each about 87 million gas with the heavy model
/// (compiling its 93 patterns is most of it).
pub const GRANTS_PER_TX: usize = 2;

/// `UploadComplete`s per tx.
pub const UPLOADS_PER_TX: usize = 16;

/// An upload of `cid` by `uploader`, processed by the first validator and
/// held by the first three.
fn upload(uploader: &SigningKey, cid: &[u8]) -> Action {
    let set: Vec<Vec<u8>> = VALIDATORS[..3]
        .iter()
        .map(|s| pk(&seed_key(*s)).to_vec())
        .collect();
    let eph = x25519_dalek::PublicKey::from(&x25519_dalek::StaticSecret::from([9; 32]));
    let m = pb::UploadManifest {
        chain_id: CHAIN.into(),
        flac_cid: label_cid(cid),
        encrypted_cid: label_cid(&[b"enc-", cid].concat()),
        image_cids: (0..4u8)
            .map(|k| stave::media::cid::raw_cid(&[&[b'i', k][..], cid].concat()).to_vec())
            .collect(),
        image_sizes: vec![1000; 4],
        facts: Some(facts::cd_master_facts()),
        encrypted_size: 1,
        replication_set: set.clone(),
        dek_holder_set: set,
        processing_validator: pk(&seed_key(VALIDATORS[0])).to_vec(),
        group_id: String::new(),
        recovery_dek: Some(pb::WrappedDek {
            wrapped_dek: vec![7; 60],
            ephemeral_pubkey: eph.as_bytes().to_vec(),
            ..Default::default()
        }),
        uploader_pubkey: vec![],
        dek_commitment: vec![0x11; 32],
    };
    let uc = sign_manifest(uploader, m);
    Action::UploadComplete(uc.try_into().expect("valid UploadComplete"))
}

fn rule(model: &str, slot: u32, values: Vec<String>) -> Action {
    Action::AddCasbinRule(AddCasbinRule {
        model_id: model.into(),
        rule_index: slot,
        ptype: "p".into(),
        values,
    })
}

/// A model whose matcher runs two regexes and a key match on every rule.
/// Each of the 30 heavy rules matches the object (the cid in hex has no
/// `a`) and the act, then fails on the subject (no hex key ends in a
/// non-hex character), so every term of every rule runs before the last
/// rule allows every consumer: 60 regex searches and 30 key matches.
///
/// `small` patterns repeat 8 to 11 times (the costliest compile per unit
/// of weight, see `compile`); otherwise 40 to 69 (the review's shape).
fn heavy_model(owner: &SigningKey, n: usize, small: bool) -> (String, Vec<Action>) {
    let id = format!("{}/cal-{n}", hex::encode(pk(owner)));
    let text = "[request_definition]\nr = sub, obj, act\n\n[policy_definition]\np = sub, obj, act\n\n\
         [policy_effect]\ne = some(where (p.eft == allow))\n\n\
         [matchers]\nm = regexMatch(r.obj, p.obj) && keyMatch2(r.act, p.act) && regexMatch(r.sub, p.sub)\n";
    let mut a = vec![Action::AddCasbinModel(AddCasbinModel {
        model_id: id.clone(),
        perm_model: text.into(),
    })];
    a.extend((0..30u32).map(|s| {
        let bound = if small { 8 + s % 4 } else { 40 + s };
        let obj = format!("[^a]{{{bound}}}");
        let sub = format!("[^a]{{{bound}}}[^0-9a-f]");
        rule(&id, s, vec![sub, obj, format!(":act{s}")])
    }));
    let hex_only = "^[0-9a-f]+$".to_string();
    a.push(rule(
        &id,
        30,
        vec![hex_only.clone(), hex_only, "access".into()],
    ));
    (id, a)
}

/// Cid `n` of the grants: a raw cid whose hex (72 characters) has no `a`
/// (the first of its label's variants that has none: about 1 in 60).
fn grant_cid(n: usize) -> Vec<u8> {
    (0u32..)
        .map(|k| label_cid(format!("bafk-calibration-grant-{n:04}-{k}").as_bytes()))
        .find(|c| !hex::encode(c).contains('a'))
        .expect("a cid without an `a` in its hex")
}

/// The owner of cid `n`: its uploader, the model's owner.
fn owner(n: usize) -> SigningKey {
    fresh(0, n, 0x71)
}

/// Txs of `RecordGrant` per block the pool is sized for: a block at the
/// limit holds 5 (22 with small patterns; about 84 if `compile_weight`
/// were back at 200), and one more is signed to find that out.
const GRANT_TXS_PER_BLOCK: usize = 128;

/// For each cid of `blocks` blocks of grants: its upload, then by its
/// owner in one tx its release, its own heavy model and its ROLE_BASED
/// policy.
pub fn setup_grants(w: &mut World, blocks: usize, small: bool) {
    let cids = blocks * GRANT_TXS_PER_BLOCK * GRANTS_PER_TX;
    let validator = seed_key(VALIDATORS[0]);
    let uploads: Vec<_> = (0..cids)
        .map(|n| upload(&owner(n), &grant_cid(n)))
        .collect::<Vec<_>>()
        .chunks(UPLOADS_PER_TX)
        .map(|c| (validator.clone(), c.to_vec()))
        .collect();
    w.setup_blocks(uploads);
    let owned = (0..cids)
        .map(|n| {
            let publish = Action::PublishRelease(PublishRelease::unsigned(
                stave::ddex::build::single(&grant_cid(n)),
            ));
            let (model, mut actions) = heavy_model(&owner(n), n, small);
            actions.insert(0, publish);
            actions.push(Action::SetPolicy(SetPolicy {
                cid: grant_cid(n),
                policy_type: pb::PolicyType::RoleBased,
                casbin_model_id: model,
                script_cid: vec![],
            }));
            (owner(n), actions)
        })
        .collect();
    w.setup_blocks(owned);
}

/// Tx `i` of block `block`: a DEK-holder validator (in turn) records
/// grants of cids never evaluated before to fresh consumers. Past the
/// pool [`setup_grants`] made, it panics.
pub fn grants(block: usize, i: usize) -> (SigningKey, Vec<Action>) {
    assert!(i < GRANT_TXS_PER_BLOCK, "grant pool exhausted");
    let validator = seed_key(VALIDATORS[i % 3]);
    let actions = (0..GRANTS_PER_TX)
        .map(|j| {
            let n = (block * GRANT_TXS_PER_BLOCK + i) * GRANTS_PER_TX + j;
            Action::RecordGrant(RecordGrant {
                cid: grant_cid(n),
                consumer_pubkey: pk(&fresh(block, i * GRANTS_PER_TX + j, 0x3C)).to_vec(),
                territory: "GB".into(),
                context: Vec::new(),
                count: 0,
                use_type: 0,
            })
        })
        .collect();
    (validator, actions)
}

/// Tx `i` of block `block`: the first validator completes uploads of
/// fresh cids, each signed by its own uploader.
pub fn uploads(block: usize, i: usize) -> (SigningKey, Vec<Action>) {
    let actions = (0..UPLOADS_PER_TX)
        .map(|j| {
            let n = i * UPLOADS_PER_TX + j;
            let cid = format!("bafk-cal-{block}-{n}");
            upload(&fresh(block, n, 0x4D), cid.as_bytes())
        })
        .collect();
    (seed_key(VALIDATORS[0]), actions)
}
