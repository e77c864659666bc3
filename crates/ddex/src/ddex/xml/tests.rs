//! Tests over the fixtures in `tests/fixtures/ddex`: counts, refusals,
//! caps, cid overrides, round trips and no panics on damaged input.

use super::*;
use crate::ddex::time::{date_end_secs, date_start_secs, date_time_ms};

fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../../tests/fixtures/ddex/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn fixture_str(name: &str) -> String {
    String::from_utf8(fixture(name)).unwrap()
}

fn ok(xml: &[u8]) -> Imported {
    import(xml, &ImportOptions::default()).unwrap()
}

fn refused(xml: &[u8], opts: &ImportOptions) -> String {
    match import(xml, opts) {
        Ok(_) => panic!("imported, but should be refused"),
        Err(e) => e.to_string(),
    }
}

fn deal_terms(m: &pb::NewReleaseMessage, rd: usize, d: usize) -> &pb::DealTerms {
    m.release_deal[rd].deal[d].deal_terms.as_ref().unwrap()
}

#[test]
fn album_imports_with_the_expected_shape() {
    let im = ok(&fixture("album.xml"));
    let m = &im.message;
    assert_eq!(m.ern_version, "43");
    assert_eq!(m.release_profile_version_id, "Audio");
    let h = m.message_header.as_ref().unwrap();
    assert_eq!(h.message_created_ms, 1_704_875_400_000);
    assert_eq!(h.message_control_type, "LiveMessage");
    assert_eq!(m.party_list.len(), 3);
    assert_eq!(m.party_list[0].party_id[0].dpid, "PADPIDA2014120301U");
    assert_eq!(m.party_list[1].party_id[0].isni, "0000000121032683");
    assert_eq!(m.party_list[1].full_name.len(), 2);
    assert!(m.party_list[2].party_id.is_empty());
    assert_eq!(m.sound_recording.len(), 10);
    let a1 = &m.sound_recording[0];
    let ed = a1.sound_recording_edition.as_ref().unwrap();
    assert_eq!(ed.isrc, "GBAYE2400001");
    let td = &ed.technical_details[0];
    assert_eq!(
        (
            td.audio_codec_type.as_str(),
            td.number_of_channels,
            td.sampling_rate.as_str(),
            td.bits_per_sample
        ),
        ("FLAC", 2, "44.1", 16)
    );
    assert_eq!(a1.duration_ms, 221_000);
    assert_eq!(a1.contributor[0].role, ["Composer", "Lyricist"]);
    assert_eq!(a1.cid.len(), 32);
    let cids: std::collections::BTreeSet<_> = m.sound_recording.iter().map(|r| &r.cid).collect();
    assert_eq!(cids.len(), 10);
    assert_eq!(m.image.len(), 1);
    assert_eq!(m.image[0].technical_details[0].uri, "resources/cover.jpg");
    assert_eq!(m.track_release.len(), 10);
    assert_eq!(m.track_release[9].isrc, "GBAYE2400010");
    assert_eq!(im.dropped, ["ImmersiveEdition of A3"]);
}

#[test]
fn album_release_groups_titles_and_deals() {
    let m = ok(&fixture("album.xml")).message;
    let r = m.release.as_ref().unwrap();
    assert_eq!(
        (r.release_type.as_str(), r.icpn.as_str()),
        ("Album", "5060123456783")
    );
    let top = r.resource_group.as_ref().unwrap();
    assert_eq!(top.resource_group.len(), 2);
    assert_eq!(top.resource_group[0].resource_group_content_item.len(), 6);
    assert_eq!(top.resource_group[1].resource_group_content_item.len(), 4);
    assert_eq!(top.resource_group[1].sequence_number, 2);
    assert_eq!(top.linked_release_resource_reference, ["A11"]);
    let en = r.display_title_text[0].variant.as_ref().unwrap();
    assert_eq!(
        (en.language_and_script_code.as_str(), en.is_default),
        ("en", 1)
    );
    let ja = r.display_title_text[1].variant.as_ref().unwrap();
    assert_eq!(
        (ja.language_and_script_code.as_str(), ja.is_default),
        ("ja", 0)
    );
    assert_eq!(r.display_title[1].variant.as_ref().unwrap().is_default, 2);
    assert_eq!(r.display_title[1].sub_title.len(), 1);
    assert_eq!(m.release_deal.len(), 2);
    assert_eq!(m.release_deal[0].deal.len(), 2);
    assert_eq!(m.release_deal[1].deal_release_reference.len(), 10);
    let a = deal_terms(&m, 0, 0);
    assert_eq!(
        (
            a.territory_code.as_slice(),
            a.excluded_territory_code.as_slice()
        ),
        (&["Worldwide".to_string()][..], &["US".to_string()][..])
    );
    assert_eq!(
        a.validity_period[0].start_secs,
        date_start_secs("2024-01-01").unwrap()
    );
    assert_eq!(a.validity_period[0].end_secs, 0);
    assert_eq!(deal_terms(&m, 0, 1).use_type, ["OnDemandStream"]);
    let c = deal_terms(&m, 1, 0);
    assert_eq!(c.territory_code, ["FR", "GB", "DE"]);
    assert_eq!(
        c.validity_period[0].end_secs,
        date_end_secs("2025-12-31").unwrap()
    );
}

