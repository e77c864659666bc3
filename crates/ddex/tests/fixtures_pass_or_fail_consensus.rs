//! The ERN fixtures through the importer and then consensus validation:
//! the good ones pass (with the expected tracks and coverage), and each
//! consensus-level bad one is refused for its own reason.

use stave_ddex::ddex::territory::TerritorySet;
use stave_ddex::ddex::validate::{validate, Caps, Validated};
use stave_ddex::ddex::xml::{import, ImportOptions};
use stave_ddex::ddex::DdexError;

fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../../tests/fixtures/ddex/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn judged(name: &str) -> Result<Validated, DdexError> {
    let m = import(&fixture(name), &ImportOptions::default())
        .unwrap_or_else(|e| panic!("{name} imports: {e}"))
        .message;
    validate(&m, &Caps::default())
}

/// Whether any deal covering the first track reaches `code`.
fn first_track_reaches(v: &Validated, code: &str) -> bool {
    v.covering[0]
        .1
        .deals
        .iter()
        .filter_map(|d| TerritorySet::from_bytes(&d.territories))
        .any(|s| s.has_code(code))
}

#[test]
fn good_fixtures_pass_consensus() {
    let album = judged("album.xml").expect("album.xml");
    assert_eq!(album.tracks.len(), 10);
    let discs: Vec<u32> = album.tracks.iter().map(|t| t.disc).collect();
    assert_eq!(discs, [1, 1, 1, 1, 1, 1, 2, 2, 2, 2]);
    assert_eq!(album.release_id.len(), 14, "an ICPN as a GTIN-14");
    assert!(first_track_reaches(&album, "GB"));
    let update = judged("album_update.xml").expect("album_update.xml");
    assert_eq!(update.release_id, album.release_id);
    let single = judged("single.xml").expect("single.xml");
    assert_eq!(single.tracks.len(), 1);
    assert_eq!(single.release_id, "A12425GABC1234002M");
}

#[test]
fn the_update_withdraws_gb() {
    let album = judged("album.xml").expect("album.xml");
    let update = judged("album_update.xml").expect("album_update.xml");
    let gb = |v: &Validated| {
        v.covering.iter().any(|(_, deals)| {
            deals
                .deals
                .iter()
                .filter_map(|d| TerritorySet::from_bytes(&d.territories))
                .any(|s| s.has_code("GB"))
        })
    };
    assert!(gb(&album));
    assert!(!gb(&update), "no deal of the update reaches GB");
}

/// What a refusal must look like.
type Expected = fn(&DdexError) -> bool;

#[test]
fn consensus_level_bad_fixtures_are_refused_for_their_reason() {
    let cases: [(&str, Expected); 6] = [
        (
            "bad_icpn_check_digit.xml",
            |e| matches!(e, DdexError::Invalid(m) if m.contains("ICPN") && m.contains("check digit")),
        ),
        (
            "bad_grid_check.xml",
            |e| matches!(e, DdexError::Invalid(m) if m.contains("GRid") && m.contains("check character")),
        ),
        ("bad_duplicate_isrc.xml", |e| {
            matches!(e, DdexError::Isrc { .. })
        }),
        (
            "bad_dangling_reference.xml",
            |e| matches!(e, DdexError::Invalid(m) if m.contains("P9")),
        ),
        (
            "bad_unknown_territory.xml",
            |e| matches!(e, DdexError::Territory(t) if t.contains("XX")),
        ),
        (
            "bad_overlapping_deals.xml",
            |e| matches!(e, DdexError::OverlappingDeals(m) if m.contains("FR")),
        ),
    ];
    for (name, expected) in cases {
        match judged(name) {
            Ok(_) => panic!("{name} passed consensus"),
            Err(e) => assert!(expected(&e), "{name}: {e}"),
        }
    }
    // far-future is a state check (block time): validation alone passes it
    assert!(judged("bad_far_future.xml").is_ok());
}
