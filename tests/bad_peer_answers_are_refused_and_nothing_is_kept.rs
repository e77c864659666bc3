//! A peer that answers with content whose hash does not match, or with a
//! wrapped DEK that does not unwrap, is refused: nothing is stored, the
//! sync entries go to FAILED with the reason and a retry time.

#[path = "common/local.rs"]
mod local;

use std::time::Duration;

use local::*;
use stave::local::deks::DeksExt;
use stave::local::status::status;
use stave::local::sync::SyncExt;
use stave::proto::local::SyncStatus;
use stave::proto::peer::peer_service_server::PeerService;
use stave::proto::peer::{ContentChunk, SignedPeerRequest, WrappedDekResponse};
use tonic::{Request, Response, Status};

/// Answers every request with well-formed garbage.
struct Liar {
    dek_cid: Vec<u8>,
    size: usize,
}

#[tonic::async_trait]
impl PeerService for Liar {
    async fn fetch_wrapped_dek(
        &self,
        _r: Request<SignedPeerRequest>,
    ) -> Result<Response<WrappedDekResponse>, Status> {
        let junk = stave::crypto::wrap::wrap_dek(
            &stave::crypto::generate_dek(),
            &x25519_dalek::PublicKey::from(&x25519(7)).to_bytes(), // someone else's key
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

    type FetchContentStream = tokio_stream::Iter<std::vec::IntoIter<Result<ContentChunk, Status>>>;

    async fn fetch_content(
        &self,
        _r: Request<SignedPeerRequest>,
    ) -> Result<Response<Self::FetchContentStream>, Status> {
        let chunk = ContentChunk {
            data: vec![0xab; self.size],
        };
        Ok(Response::new(tokio_stream::iter(vec![Ok(chunk)])))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_peer_answers_are_refused_and_nothing_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let u = upload(100_000, 3);
    let asg = vec![u.assignment(&[0, 1], &[0, 1])];
    let liar_l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let mine_l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let state = app_state(&[liar_l.local_addr().unwrap(), mine_l.local_addr().unwrap()]);
    serve(
        liar_l,
        Liar {
            dek_cid: u.dek_cid.clone(),
            size: u.blob.len(),
        },
    );
    let d = dir.path().join("node1");
    let node = local_node(&d, chain_at_genesis(&d, &state, 2), 1, operator(1), asg);
    let w = worker(node.clone());
    let failed = reconcile_until(&w, Duration::from_secs(30), || {
        let c = node.local.content_sync(&u.content_cid).unwrap();
        let k = node.local.dek_sync(&u.dek_cid).unwrap();
        c.is_some_and(|e| e.status() == SyncStatus::Failed && e.attempts >= 2)
            && k.is_some_and(|e| e.status() == SyncStatus::Failed && e.attempts >= 2)
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
    let k = node.local.dek_sync(&u.dek_cid).unwrap().unwrap();
    assert!(k.error.contains("code 408"), "{}", k.error);
    // nothing kept: no content file (nor temp file), no wrapped DEK
    assert!(node.content.list().unwrap().is_empty());
    assert_eq!(
        std::fs::read_dir(d.join("content/.tmp")).unwrap().count(),
        0
    );
    assert!(node.local.dek(&u.dek_cid).unwrap().is_none());
    assert_eq!(s.failures.len(), 2);
    assert!(s.failures.iter().all(|f| !f.error.is_empty()));
}
