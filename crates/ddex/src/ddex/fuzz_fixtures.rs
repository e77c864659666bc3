//! The invariants the fuzz targets check (`fuzz/fuzz_targets/ern_xml.rs`,
//! `release_validate.rs`), shared with `tests/fuzz_corpus_replays.rs`, which
//! runs every seed and committed corpus input through them on stable.

use prost::Message;

use super::validate::{validate, Caps};
use super::xml::{export, import, ImportOptions};
use crate::proto::ddex as pb;

/// The ERN fixtures of `tests/fixtures/ddex/`, as seeds.
pub fn xml_seeds() -> Vec<(&'static str, &'static [u8])> {
    macro_rules! seed {
        ($($name:literal),*) => {
            vec![$(($name, include_bytes!(concat!("../../../../tests/fixtures/ddex/", $name)).as_slice())),*]
        };
    }
    seed!(
        "album.xml",
        "album_update.xml",
        "single.xml",
        "album3.xml.tmpl",
        "bad_doctype.xml",
        "bad_entity.xml",
        "bad_namespace.xml",
        "bad_overlapping_deals.xml",
        "bad_dangling_reference.xml"
    )
}

/// Any bytes: the importer answers without panicking; a message it
/// accepts exports to XML that imports to the same message, and exports
/// again to the same bytes; and consensus validation answers the same twice.
pub fn xml_case(data: &[u8]) {
    let opts = ImportOptions {
        max_bytes: 1 << 20,
        ..ImportOptions::default()
    };
    let Ok(first) = import(data, &opts) else {
        return;
    };
    let xml = export(&first.message);
    let again = match import(xml.as_bytes(), &opts) {
        Ok(a) => a,
        Err(e) => panic!("an export does not re-import: {e}\n{xml}"),
    };
    assert_eq!(again.message, first.message, "import(export(m)) != m");
    assert_eq!(export(&again.message), xml, "export is not stable");
    validate_twice(&first.message);
}

/// Any bytes as a protobuf `NewReleaseMessage`: validation answers without
/// panicking, and the same twice.
pub fn validate_case(data: &[u8]) {
    if let Ok(m) = pb::NewReleaseMessage::decode(data) {
        validate_twice(&m);
    }
}

fn validate_twice(m: &pb::NewReleaseMessage) {
    let caps = Caps::default();
    assert_eq!(validate(m, &caps), validate(m, &caps));
}
