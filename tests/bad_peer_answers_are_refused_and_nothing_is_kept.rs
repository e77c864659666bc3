//! A peer that answers with content whose hash does not match, with a
//! wrapped DEK that does not unwrap, with a DEK that unwraps but is not
//! the content's, with a DEK and a blob forged to agree with each other, or
//! that stops sending mid-stream, is refused: nothing is stored, the sync
//! entries go to FAILED with the reason and a retry time. A DEK is judged by
//! the manifest's `dek_commitment`. A replica asks for its DEK only once it
//! holds the hash-verified content.

#[path = "common/local.rs"]
mod local;

use std::sync::Arc;
use std::time::Duration;

use local::*;
use stave::local::deks::DeksExt;
use stave::local::node::LocalNode;
use stave::local::status::status;
use stave::local::sync::SyncExt;
use stave::proto::local::SyncStatus;
use stave::proto::peer::peer_service_server::PeerService;
use stave::proto::peer::{ContentChunk, HasContentResponse, SignedPeerRequest, WrappedDekResponse};
use tonic::{Request, Response, Status};

/// How the lying peer answers.
#[derive(Clone, Copy, PartialEq)]
enum Lie {
    /// Well-formed garbage: a DEK wrapped to someone else, junk content.
    Garbage,
    /// The real content, and a fresh DEK wrapped to the requester: it
    /// unwraps, but does not open the content.
    WrongDek,
    /// The first bytes of the real content, then nothing, forever.
    Stall,
    /// A fresh DEK wrapped to the requester and a blob of the right size
    /// encrypted under it: DEK and blob agree, but the blob is not the
    /// content the cid names.
    Forged,
}

struct Liar {
    dek_cid: Vec<u8>,
    blob: Vec<u8>,
    forged: Upload,
    lie: Lie,
}

#[tonic::async_trait]
impl PeerService for Liar {
    async fn fetch_wrapped_dek(
        &self,
        _r: Request<SignedPeerRequest>,
    ) -> Result<Response<WrappedDekResponse>, Status> {
        // someone else's key, or the requester's (node 1)
        let to = if matches!(self.lie, Lie::WrongDek | Lie::Forged) {
            1
        } else {
            7
        };
        let dek = match self.lie {
            Lie::Forged => self.forged.dek.clone(),
            _ => stave::crypto::generate_dek(),
        };
        let junk = stave::crypto::wrap::wrap_dek(
            &dek,
            &x25519_dalek::PublicKey::from(&x25519(to)).to_bytes(),
            &self.dek_cid,
        )
        .unwrap();
        Ok(Response::new(WrappedDekResponse {
            cid: self.dek_cid.clone(),
            ephemeral_pubkey: junk.ephemeral_pubkey.to_vec(),
            wrapped_dek: junk.ciphertext,
            source_validator: op_key(0).to_vec(),
        }))
    }

    /// "Held", in node 0's name but signed by another key.
    async fn has_content(
        &self,
        r: Request<SignedPeerRequest>,
    ) -> Result<Response<HasContentResponse>, Status> {
        use prost::Message;
        use stave::proto::peer::{peer_request::Body, PeerRequest};
        let signed = r.into_inner();
        let cid = match PeerRequest::decode(signed.request.as_slice()).map(|p| p.body) {
            Ok(Some(Body::HasContent(h))) => h.cid,
            _ => return Err(Status::invalid_argument("not HasContent")),
        };
        let mut a = stave::local::has_content::answer(
            &operator(7),
            &signed,
            &cid,
            Some(self.blob.len() as u64),
        );
        a.responder = op_key(0).to_vec();
        Ok(Response::new(a))
    }

    type FetchContentStream =
        std::pin::Pin<Box<dyn tokio_stream::Stream<Item = Result<ContentChunk, Status>> + Send>>;

    async fn fetch_content(
        &self,
        _r: Request<SignedPeerRequest>,
    ) -> Result<Response<Self::FetchContentStream>, Status> {
        use tokio_stream::StreamExt;
        let data = match self.lie {
            Lie::Garbage => vec![0xab; self.blob.len()],
            Lie::WrongDek => self.blob.clone(),
            Lie::Stall => self.blob[..1000].to_vec(),
            Lie::Forged => self.forged.blob.clone(),
        };
        let first = tokio_stream::iter(vec![Ok(ContentChunk { data })]);
        if self.lie == Lie::Stall {
            return Ok(Response::new(Box::pin(
                first.chain(tokio_stream::pending()),
            )));
        }
        Ok(Response::new(Box::pin(first)))
    }
}

/// Node 1 of two, whose only peer (node 0) lies as `lie`; node 1 holds the
/// DEK and replicates the content.
fn beside_a_liar(dir: &std::path::Path, u: &Upload, lie: Lie) -> Arc<LocalNode> {
    beside_a_liar_in(dir, u, lie, &[0, 1])
}

