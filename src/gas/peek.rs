//! Reading a tx's declared `gas_limit` without decoding it: walks the
//! protobuf fields of `Tx` and of its `body_bytes` and decodes nothing else,
//! so ProcessProposal can sum a proposal's limits before any signature check
//! or full decode. Fields are skipped with prost's own `skip_field` and a
//! repeated field's last value wins, as in prost: whatever prost decodes, the
//! peek reads the same limit from.

use prost::encoding::{decode_key, decode_varint, skip_field, DecodeContext, WireType};

/// Field numbers: `Tx.body_bytes` and `TxBody.gas_limit`.
const TX_BODY_BYTES: u32 = 1;
const BODY_GAS_LIMIT: u32 = 6;

/// The `gas_limit` a raw tx declares (0 when its body has none), or `None`
/// when the bytes are not well-formed protobuf as far as the walk goes.
pub fn declared_gas(raw: &[u8]) -> Option<u64> {
    let body = last_bytes_field(raw, TX_BODY_BYTES)?.unwrap_or(&[]);
    last_varint_field(body, BODY_GAS_LIMIT)
}

/// The last length-delimited field `tag` of a message, borrowed.
fn last_bytes_field(mut buf: &[u8], tag: u32) -> Option<Option<&[u8]>> {
    let mut found = None;
    while !buf.is_empty() {
        let (t, wt) = decode_key(&mut buf).ok()?;
        if t == tag && wt == WireType::LengthDelimited {
            let (value, rest) = split_len(buf)?;
            found = Some(value);
            buf = rest;
        } else {
            skip_field(wt, t, &mut buf, DecodeContext::default()).ok()?;
        }
    }
    Some(found)
}

/// The last varint field `tag` of a message (0 when absent).
fn last_varint_field(mut buf: &[u8], tag: u32) -> Option<u64> {
    let mut found = 0;
    while !buf.is_empty() {
        let (t, wt) = decode_key(&mut buf).ok()?;
        if t == tag && wt == WireType::Varint {
            found = decode_varint(&mut buf).ok()?;
        } else {
            skip_field(wt, t, &mut buf, DecodeContext::default()).ok()?;
        }
    }
    Some(found)
}

/// A length-prefixed value and what follows it.
fn split_len(mut buf: &[u8]) -> Option<(&[u8], &[u8])> {
    let len = usize::try_from(decode_varint(&mut buf).ok()?).ok()?;
    (len <= buf.len()).then(|| buf.split_at(len))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::tx as pb;
    use prost::Message;

    fn raw(gas_limit: u64, memo: &str) -> Vec<u8> {
        let body = pb::TxBody {
            chain_id: "c".into(),
            signer: vec![1; 32],
            nonce: 7,
            actions: vec![],
            memo: memo.into(),
            gas_limit,
        };
        pb::Tx {
            body_bytes: body.encode_to_vec(),
            signature: vec![2; 64],
            pow_nonce: 0,
        }
        .encode_to_vec()
    }

    #[test]
    fn reads_the_declared_limit_of_what_prost_decodes() {
        for g in [0, 1, 300, u64::MAX] {
            assert_eq!(declared_gas(&raw(g, "m")), Some(g));
        }
        assert_eq!(declared_gas(&[]), Some(0));
        assert_eq!(declared_gas(&[0x0a, 0x05, 1]), None, "truncated body");
        assert_eq!(declared_gas(&[0xff]), None);
    }

    proptest::proptest! {
        /// On any bytes, the peek agrees with prost wherever prost decodes.
        #[test]
        fn agrees_with_prost(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..64)) {
            if let Ok(tx) = pb::Tx::decode(bytes.as_slice()) {
                if let Ok(body) = pb::TxBody::decode(tx.body_bytes.as_slice()) {
                    proptest::prop_assert_eq!(declared_gas(&bytes), Some(body.gas_limit));
                }
            }
        }
    }
}
