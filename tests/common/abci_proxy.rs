//! A test-only ABCI proxy that makes one node a Byzantine proposer: it
//! sits between that node's CometBFT and its Stave on a Unix socket of
//! its own and forwards every frame unchanged, except that each
//! `ResponsePrepareProposal` gets the txs `rewrite` returns. It splits
//! frames with Stave's own parser (`stave::abci::frame::next_frame`). The
//! release binary carries no hostile code.

use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use prost::Message;
use stave::abci::frame::next_frame;
use tendermint_proto::v0_38::abci::{response::Value, Response};

/// Replaces the txs of one PrepareProposal answer.
pub type Rewrite = dyn Fn(Vec<Bytes>) -> Vec<Bytes> + Send + Sync;

/// A running proxy; it serves until the test process ends.
pub struct AbciProxy {
    /// Where CometBFT connects (its `proxy_app` is `unix://` this).
    pub socket: PathBuf,
    /// PrepareProposal answers rewritten so far.
    pub rewritten: Arc<AtomicU64>,
}

/// Listens on `socket` and forwards each connection to Stave's ABCI
/// socket `upstream`.
pub fn start(socket: &Path, upstream: &Path, rewrite: Arc<Rewrite>) -> AbciProxy {
    let _ = std::fs::remove_file(socket);
    let listener = UnixListener::bind(socket)
        .unwrap_or_else(|e| panic!("binding the ABCI proxy on {}: {e}", socket.display()));
    let rewritten = Arc::new(AtomicU64::new(0));
    let (up, count) = (upstream.to_path_buf(), rewritten.clone());
    std::thread::spawn(move || {
        for comet in listener.incoming().flatten() {
            let Ok(stave) = UnixStream::connect(&up) else {
                continue; // CometBFT sees the connection close and retries
            };
            pipe(comet, stave, rewrite.clone(), count.clone());
        }
    });
    AbciProxy {
        socket: socket.to_path_buf(),
        rewritten,
    }
}

/// Requests go through as bytes; responses are re-framed one by one.
fn pipe(comet: UnixStream, stave: UnixStream, rewrite: Arc<Rewrite>, count: Arc<AtomicU64>) {
    let (Ok(mut comet_in), Ok(mut stave_out)) = (comet.try_clone(), stave.try_clone()) else {
        return;
    };
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut comet_in, &mut stave_out);
        let _ = stave_out.shutdown(std::net::Shutdown::Both);
    });
    std::thread::spawn(move || {
        let (mut from, mut to) = (stave, comet);
        let _ = responses(&mut from, &mut to, &*rewrite, &count);
        let _ = to.shutdown(std::net::Shutdown::Both);
    });
}

fn responses(
    from: &mut UnixStream,
    to: &mut UnixStream,
    rewrite: &Rewrite,
    count: &AtomicU64,
) -> std::io::Result<()> {
    let mut buf = BytesMut::new();
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        let n = from.read(&mut chunk)?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
        while let Some(body) = next_frame(&mut buf).map_err(std::io::Error::other)? {
            let body = match Response::decode(body.as_ref()) {
                Ok(Response {
                    value: Some(Value::PrepareProposal(mut p)),
                }) => {
                    p.txs = rewrite(std::mem::take(&mut p.txs));
                    count.fetch_add(1, Ordering::SeqCst);
                    Response {
                        value: Some(Value::PrepareProposal(p)),
                    }
                    .encode_to_vec()
                    .into()
                }
                _ => body,
            };
            let mut out = Vec::with_capacity(body.len() + 10);
            prost::encoding::encode_varint(body.len() as u64, &mut out);
            out.extend_from_slice(&body);
            to.write_all(&out)?;
        }
    }
}
