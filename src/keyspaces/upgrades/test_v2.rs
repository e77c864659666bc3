//! The test migration (`upgrade-test` builds only): app version 2 adds a
//! field to the kvdb entries of `kvdb/`. The field is protobuf field 100, a
//! varint that old readers skip: 1 on an entry the migration found, 2 on an
//! entry written under version 2's rules. Version 1's rules re-encode an
//! entry without it, so a node that replayed pre-upgrade blocks under the
//! new rules would hold other bytes, and another app hash, than one that
//! ran them under the old.

use prost::encoding::{decode_key, decode_varint, skip_field, DecodeContext, WireType};

use super::UpgradesRead;
use crate::keyspaces::kv::keys::kvdb_area;
use crate::store::{Space, StateRead, StateWrite, StoreError};

pub const NAME: &str = "stave-test-v2";
pub const APP_VERSION: u64 = 2;

/// Field 100, wire type varint.
const TAG: [u8; 2] = [0xA0, 0x06];
const MIGRATED: u8 = 1;
const WRITTEN_V2: u8 = 2;
const PAGE: usize = 1024;

/// The field's value in an encoded entry, if it has one.
pub fn field(mut raw: &[u8]) -> Option<u64> {
    let mut found = None;
    while !raw.is_empty() {
        let (tag, wire) = decode_key(&mut raw).ok()?;
        if tag == 100 && wire == WireType::Varint {
            found = Some(decode_varint(&mut raw).ok()?);
        } else {
            skip_field(wire, tag, &mut raw, DecodeContext::default()).ok()?;
        }
    }
    found
}

/// Adds the field (1) to every entry that lacks it; idempotent.
pub fn migrate<S: StateWrite>(state: &mut S) -> Result<(), StoreError> {
    let prefix = kvdb_area();
    let mut after: Option<Vec<u8>> = None;
    loop {
        let rows = state.prefix_raw(Space::State, &prefix, after.as_deref(), PAGE)?;
        let Some((last, _)) = rows.last() else {
            return Ok(());
        };
        after = Some(last.clone());
        for (k, mut v) in rows {
            if field(&v).is_none() {
                v.extend_from_slice(&TAG);
                v.push(MIGRATED);
                state.put_raw(k, v);
            }
        }
    }
}

/// Version 2's rule for an entry being written: it carries the field (2).
/// Version 1's rule writes the entry as encoded.
pub fn stamp<S: StateRead + ?Sized>(state: &S, encoded: &mut Vec<u8>) {
    // a store fault here surfaces at the entry's own write, which reads
    // the same store; a test build may treat it as version 1
    if state.app_version().unwrap_or(1) >= APP_VERSION {
        encoded.extend_from_slice(&TAG);
        encoded.push(WRITTEN_V2);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{MemState, Overlay};

    #[test]
    fn the_migration_adds_the_field_once_and_v2_writes_carry_it() {
        let base = MemState::default();
        let mut s = Overlay::new(&base);
        let key = crate::keyspaces::kv::keys::kvdb_key(&[7; 32], "default", b"k");
        s.put_raw(key.clone(), vec![0x0a, 0x01, b'v']);
        migrate(&mut s).unwrap();
        let once = s.get_raw(&key).unwrap().unwrap();
        assert_eq!(field(&once), Some(1));
        migrate(&mut s).unwrap();
        assert_eq!(s.get_raw(&key).unwrap().unwrap(), once, "idempotent");
        let mut v1 = vec![0x0a, 0x01, b'w'];
        stamp(&s, &mut v1);
        assert_eq!(field(&v1), None, "version 1 rules write no field");
        crate::keyspaces::upgrades::UpgradesWrite::put_app_version(&mut s, 2);
        let mut v2 = vec![0x0a, 0x01, b'w'];
        stamp(&s, &mut v2);
        assert_eq!(field(&v2), Some(2));
    }
}
