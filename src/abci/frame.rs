//! ABCI socket framing: every message is a protobuf body prefixed by its
//! length as an unsigned varint (CometBFT's `abci++_client_server.md`).

use bytes::{Buf, Bytes, BytesMut};

/// Largest frame accepted. CometBFT's largest request is FinalizeBlock or a
/// proposal, bounded by the block size limit (at most 100 MiB).
pub const MAX_FRAME: usize = 128 << 20;

/// A varint takes at most this many bytes.
const MAX_PREFIX: usize = 10;

/// Framing errors. Only CometBFT talks to this socket, so either means the
/// connection is broken; the server closes it.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FrameError {
    #[error("frame of {len} bytes is over the {max}-byte limit")]
    TooLarge { len: u64, max: usize },
    #[error("malformed length prefix {prefix:02x?}")]
    BadPrefix { prefix: Vec<u8> },
}

/// Takes the next complete frame's body off the front of `buf`. `Ok(None)`
/// means more bytes are needed; `buf` is then left as it was.
pub fn next_frame(buf: &mut BytesMut) -> Result<Option<Bytes>, FrameError> {
    let Some((len, head)) = prefix(buf)? else {
        return Ok(None);
    };
    if len > MAX_FRAME as u64 {
        return Err(FrameError::TooLarge {
            len,
            max: MAX_FRAME,
        });
    }
    let len = len as usize; // at most MAX_FRAME
    if buf.len() - head < len {
        return Ok(None);
    }
    buf.advance(head);
    Ok(Some(buf.split_to(len).freeze()))
}

/// The length prefix at the front of `buf` and its size in bytes.
fn prefix(buf: &[u8]) -> Result<Option<(u64, usize)>, FrameError> {
    let mut len = 0u64;
    for (i, &b) in buf.iter().take(MAX_PREFIX).enumerate() {
        // The tenth byte may carry only the top bit of a u64.
        if i == MAX_PREFIX - 1 && b > 1 {
            break;
        }
        len |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Ok(Some((len, i + 1)));
        }
    }
    if buf.len() < MAX_PREFIX && buf.iter().all(|b| b & 0x80 != 0) {
        return Ok(None);
    }
    Err(FrameError::BadPrefix {
        prefix: buf.iter().take(MAX_PREFIX).copied().collect(),
    })
}

/// Appends `msg` to `out` as one frame.
pub fn put_frame(msg: &impl prost::Message, out: &mut Vec<u8>) {
    prost::encoding::encode_varint(msg.encoded_len() as u64, out);
    // A Vec grows as needed, so encoding into it cannot run out of room.
    let _ = msg.encode(out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use tendermint_proto::v0_38::abci as pb;

    fn echo(msg: &str) -> pb::Request {
        pb::Request {
            value: Some(pb::request::Value::Echo(pb::RequestEcho {
                message: msg.into(),
            })),
        }
    }

    #[test]
    fn frames_round_trip_one_byte_at_a_time() {
        let mut wire = Vec::new();
        for m in ["a", "", &"x".repeat(300)] {
            put_frame(&echo(m), &mut wire);
        }
        let mut buf = BytesMut::new();
        let mut got = Vec::new();
        for b in wire {
            buf.extend_from_slice(&[b]);
            while let Some(f) = next_frame(&mut buf).unwrap() {
                got.push(<pb::Request as prost::Message>::decode(f).unwrap());
            }
        }
        assert_eq!(got, vec![echo("a"), echo(""), echo(&"x".repeat(300))]);
        assert!(buf.is_empty());
    }

    #[test]
    fn an_oversized_prefix_is_refused_before_the_body_arrives() {
        let mut buf = BytesMut::new();
        prost::encoding::encode_varint(MAX_FRAME as u64 + 1, &mut buf);
        assert_eq!(
            next_frame(&mut buf),
            Err(FrameError::TooLarge {
                len: MAX_FRAME as u64 + 1,
                max: MAX_FRAME
            })
        );
    }

    #[test]
    fn an_overlong_varint_is_refused() {
        let mut buf = BytesMut::from(&[0xff_u8; 11][..]);
        assert!(matches!(
            next_frame(&mut buf),
            Err(FrameError::BadPrefix { .. })
        ));
        // A tenth byte above 1 would overflow a u64.
        let mut buf =
            BytesMut::from(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02][..]);
        assert!(matches!(
            next_frame(&mut buf),
            Err(FrameError::BadPrefix { .. })
        ));
    }

    #[test]
    fn ten_byte_prefixes_at_the_edges() {
        // 2^63: a valid varint, over the limit.
        let mut top = vec![0x80u8; 9];
        top.push(0x01);
        assert!(matches!(
            next_frame(&mut BytesMut::from(&top[..])),
            Err(FrameError::TooLarge { .. })
        ));
        // Zero in ten bytes (non-minimal, as Go's ReadUvarint accepts): an
        // empty frame.
        let mut zero = vec![0x80u8; 9];
        zero.push(0x00);
        let mut buf = BytesMut::from(&zero[..]);
        assert_eq!(next_frame(&mut buf), Ok(Some(Bytes::new())));
        assert!(buf.is_empty());
    }

    #[test]
    fn a_frame_at_the_limit_waits_for_its_body() {
        let mut buf = BytesMut::new();
        prost::encoding::encode_varint(MAX_FRAME as u64, &mut buf);
        buf.extend_from_slice(b"partial");
        let before = buf.clone();
        assert_eq!(next_frame(&mut buf), Ok(None));
        assert_eq!(buf, before);
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let mut buf = BytesMut::from(&bytes[..]);
            while let Ok(Some(_)) = next_frame(&mut buf) {}
        }

        #[test]
        fn a_partial_frame_leaves_the_buffer_as_it_was(len in 0usize..40_000, cut in 0usize..40_004) {
            let mut wire = Vec::new();
            put_frame(&echo(&"y".repeat(len)), &mut wire);
            let cut = cut.min(wire.len().saturating_sub(1));
            let mut buf = BytesMut::from(&wire[..cut]);
            prop_assert_eq!(next_frame(&mut buf), Ok(None));
            prop_assert_eq!(&buf[..], &wire[..cut]);
        }
    }
}
