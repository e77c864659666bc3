//! A model id carries its owner's key: nobody can add a model under another
//! key's id, and an existing model cannot be replaced.

mod inproc;
use inproc::casbin::*;
use stave::keyspaces::casbin::model_owner;
use stave::tx::Code;

#[tokio::test(flavor = "multi_thread")]
async fn another_keys_model_id_is_refused() {
    let mut chain = Chain::new().await;
    let alices = model_id(1, "catalogue");
    // key 2 tries to claim key 1's id before key 1 uses it
    chain
        .refused(2, add_model(&alices, RBAC), Code::CasbinNotOwner)
        .await;
    assert_eq!(
        model_owner(&chain.node.store.view(), &alices).unwrap(),
        None
    );

    chain.ok(1, add_model(&alices, RBAC)).await;
    let owner = model_owner(&chain.node.store.view(), &alices).unwrap();
    assert_eq!(owner, Some(chain_key(1)));

    // nobody replaces it, the owner included
    chain
        .refused(2, add_model(&alices, RBAC), Code::CasbinNotOwner)
        .await;
    chain
        .refused(1, add_model(&alices, RBAC), Code::Conflict)
        .await;

    // the same name under key 2's own id is key 2's model
    chain
        .ok(2, add_model(&model_id(2, "catalogue"), RBAC))
        .await;

    // ids that do not name an owner are malformed
    for bad in ["catalogue", "ABC/x", &format!("{}/a/b", pubhex(1))] {
        let (code, log) = chain.check(1, add_model(bad, RBAC)).await;
        assert_eq!(code, Code::InvalidArgument.value(), "{bad}: {log}");
    }
}

fn chain_key(seed: u8) -> [u8; 32] {
    inproc::key(seed).verifying_key().to_bytes()
}