#[test]
fn album_skips_what_is_outside_the_subset() {
    let im = ok(&fixture("album.xml"));
    for p in [
        "/NewReleaseMessage/DealList/ReleaseDeal/Deal/DealTerms/PriceInformation",
        "/NewReleaseMessage/DealList/ReleaseVisibility",
        "/NewReleaseMessage/ReleaseList/Release/MarketingComment",
        "/NewReleaseMessage/ReleaseList/Release/Keywords",
        "/NewReleaseMessage/ReleaseList/Release/ReleaseId/CatalogNumber",
        "/NewReleaseMessage/ResourceList/SoundRecording/ResourceRightsController",
        "/NewReleaseMessage/PartyList/Party/PartyId/IpiNameNumber",
        "/NewReleaseMessage/ResourceList/Image/TechnicalDetails/ImageCodecType",
    ] {
        assert!(
            im.skipped.iter().any(|s| s == p),
            "{p} not in {:#?}",
            im.skipped
        );
    }
    let mut sorted = im.skipped.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted, im.skipped);
    assert!(!im.skipped.iter().any(|s| s.contains("PriceInformation/")));
}

#[test]
fn update_withdraws_gb() {
    let old = ok(&fixture("album.xml")).message;
    let new = ok(&fixture("album_update.xml")).message;
    assert_eq!(
        old.release.as_ref().unwrap().icpn,
        new.release.as_ref().unwrap().icpn
    );
    let created = |m: &pb::NewReleaseMessage| m.message_header.as_ref().unwrap().message_created_ms;
    assert!(created(&new) > created(&old));
    assert_eq!(deal_terms(&new, 0, 0).excluded_territory_code, ["US", "GB"]);
    assert_eq!(deal_terms(&new, 1, 0).territory_code, ["FR", "DE"]);
}

#[test]
fn single_imports() {
    let m = ok(&fixture("single.xml")).message;
    let r = m.release.as_ref().unwrap();
    assert_eq!(
        (r.release_type.as_str(), r.grid.as_str(), r.icpn.as_str()),
        ("Single", "A12425GABC1234002M", "")
    );
    assert_eq!(m.sound_recording.len(), 1);
    assert_eq!(m.release_deal.len(), 1);
    assert_eq!(m.release_deal[0].deal.len(), 1);
}

#[test]
fn importer_level_bad_fixtures_are_refused_naming_the_problem() {
    for (name, needle) in [
        ("bad_doctype.xml", "DOCTYPE"),
        ("bad_entity.xml", "ENTITY"),
        ("bad_namespace.xml", "http://ddex.net/xml/ern/42"),
        ("bad_profile.xml", "\"Video\""),
        ("bad_variant.xml", "\"Classical\""),
        ("bad_test_message.xml", "TestMessage"),
        ("bad_clip_release.xml", "ClipRelease"),
    ] {
        let e = refused(&fixture(name), &ImportOptions::default());
        assert!(e.contains(needle), "{name}: {e}");
    }
}

#[test]
fn consensus_level_bad_fixtures_import() {
    for name in [
        "bad_dangling_reference.xml",
        "bad_duplicate_isrc.xml",
        "bad_icpn_check_digit.xml",
        "bad_grid_check.xml",
        "bad_unknown_territory.xml",
        "bad_overlapping_deals.xml",
        "bad_far_future.xml",
    ] {
        let m = ok(&fixture(name)).message;
        assert_round_trip(&m);
    }
}

fn template(name: &str, created: &str) -> Vec<u8> {
    let hex = |b: u8| format!("{b:02x}").repeat(32);
    let xml = fixture_str(name)
        .replace("{{ICPN}}", "5060123456783")
        .replace("{{CREATED}}", created)
        .replace("{{ISRC1}}", "GBAYE2500001")
        .replace("{{ISRC2}}", "GBAYE2500002")
        .replace("{{ISRC3}}", "GBAYE2500003")
        .replace("{{CID1}}", &hex(1))
        .replace("{{CID2}}", &hex(2))
        .replace("{{CID3}}", &hex(3))
        .replace("{{COVER}}", &hex(4))
        .replace("{{GB_START}}", "2025-05-01T12:00:00Z");
    assert!(!xml.contains("{{"), "{name}: a placeholder is left");
    xml.into_bytes()
}

