//! Issue 28, operator-key rotation end to end on the real 4-validator
//! localnet. Node 2's operator runs `stave tx validator
//! rotate-operator-key`; then:
//! - the chain names node 2's new signing key under its old name, and the
//!   home's key files were swapped (the retired key kept aside);
//! - until node 2 restarts, a tx signed with the retired key is refused
//!   (OPERATOR_KEY_RETIRED) and changes nothing, and the CLI refuses to
//!   sign with it;
//! - after node 2 restarts with the new key, a WAV uploaded through node 0
//!   with all four validators as replicas completes: node 2 fetched the
//!   blob and DEK from its peers (peer requests signed by the new key) and
//!   answered node 0's HasContent with it;
//! - a consumer gets the DEK from node 2, whose receipt the client checks
//!   under the signing key the chain names, and node 2's recorder records
//!   the grant on chain (a tx signed by the new key, acting as node 2);
//! - node 2's replicated data survives: a counter it incremented before
//!   the rotation and again after it reads as the sum on node 0, owned by
//!   node 2's name (its records are re-signed under the new key, and
//!   peers check them under the key the chain names);
//! - app hashes agree.
//!
//! Binaries and CI behaviour as in `e2e_localnet.rs`. Base port 29500.

mod common;

use std::time::Duration;

use common::localnet::{assert_below_ephemeral, binaries, Localnet, LocalnetConfig};
use common::rights::{one_grant_by_key, operator, set_key};
use common::upload::{admit_group, upload_published};
use serde_json::{json, Value};
use stave::client::content::{self as cc, Consumer};
use stave::config::Home;

const BASE_PORT: u16 = 29500;
const WAIT: Duration = Duration::from_secs(120);
const GROUP: &str = "e2e-operator-key";
/// The validator that rotates.
const NODE: usize = 2;

/// Node `i` increments counter `c` of db `ops` by `by`.
async fn incr(net: &Localnet, i: usize, by: i64) {
    use stave::proto::replica as rpb;
    let op = rpb::DbOp {
        db: "ops".into(),
        key: b"c".to_vec(),
        op: Some(rpb::db_op::Op::Incr(rpb::DbIncr { amount: by })),
    };
    let r = stave::client::admin_db_client(&net.admin_socket(i))
        .await
        .expect("admin socket")
        .write(rpb::DbWriteRequest { ops: vec![op] })
        .await
        .expect("DbWrite")
        .into_inner();
    assert!(
        r.results.iter().all(|x| x.error.is_empty()),
        "{:?}",
        r.results
    );
}

/// Waits until node `i` reads counter `c` as `want`, owned by `owner` alone.
async fn counter_is(net: &Localnet, i: usize, want: &str, owner: &[u8]) {
    use stave::proto::replica as rpb;
    net.wait_for(
        &format!("node{i} to read the counter as {want}"),
        WAIT,
        || async {
            let r = stave::client::admin_db_client(&net.admin_socket(i))
                .await
                .map_err(|e| e.to_string())?
                .get(rpb::DbGetRequest {
                    db: "ops".into(),
                    key: b"c".to_vec(),
                })
                .await
                .map_err(|e| e.to_string())?
                .into_inner();
            let got = match r.value.and_then(|v| v.kind) {
                Some(rpb::db_value::Kind::Counter(c)) => c,
                other => return Err(format!("{other:?}")),
            };
            match (got == want, r.owners.as_slice()) {
                (true, [o]) if o.as_slice() == owner => Ok(()),
                _ => Err(format!("{got}, owners {:?}", r.owners)),
            }
        },
    )
    .await
}

