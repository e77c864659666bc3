//! The ABCI socket's input path: length-prefixed frames
//! ([`crate::abci::frame::next_frame`]) read from a stream that arrives in
//! pieces, each frame decoded as a CometBFT `Request`, converted to
//! tendermint's domain request and then to its service's request, as
//! `abci::server` does.
//!
//! The first byte is the size of the pieces the stream arrives in; the
//! rest is the stream.
//!
//! # The oracle
//! - No panic anywhere on the path (the server answers bad frames by
//!   closing the connection, never by dying).
//! - Framing does not depend on how the bytes arrive: in pieces or whole,
//!   the same frames and the same error.
//! - A frame never exceeds `MAX_FRAME`, and `next_frame` leaves the buffer
//!   untouched when it needs more bytes.
//! - A request that decodes survives `put_frame` then `next_frame` then
//!   decode unchanged.

use bytes::{Bytes, BytesMut};
use prost::Message;
use tendermint::abci::MethodKind;
use tendermint::v0_38::abci::{
    ConsensusRequest, InfoRequest, MempoolRequest, Request, SnapshotRequest,
};
use tendermint_proto::v0_38::abci as pb;

use crate::abci::frame::{next_frame, put_frame, FrameError, MAX_FRAME};

/// Runs the oracle on `data` (piece size, then the stream).
pub fn frame_case(data: &[u8]) {
    let Some((step, stream)) = data.split_first() else {
        return;
    };
    let pieces = read(stream, usize::from(*step).max(1));
    let whole = read(stream, stream.len().max(1));
    assert_eq!(pieces, whole, "framing depends on how the bytes arrive");
    for body in &pieces.0 {
        assert!(body.len() <= MAX_FRAME);
        request(body);
    }
}

/// The frames of `stream` fed `step` bytes at a time, and the error that
/// ended it, if any.
fn read(stream: &[u8], step: usize) -> (Vec<Bytes>, Option<FrameError>) {
    let mut buf = BytesMut::new();
    let mut frames = Vec::new();
    for piece in stream.chunks(step) {
        buf.extend_from_slice(piece);
        loop {
            let before = buf.clone();
            match next_frame(&mut buf) {
                Ok(Some(f)) => frames.push(f),
                Ok(None) => {
                    assert_eq!(buf, before, "next_frame consumed bytes but gave no frame");
                    break;
                }
                Err(e) => return (frames, Some(e)),
            }
        }
    }
    (frames, None)
}

fn request(body: &Bytes) {
    let Ok(req) = pb::Request::decode(body.clone()) else {
        return;
    };
    let mut out = Vec::new();
    put_frame(&req, &mut out);
    let mut buf = BytesMut::from(out.as_slice());
    let again = next_frame(&mut buf)
        .expect("a frame put_frame wrote reads back")
        .expect("and is complete");
    assert!(buf.is_empty(), "put_frame wrote one frame");
    assert_eq!(
        pb::Request::decode(again).ok(),
        Some(req.clone()),
        "frame round trip"
    );
    let Ok(domain) = Request::try_from(req) else {
        return;
    };
    let _ = match domain.kind() {
        MethodKind::Consensus => ConsensusRequest::try_from(domain).map(drop),
        MethodKind::Mempool => MempoolRequest::try_from(domain).map(drop),
        MethodKind::Info => InfoRequest::try_from(domain).map(drop),
        MethodKind::Snapshot => SnapshotRequest::try_from(domain).map(drop),
        MethodKind::Flush => Ok(()),
    };
}

/// Seeds: streams of real requests (echo, info, check, a proposal, a
/// query) in one piece size each, and a bad prefix.
pub fn seeds() -> Vec<(String, Vec<u8>)> {
    use pb::request::Value;
    let reqs = [
        Value::Echo(pb::RequestEcho {
            message: "hello".into(),
        }),
        Value::Flush(pb::RequestFlush {}),
        Value::Info(pb::RequestInfo {
            version: "0.38.26".into(),
            block_version: 11,
            p2p_version: 8,
            abci_version: "2.0.0".into(),
        }),
        Value::CheckTx(pb::RequestCheckTx {
            tx: vec![1, 2, 3].into(),
            r#type: 0,
        }),
        Value::Query(pb::RequestQuery {
            data: vec![].into(),
            path: "/store".into(),
            height: 1,
            prove: true,
        }),
        Value::ProcessProposal(pb::RequestProcessProposal {
            txs: vec![vec![9; 40].into()],
            height: 2,
            ..Default::default()
        }),
    ];
    let mut stream = Vec::new();
    for v in reqs {
        put_frame(&pb::Request { value: Some(v) }, &mut stream);
    }
    let mut seeds = Vec::new();
    for step in [1u8, 7, 64, 255] {
        seeds.push((
            format!("requests-by-{step}"),
            [&[step][..], &stream].concat(),
        ));
    }
    seeds.push((
        "bad-prefix".into(),
        vec![
            3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f,
        ],
    ));
    seeds
}