#[test]
fn templates_import_after_substitution() {
    let m = ok(&template("album3.xml.tmpl", "2025-05-01T10:00:00Z")).message;
    assert_eq!(m.sound_recording.len(), 3);
    assert_eq!(m.sound_recording[2].cid, vec![3; 32]);
    assert_eq!(m.image[0].cid, vec![4; 32]);
    let deals = &m.release_deal[0].deal;
    assert_eq!(deals.len(), 2);
    let gb = deals[1].deal_terms.as_ref().unwrap();
    assert_eq!(gb.use_type, ["PermanentDownload"]);
    let period = &gb.validity_period[0];
    assert_eq!(period.start_date_time, "2025-05-01T12:00:00Z");
    assert_eq!(
        u128::from(period.start_secs) * 1000,
        u128::from(date_time_ms("2025-05-01T12:00:00Z").unwrap())
    );
    let all_terms = deals.iter().filter_map(|d| d.deal_terms.as_ref());
    assert!(!all_terms
        .into_iter()
        .any(|t| t.territory_code.iter().any(|c| c == "FR")
            && t.use_type.iter().any(|u| u == "PermanentDownload")));
    let up = ok(&template("album3_update.xml.tmpl", "2025-05-02T10:00:00Z")).message;
    assert_eq!(up.release_deal[0].deal.len(), 1);
    assert_eq!(deal_terms(&up, 0, 0).excluded_territory_code, ["GB"]);
    assert_round_trip(&m);
    assert_round_trip(&up);
}

fn assert_round_trip(m: &pb::NewReleaseMessage) {
    let x = export(m);
    let again = import(x.as_bytes(), &ImportOptions::default()).unwrap();
    assert_eq!(&again.message, m);
    assert!(again.skipped.is_empty(), "{:?}", again.skipped);
    assert!(again.dropped.is_empty(), "{:?}", again.dropped);
    assert_eq!(export(&again.message), x);
}

#[test]
fn good_fixtures_round_trip() {
    for name in ["album.xml", "album_update.xml", "single.xml"] {
        assert_round_trip(&ok(&fixture(name)).message);
    }
}

#[test]
fn export_is_plain_ern_43() {
    let x = export(&ok(&fixture("single.xml")).message);
    assert!(x.starts_with(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ern:NewReleaseMessage xmlns:ern=\"http://ddex.net/xml/ern/43\" ReleaseProfileVersionId=\"Audio\" LanguageAndScriptCode=\"en\" AvsVersionId=\"2024\">\n  <MessageHeader>\n    <MessageThreadId>"
    ));
    assert!(x.contains("<ProprietaryId Namespace=\"stave:cid\">"));
    assert!(x.ends_with("</ern:NewReleaseMessage>\n"));
    assert!(!x.contains("<!--"));
}

#[test]
fn oversized_input_is_refused_before_parsing() {
    let opts = ImportOptions::default();
    let mut big = b"<".to_vec();
    big.resize(MAX_BYTES + 1, b'x');
    assert!(refused(&big, &opts).contains("over 16777216 bytes"));
    // An endless reader: only max_bytes + 1 bytes are read.
    let e = import_reader(std::io::repeat(b'x'), &opts).unwrap_err();
    assert!(e.to_string().contains("over 16777216 bytes"), "{e}");
    let small = ImportOptions {
        max_bytes: 100,
        ..ImportOptions::default()
    };
    assert!(refused(&fixture("single.xml"), &small).contains("over 100 bytes"));
    assert!(import_reader(&fixture("single.xml")[..], &opts).is_ok());
}

#[test]
fn depth_and_element_caps() {
    let xml = fixture("album.xml");
    let shallow = ImportOptions {
        max_depth: 5,
        ..ImportOptions::default()
    };
    assert!(refused(&xml, &shallow).contains("deeper than 5"));
    let few = ImportOptions {
        max_elements: 100,
        ..ImportOptions::default()
    };
    assert!(refused(&xml, &few).contains("more than 100 elements"));
    let deep = fixture_str("single.xml").replace(
        "<DealList>",
        &format!("{}<DealList>", "<Deep>".repeat(40) + &"</Deep>".repeat(40)),
    );
    assert!(refused(deep.as_bytes(), &ImportOptions::default()).contains("deeper than 32"));
}

#[test]
fn map_and_cover_override_proprietary_ids() {
    let mut opts = ImportOptions::default();
    opts.cids.insert("GBAYE2400001".into(), vec![7; 32]);
    opts.cover = Some(vec![9; 32]);
    let m = import(&fixture("album.xml"), &opts).unwrap().message;
    assert_eq!(m.sound_recording[0].cid, vec![7; 32]);
    assert_ne!(m.sound_recording[1].cid, vec![7; 32]);
    assert_eq!(m.image[0].cid, vec![9; 32]);
}

