//! ABCI Query reads a key at the latest or an earlier height, and with
//! `prove` returns an ICS23 proof that verifies against that height's app
//! hash: existence for a present key, non-existence for an absent one.

mod inproc;
use inproc::*;
use prost::Message;
use stave::keyspaces::kv::kv_key;

fn verify(proof_bytes: &[u8], root: &[u8], key: &[u8], value: Option<&[u8]>) -> bool {
    let proof = ics23::CommitmentProof::decode(proof_bytes).unwrap();
    let spec = jmt::ics23_spec();
    match value {
        Some(v) => ics23::verify_membership::<ics23::HostFunctionsManager>(
            &proof,
            &spec,
            &root.to_vec(),
            key,
            v,
        ),
        None => ics23::verify_non_membership::<ics23::HostFunctionsManager>(
            &proof,
            &spec,
            &root.to_vec(),
            key,
        ),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn queries_at_past_heights_carry_valid_proofs() {
    let dir = tempfile::tempdir().unwrap();
    let mut node = Node::open(dir.path());
    node.init_chain(default_genesis()).await;
    let signer = key(1).verifying_key().to_bytes();
    let (root1, _) = node
        .block(1, vec![signed(1, 0, vec![set("song", "v1")])])
        .await;
    let (root2, _) = node
        .block(2, vec![signed(1, 1, vec![set("song", "v2")])])
        .await;
    let (root3, _) = node.block(3, vec![signed(1, 2, vec![del("song")])]).await;
    let k = kv_key(&signer, b"song");

    let at = |v: &[u8]| stave::proto::kv::KvEntry::decode(v).unwrap().value;
    let q1 = node.query("/store", &k, 1, true).await;
    assert!(q1.code.is_ok(), "{}", q1.log);
    assert_eq!(q1.height.value(), 1);
    assert_eq!(at(&q1.value), b"v1");
    let q2 = node.query("/store", &k, 2, true).await;
    assert_eq!(at(&q2.value), b"v2");
    let q3 = node.query("/store", &k, 0, true).await;
    assert_eq!(q3.height.value(), 3);
    assert!(q3.value.is_empty(), "deleted at height 3");

    let p = |q: &tendermint::abci::response::Query| q.proof.as_ref().unwrap().ops[0].data.clone();
    assert!(verify(&p(&q1), &root1, &k, Some(&q1.value)));
    assert!(verify(&p(&q2), &root2, &k, Some(&q2.value)));
    assert!(
        !verify(&p(&q1), &root2, &k, Some(&q1.value)),
        "a proof binds its height's root"
    );
    assert!(
        verify(&p(&q3), &root3, &k, None),
        "non-existence is proven too"
    );

    // typed paths agree with the raw store path
    let typed = node
        .query(
            &format!("/kv/{}/{}", hex::encode(signer), hex::encode("song")),
            b"",
            2,
            false,
        )
        .await;
    assert_eq!(typed.value, q2.value);
    // heights not yet committed and unknown paths get codes, not errors
    let future = node.query("/store", &k, 99, false).await;
    assert_eq!(
        future.code.value(),
        stave::tx::Code::NotFound.value(),
        "{}",
        future.log
    );
    let bad = node.query("/nope", b"", 0, false).await;
    assert_eq!(bad.code.value(), stave::tx::Code::InvalidArgument.value());
    let bad_hex = node.query("/accounts/zz", b"", 0, false).await;
    assert_eq!(
        bad_hex.code.value(),
        stave::tx::Code::InvalidArgument.value()
    );
}
