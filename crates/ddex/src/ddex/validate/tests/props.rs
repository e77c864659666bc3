//! Whatever the bytes, `validate` answers without panicking.

use super::*;
use proptest::prelude::*;
use prost::Message;

fn no_panic(bytes: &[u8]) {
    if let Ok(m) = pb::NewReleaseMessage::decode(bytes) {
        let _ = validate(&m, &Caps::default());
    }
}

/// A structural mutation of the album: `(field, value)`.
fn mutate(m: &mut pb::NewReleaseMessage, field: u8, s: &str, n: u64) {
    let r = m.release.as_mut().unwrap();
    let top = r.resource_group.as_mut().unwrap();
    let t = m.release_deal[0].deal[0].deal_terms.as_mut().unwrap();
    match field % 12 {
        0 => r.icpn = s.to_string(),
        1 => t.territory_code.push(s.to_string()),
        2 => t.excluded_territory_code.push(s.to_string()),
        3 => t.use_type.push(s.to_string()),
        4 => t.validity_period.push(pb::ValidityPeriod {
            start_date_time: s.to_string(),
            start_secs: n,
            end_secs: n / 2,
            ..Default::default()
        }),
        5 => top.resource_group[0].sequence_number = n as u32,
        6 => top.resource_group[1].resource_group_content_item[0].sequence_number = n as u32,
        7 => m.sound_recording[0].duration = s.to_string(),
        8 => m.message_header.as_mut().unwrap().message_created_date_time = s.to_string(),
        9 => top.resource_group_content_item.push(item(n as u32, s)),
        10 => m.release_deal[0].deal_release_reference.push(s.to_string()),
        _ => m.party_list[0].party_id[0].isni = s.to_string(),
    }
}

proptest! {
    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        no_panic(&bytes);
    }

    #[test]
    fn mutated_album_bytes_never_panic(
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8),
        cut in any::<usize>(),
    ) {
        let mut bytes = album().encode_to_vec();
        for (i, x) in flips {
            let len = bytes.len();
            if let Some(b) = bytes.get_mut(i % len) {
                *b ^= x;
            }
        }
        let keep = bytes.len() - cut % 8;
        bytes.truncate(keep);
        no_panic(&bytes);
    }

    #[test]
    fn every_valid_release_exports_and_imports_back(
        edits in proptest::collection::vec((any::<u8>(), ".{0,24}", any::<u64>()), 0..4),
        variant in proptest::option::of((".{0,3}", ".{0,3}", 0u32..4)),
    ) {
        let mut m = album();
        for (field, s, n) in edits {
            mutate(&mut m, field, &s, n);
        }
        if let (Some((lang, terr, def)), Some(r)) = (variant, m.release.as_mut()) {
            if let Some(t) = r.display_title_text.first_mut() {
                t.variant = Some(pb::Variant {
                    language_and_script_code: lang,
                    applicable_territory_code: terr,
                    is_default: def,
                });
            }
        }
        if validate(&m, &Caps::default()).is_ok() {
            use crate::ddex::xml::{export, import, ImportOptions};
            let xml = export(&m);
            let back = import(xml.as_bytes(), &ImportOptions::default());
            prop_assert!(back.is_ok(), "{:?}\n{xml}", back.err());
            prop_assert_eq!(back.map(|b| b.message).ok(), Some(m));
        }
    }

    #[test]
    fn mutated_album_fields_never_panic(
        edits in proptest::collection::vec((any::<u8>(), ".{0,24}", any::<u64>()), 1..6),
    ) {
        let mut m = album();
        for (field, s, n) in edits {
            mutate(&mut m, field, &s, n);
        }
        let _ = validate(&m, &Caps::default());
    }
}