/// [`beside_a_liar`], with the content replicated by `replicas`.
fn beside_a_liar_in(
    dir: &std::path::Path,
    u: &Upload,
    lie: Lie,
    replicas: &[usize],
) -> Arc<LocalNode> {
    let asg = vec![u.assignment(replicas, &[0, 1])];
    let liar_l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let mine_l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let state = app_state(&[liar_l.local_addr().unwrap(), mine_l.local_addr().unwrap()]);
    serve(
        liar_l,
        Liar {
            dek_cid: u.dek_cid.clone(),
            blob: u.blob.clone(),
            forged: upload(u.plain.len(), u.plain.len() as u8 ^ 0x5a),
            lie,
        },
    );
    let d = dir.join("node1");
    local_node(&d, chain_at_genesis(&d, &state, 2), 1, operator(1), asg)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_peer_answers_are_refused_and_nothing_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let u = upload(100_000, 3);
    let node = beside_a_liar(dir.path(), &u, Lie::Garbage);
    let d = dir.path().join("node1");
    let w = worker(node.clone());
    let failed = reconcile_until(&w, Duration::from_secs(30), || {
        let c = node.local.content_sync(&u.content_cid).unwrap();
        c.is_some_and(|e| e.status() == SyncStatus::Failed && e.attempts >= 2)
    })
    .await;
    let s = status(&node).unwrap();
    assert!(failed, "{s:?}");
    let c = node.local.content_sync(&u.content_cid).unwrap().unwrap();
    assert!(
        c.error.contains("code 407") && c.error.contains("does not match"),
        "{}",
        c.error
    );
    assert!(c.retry_at_ms > 0);
    // a replica's DEK waits for its content: never asked for, still PENDING
    let k = node.local.dek_sync(&u.dek_cid).unwrap().unwrap();
    assert_eq!((k.status(), k.attempts), (SyncStatus::Pending, 0));
    // nothing kept: no content file (nor temp file), no wrapped DEK
    assert!(node.content.list().unwrap().is_empty());
    assert_eq!(
        std::fs::read_dir(d.join("content/.tmp")).unwrap().count(),
        0
    );
    assert!(node.local.dek(&u.dek_cid).unwrap().is_none());
    // the status lists the failed content and the DEK waiting for it
    assert_eq!(s.failures.len(), 2, "{:?}", s.failures);
    assert!(s.failures.iter().all(|f| !f.error.is_empty()));
    assert!(k.error.starts_with("waiting for content"), "{}", k.error);
}

/// Node 1 holds the DEK but does not replicate the content; runs rounds
/// until its DEK entry failed twice and returns the node and the error.
async fn dek_failure(dir: &std::path::Path, u: &Upload, lie: Lie) -> (Arc<LocalNode>, String) {
    let node = beside_a_liar_in(dir, u, lie, &[0]);
    let w = worker(node.clone());
    let failed = reconcile_until(&w, Duration::from_secs(30), || {
        let k = node.local.dek_sync(&u.dek_cid).unwrap();
        k.is_some_and(|e| e.status() == SyncStatus::Failed && e.attempts >= 2)
    })
    .await;
    assert!(failed, "{:?}", status(&node).unwrap());
    let error = node.local.dek_sync(&u.dek_cid).unwrap().unwrap().error;
    (node, error)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dek_that_does_not_unwrap_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let u = upload(100_000, 4);
    let (node, error) = dek_failure(dir.path(), &u, Lie::Garbage).await;
    assert!(error.contains("code 408"), "{error}");
    assert!(node.local.dek(&u.dek_cid).unwrap().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dek_and_a_blob_forged_to_agree_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let u = upload(100_000, 6);
    // a holder that is not a replica checks the DEK against the manifest's
    // commitment, and downloads no blob to do it
    let (node, error) = dek_failure(dir.path(), &u, Lie::Forged).await;
    assert!(
        error.contains("code 411") && error.contains("dek_commitment"),
        "{error}"
    );
    assert!(node.local.dek(&u.dek_cid).unwrap().is_none());
    assert!(node.content.list().unwrap().is_empty(), "no blob kept");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dek_that_unwraps_but_does_not_open_the_content_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let u = upload(200_000, 5);
    let node = beside_a_liar(dir.path(), &u, Lie::WrongDek);
    let w = worker(node.clone());
    let settled = reconcile_until(&w, Duration::from_secs(30), || {
        let c = node.local.content_sync(&u.content_cid).unwrap();
        let k = node.local.dek_sync(&u.dek_cid).unwrap();
        c.is_some_and(|e| e.status() == SyncStatus::Seeding)
            && k.is_some_and(|e| e.status() == SyncStatus::Failed && e.attempts >= 2)
    })
    .await;
    assert!(settled, "{:?}", status(&node).unwrap());
    // the content is real and kept; the DEK that unwraps is not the key
    assert!(node.content.verify(&u.content_cid).unwrap());
    let k = node.local.dek_sync(&u.dek_cid).unwrap().unwrap();
    assert!(
        k.error.contains("code 411") && k.error.contains("dek_commitment"),
        "{}",
        k.error
    );
    assert!(node.local.dek(&u.dek_cid).unwrap().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_that_stops_sending_is_cut_off() {
    let dir = tempfile::tempdir().unwrap();
    let u = upload(100_000, 9);
    let node = beside_a_liar(dir.path(), &u, Lie::Stall);
    let w = worker(node.clone()); // idle limit 2 s
    let cut = reconcile_until(&w, Duration::from_secs(30), || {
        node.local
            .content_sync(&u.content_cid)
            .unwrap()
            .is_some_and(|e| e.status() == SyncStatus::Failed)
    })
    .await;
    assert!(cut, "{:?}", status(&node).unwrap());
    let c = node.local.content_sync(&u.content_cid).unwrap().unwrap();
    assert!(c.error.contains("no data for 2 s"), "{}", c.error);
    assert!(node.content.list().unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_has_content_answer_signed_by_another_key_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let u = upload(10_000, 11);
    let node = beside_a_liar(dir.path(), &u, Lie::Garbage);
    let view = node.chain.view();
    let chain_id = view.commit_info().unwrap().chain_id;
    let liar = stave::local::node::active_validator(&view, &op_key(0))
        .unwrap()
        .expect("node 0 is active");
    let t = stave::local::peer_client::PeerTarget {
        operator: op_key(0),
        address: liar.address,
    };
    let r = stave::local::peer_client::has_content(
        &node.operator,
        &chain_id,
        (&t, &t.operator),
        &u.content_cid,
    )
    .await;
    let e = r.expect_err("a forged answer");
    assert!(e.to_string().contains("signature does not verify"), "{e}");
}