fn validator(net: &Localnet, name: &str) -> Value {
    let v: Value = net.stave_json(
        "stave query validator",
        &["query", "validator", name, "--node", &net.grpc_url(0)],
    );
    v["validator"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rotated_operator_key_signs_for_the_same_validator() {
    let Some(bins) = binaries("a_rotated_operator_key_signs_for_the_same_validator") else {
        return;
    };
    assert_below_ephemeral(BASE_PORT, BASE_PORT as u32 + 50);
    let net = Localnet::new(&bins, LocalnetConfig::new(4, BASE_PORT));
    net.up();
    for i in 0..net.nodes {
        net.wait_stave_height(i, 1, WAIT).await;
    }
    let old_key = operator(&net, NODE);
    let name = hex::encode(set_key(&old_key));
    assert_eq!(validator(&net, &name)["signing_key"], json!(name));

    incr(&net, NODE, 5).await;
    counter_is(&net, 0, "5", &set_key(&old_key)).await;

    let home = Home::new(net.stave_home(NODE));
    let home_arg = home.root.to_str().expect("utf-8").to_string();
    let r = net.stave_json(
        "validator rotate-operator-key",
        &[
            "tx",
            "validator",
            "rotate-operator-key",
            "--home",
            &home_arg,
            "--node",
            &net.grpc_url(NODE),
        ],
    );
    assert_eq!(r["code"], json!(0), "{r}");
    let new_key = operator(&net, NODE);
    let new_hex = hex::encode(set_key(&new_key));
    assert_ne!(new_hex, name, "the home holds a new key");
    assert!(!home.operator_next_key().exists(), "the next key was moved");
    let retired = stave::keyfile::load_ed25519(&home.operator_retired_key()).expect("kept");
    assert_eq!(retired.verifying_key(), old_key.verifying_key());
    let v = validator(&net, &name);
    assert_eq!(v["signing_key"], json!(new_hex), "{v}");
    assert_eq!(v["status"], json!("ACTIVE"), "{v}");

    // the retired key: refused by CheckTx, and by the CLI before signing
    let mut c = net.client(0).await;
    let a = c
        .query
        .account(stave::proto::query::AccountRequest {
            pubkey: set_key(&old_key),
            ..Default::default()
        })
        .await
        .expect("Account")
        .into_inner();
    assert!(a.retired, "{a:?}");
    let set = stave::tx::Action::KvSet(stave::keyspaces::kv::KvSet {
        key: b"k".to_vec(),
        value: b"v".to_vec(),
    });
    let tx = stave::tx::build::sign_tx(&old_key, &net.chain_id, a.nonce, vec![set], "");
    let check =
        c.tx.broadcast(stave::proto::tx::BroadcastRequest { tx })
            .await
            .expect("Broadcast")
            .into_inner();
    assert_eq!(
        check.code,
        stave::tx::Code::OperatorKeyRetired.value(),
        "{}",
        check.log
    );
    let old_home = tempfile::tempdir().expect("dir");
    let old_cfg = Home::new(old_home.path().to_path_buf());
    std::fs::create_dir_all(old_cfg.config_dir()).expect("config dir");
    std::fs::copy(home.operator_retired_key(), old_cfg.operator_key()).expect("copy");
    let out = net.stave_cmd(&[
        "tx",
        "validator",
        "rotate-operator-key",
        "--home",
        old_home.path().to_str().expect("utf-8"),
        "--node",
        &net.grpc_url(0),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the CLI signed with a retired key");
    assert!(err.contains("was rotated away"), "{err}");

    // node 2 signs with the new key from its restart on
    net.stop(NODE);
    net.restart(NODE);
    net.wait_stave_height(NODE, 1, WAIT).await;
    // replicated data keeps its owner, the name: the sum, on a peer
    incr(&net, NODE, 2).await;
    counter_is(&net, 0, "7", &set_key(&old_key)).await;
    let dir = tempfile::tempdir().expect("keyring dir");
    let uploader =
        stave::keyfile::create_ed25519(&dir.path().join("label.json")).expect("uploader key");
    admit_group(&net, GROUP, &uploader).await;
    let fan = Consumer::generate();
    let cid = upload_published(&net, (dir.path(), &uploader), &fan.pubkey(), (2, 4, GROUP)).await;
    let u = cc::upload_of(&mut net.client(0).await, &cid)
        .await
        .expect("upload");
    assert_eq!(u.replication_set.len(), 4, "node 2 is a replica");

    // the consumer's DEK from node 2, its receipt checked under the new key
    let name32: [u8; 32] = hex::decode(&name).expect("hex").try_into().expect("32");
    let holder = cc::peers(&mut net.client(NODE).await, &[name32.to_vec()])
        .await
        .expect("peers")
        .remove(0);
    assert_eq!(holder.signer, set_key(&new_key).as_slice());
    let key = net
        .wait_for("node2 to deliver the DEK", WAIT, || async {
            let req = fan.request(&net.chain_id, &cid, Some(holder.key), "GB", &[]);
            cc::request_access(&holder, &fan, req)
                .await
                .map_err(|s| s.message().to_string())
        })
        .await;
    assert_eq!(
        stave::crypto::dek_commitment(&key.dek, &u.encrypted_cid).as_slice(),
        u.dek_commitment.as_slice()
    );
    // node 2's recorder signs the grant with the new key, as node 2
    let g = one_grant_by_key(&net, 0, &fan.pubkey()).await;
    assert_eq!(g.validator_pubkey, name32.to_vec(), "{g:?}");
    net.assert_app_hashes_agree(WAIT).await;
}
