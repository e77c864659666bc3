//! Part of the `peer` target (see the module doc).

use super::*;

/// A decoded entry state that converts: its domain entry round-trips.
pub(super) fn round_trip_pb(s: Option<rpb::EntryState>) {
    if let Some(Ok(e)) = s.map(codec::entry_from_pb) {
        assert_eq!(
            codec::entry_from_pb(codec::entry_to_pb(&e)),
            Ok(e),
            "entry round trip"
        );
    }
}

/// 128 bytes of metadata round-trip; `newer_than` is a strict total order.
pub(super) fn metadata_order(a: &[u8], b: &[u8]) {
    let (Ok(x), Ok(y)) = (
        Metadata::from_bytes(a),
        Metadata::from_bytes(b.get(..128).unwrap_or(b)),
    ) else {
        return;
    };
    assert_eq!(x.to_bytes().as_slice(), a, "metadata bytes round trip");
    let order = (x.newer_than(&y), y.newer_than(&x));
    assert!(
        if x == y {
            order == (false, false)
        } else {
            order.0 != order.1
        },
        "newer_than is not a strict total order"
    );
}

/// An entry by 0–8 ops stamped by `replicas`, at times up to `max_ms`.
pub(super) fn entry(u: &mut Unstructured, replicas: &[[u8; 32]], max_ms: u64) -> AResult<Entry> {
    let mut e = Entry::default();
    for _ in 0..u.int_in_range(0..=8u8)? {
        let r = *u.choose(replicas)?;
        let s = Stamp::new(max_ms - u.int_in_range(0..=50)?, r);
        let k = take(u, 3)?;
        let _ = match u.int_in_range(0..=10u8)? {
            0 => {
                let at = u.arbitrary::<bool>()?.then_some(max_ms + 1);
                e.set(s, k, at);
                Ok(())
            }
            1 => {
                e.set_list(s, vec![k, take(u, 3)?]);
                Ok(())
            }
            2 => {
                e.del(s);
                Ok(())
            }
            3 => e.hset(s, k, take(u, 3)?),
            4 => e.hdel(s, &k).map(|_| ()),
            5 => e.sadd(s, &[k]).map(|_| ()),
            6 => e.srem(s, &[k]).map(|_| ()),
            7 => e.zadd(s, k, u.arbitrary()?),
            8 => e.zrem(s, &[k]).map(|_| ()),
            9 => e.incr_by(s, u.arbitrary()?).map(|_| ()),
            _ => {
                e.expire(s, Some(max_ms + 1));
                Ok(())
            }
        };
    }
    Ok(e)
}

pub(super) fn record_value(u: &mut Unstructured) -> AResult<&'static str> {
    let owner = u.arbitrary()?;
    let db = u.choose(&DBS)?.to_string();
    let key = [vec![b'k'], take(u, 8)?].concat();
    let entry = entry(u, &[owner, [7; 32]], NOW)?;
    round_trip_pb(Some(codec::entry_to_pb(&entry)));
    let v = RecordValue {
        owner,
        db,
        key,
        entry,
    };
    let b = v.encode();
    assert_eq!(
        RecordValue::decode(&b),
        Ok(v.clone()),
        "a record value's encoding does not decode to it"
    );
    let (changed, got) = edited(u, &codec::entry_to_pb(&v.entry))?;
    round_trip_pb(got);
    let (_, pb) = edited(
        u,
        &rpb::RecordValue::decode(b.as_slice()).unwrap_or_default(),
    )?;
    let bytes = pb.map(|p| p.encode_to_vec()).unwrap_or_default();
    if let Ok(w) = RecordValue::decode(&bytes) {
        assert!(
            w.encode() == bytes,
            "RecordValue::decode accepts a non-canonical encoding"
        );
    }
    Ok(["record_value", "record_value_changed"][usize::from(changed)])
}

/// A record signed by its owner with its work done: the wire metadata, its
/// value and the value's bytes.
pub(super) fn build_record(
    u: &mut Unstructured,
) -> AResult<(rpb::RecordMeta, RecordValue, Vec<u8>)> {
    let k = key(0x21);
    let owner = public(&k);
    let (db, key) = (
        u.choose(&DBS)?.to_string(),
        [vec![b'k'], take(u, 8)?].concat(),
    );
    let ts = NOW - u.int_in_range(0..=1_000)?;
    let v = RecordValue {
        owner,
        db,
        key,
        entry: entry(u, &[owner], ts)?,
    };
    let (value, datakey) = (v.encode(), v.datakey());
    let ttl = u.int_in_range(0..=1u32)?;
    let ttl_begin = if ttl == 0 {
        NOW + 1 + u.int_in_range(0..=1_000)?
    } else {
        ts
    };
    let hash = Sha256::digest(&value).into();
    let size = value.len() as u32;
    let mut md = Metadata {
        ts,
        flags: FLAG_PLAIN,
        size,
        hash,
        sig: [0; 64],
        ttl_begin,
        ttl,
        pow_nonce: 0,
    };
    md.sign(&k, CHAIN, &datakey);
    assert!(
        crate::replica::pow::solve(&mut md, 1, 0, 1 << 20),
        "no work found"
    );
    let meta = rpb::RecordMeta {
        owner: owner.to_vec(),
        datakey: datakey.to_vec(),
        metadata: md.to_bytes().to_vec(),
    };
    Ok((meta, v, value))
}

pub(super) fn record(u: &mut Unstructured) -> AResult<&'static str> {
    let (meta, v, value) = build_record(u)?;
    let current = BTreeSet::from([public(&key(0x21)), public(&key(0x22))]);
    let c = match accept::check_meta(&meta, &ctx(&current)) {
        Ok(c) => c,
        Err(e) => panic!("a signed record is refused: {e}"),
    };
    assert_eq!(
        accept::check_value(&c, &value),
        Ok(v.clone()),
        "a signed record's value is refused"
    );
    let (changed, got) = edited(u, &meta)?;
    if let Some(m) = got {
        let r = accept::check_meta(&m, &ctx(&current));
        assert_eq!(
            r,
            accept::check_meta(&m, &ctx(&current)),
            "check_meta twice"
        );
        if let Ok(d) = r {
            let signed = |m: &Metadata| (m.ts, m.flags, m.size, m.hash);
            let same =
                d.owner == c.owner && d.datakey == c.datakey && signed(&d.md) == signed(&c.md);
            assert!(same, "changed metadata is accepted as another record");
        }
    }
    let (value_changed, w) = edited(
        u,
        &rpb::RecordValue::decode(value.as_slice()).unwrap_or_default(),
    )?;
    if let Some(w) = w.map(|w| w.encode_to_vec()) {
        let r = accept::check_value(&c, &w);
        assert!(
            r.is_err() || (w == value && r == Ok(v)),
            "a changed value is accepted"
        );
    }
    Ok(["record_intact", "record_changed"][usize::from(changed || value_changed)])
}