#[test]
fn missing_cids_are_refused() {
    let xml = fixture_str("single.xml");
    let no_cid = xml.replacen(
        "<ProprietaryId Namespace=\"stave:cid\">",
        "<ProprietaryId Namespace=\"other\">",
        1,
    );
    let e = refused(no_cid.as_bytes(), &ImportOptions::default());
    assert!(
        e.contains("no cid for ISRC GBAYE2400101 (resource A1): pass --map GBAYE2400101=CID"),
        "{e}"
    );
    let mut opts = ImportOptions::default();
    opts.cids.insert("GBAYE2400101".into(), vec![1; 32]);
    assert!(import(no_cid.as_bytes(), &opts).is_ok());
    let no_cover = xml.replace(
        "<ProprietaryId Namespace=\"stave:cid\">1647",
        "<ProprietaryId Namespace=\"x\">1647",
    );
    assert!(refused(no_cover.as_bytes(), &ImportOptions::default()).contains("pass --cover CID"));
    let bad_hex = xml.replacen(
        "<ProprietaryId Namespace=\"stave:cid\">",
        "<ProprietaryId Namespace=\"stave:cid\">zz",
        1,
    );
    assert!(refused(bad_hex.as_bytes(), &ImportOptions::default()).contains("is not hex"));
}

#[test]
fn missing_required_elements_and_bad_values_are_refused() {
    let xml = fixture_str("single.xml");
    for (from, to, needle) in [
        (
            "<MessageId>NLR-2024-0101-1</MessageId>",
            "",
            "MessageHeader/MessageId",
        ),
        (
            "<MessageCreatedDateTime>2024-03-01T08:00:00Z</MessageCreatedDateTime>",
            "",
            "MessageCreatedDateTime",
        ),
        ("<GRid>A12425GABC1234002M</GRid>", "", "ReleaseId/ICPN or"),
        ("<ISRC>GBAYE2400101</ISRC>", "", "ResourceId/ISRC"),
        (
            "<ResourceReference>A1</ResourceReference>",
            "",
            "SoundRecording/ResourceReference",
        ),
        (
            "<ReleaseReference>R0</ReleaseReference>",
            "",
            "Release/ReleaseReference",
        ),
        (
            "2024-03-01T08:00:00Z",
            "2024-13-01T08:00:00Z",
            "MessageCreatedDateTime",
        ),
        (
            "<Duration>PT3M12S</Duration>",
            "<Duration>P1Y</Duration>",
            "Duration",
        ),
        (
            "<StartDate>2024-03-15</StartDate>",
            "<StartDate>2024-02-30</StartDate>",
            "StartDate",
        ),
        (
            "ReleaseProfileVersionId=\"Audio\" ",
            "",
            "ReleaseProfileVersionId is missing",
        ),
    ] {
        let bad = xml.replace(from, to);
        let e = refused(bad.as_bytes(), &ImportOptions::default());
        assert!(e.contains(needle), "{from} -> {to}: {e}");
    }
    let no_deals = xml.replace("DealList>", "Deals>");
    assert!(refused(no_deals.as_bytes(), &ImportOptions::default())
        .contains("/NewReleaseMessage/DealList"));
    let no_sr = xml
        .replace("<SoundRecording>", "<Video>")
        .replace("</SoundRecording>", "</Video>");
    assert!(refused(no_sr.as_bytes(), &ImportOptions::default())
        .contains("SoundRecording (at least one)"));
}

#[test]
fn utf16_with_bom_and_utf8_bom_import_the_same() {
    let xml = fixture_str("single.xml");
    let want = ok(xml.as_bytes()).message;
    let mut le = vec![0xFF, 0xFE];
    xml.encode_utf16().for_each(|u| le.extend(u.to_le_bytes()));
    assert_eq!(ok(&le).message, want);
    let mut bom = b"\xEF\xBB\xBF".to_vec();
    bom.extend(xml.as_bytes());
    assert_eq!(ok(&bom).message, want);
    let mut latin = xml.into_bytes();
    latin.push(0xE9);
    assert!(refused(&latin, &ImportOptions::default()).contains("not UTF-8"));
}

#[test]
fn damaged_input_never_panics() {
    let xml = fixture("album.xml");
    let opts = ImportOptions::default();
    for len in (0..xml.len()).step_by(97) {
        let _ = import(&xml[..len], &opts);
    }
    for (i, at) in (0..xml.len()).step_by(211).enumerate() {
        let mut bad = xml.clone();
        let with = [b'<', b'>', b'&', b'"', 0xFF, b'/', b'x', 0x00][i % 8];
        if let Some(b) = bad.get_mut(at) {
            *b = with;
        }
        let _ = import(&bad, &opts);
    }
}
