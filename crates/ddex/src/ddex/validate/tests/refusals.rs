//! Every refusal of steps 1 to 7, one at a time on the valid album.

use super::*;

#[test]
fn profile() {
    let mut m = album();
    m.ern_version = "42".to_string();
    invalid_with(&m, &["ern_version", "42"]);
    let mut m = album();
    m.release_profile_version_id = "Video".to_string();
    invalid_with(&m, &["Video"]);
    let mut m = album();
    m.message_header = None;
    invalid_with(&m, &["MessageHeader"]);
    let mut m = album();
    m.release = None;
    invalid_with(&m, &["no Release"]);
}

#[test]
fn test_message() {
    let mut m = album();
    m.message_header.as_mut().unwrap().message_control_type = "TestMessage".to_string();
    invalid_with(&m, &["TestMessage"]);
    m.message_header
        .as_mut()
        .unwrap()
        .message_control_type
        .clear();
    ok(&m);
}

#[test]
fn derived_integers_must_match() {
    let mut m = album();
    m.message_header.as_mut().unwrap().message_created_ms += 1;
    invalid_with(
        &m,
        &["message_created_ms", "1709251200001", "1709251200000"],
    );
    let mut m = album();
    m.sound_recording[1].duration_ms = 1;
    invalid_with(&m, &["A2", "duration_ms 1"]);
    let mut m = album();
    m.sound_recording[1].duration.clear();
    invalid_with(&m, &["A2", "duration_ms 210000 is not 0"]);
    let mut m = album();
    terms(&mut m, 0, 1).validity_period[0].start_secs += 1;
    invalid_with(&m, &["ReleaseDeal 0 Deal 1", "ValidityPeriod"]);
    let mut m = album();
    let p = &mut terms(&mut m, 0, 1).validity_period[0];
    p.start_date_time = "2024-03-01T00:00:00".to_string();
    invalid_with(&m, &["both StartDate"]);
}

#[test]
fn start_must_precede_end() {
    let mut m = album();
    terms(&mut m, 0, 1).validity_period = vec![period("2024-03-02", "2024-03-01")];
    invalid_with(&m, &["not before its end"]);
    // A one-day period is fine.
    terms(&mut m, 0, 1).validity_period = vec![period("2024-03-02", "2024-03-02")];
    ok(&m);
}

#[test]
fn release_ids() {
    let mut m = album();
    release(&mut m).icpn = "4006381333932".to_string();
    invalid_with(&m, &["ICPN", "4006381333932", "check digit"]);
    let mut m = single();
    release(&mut m).grid = "A12425GABC1234002N".to_string();
    invalid_with(&m, &["GRid", "A12425GABC1234002N"]);
    let mut m = album();
    release(&mut m).grid = GRID.to_string();
    invalid_with(&m, &["both ICPN"]);
    let mut m = album();
    release(&mut m).icpn.clear();
    invalid_with(&m, &["neither ICPN"]);
}

#[test]
fn isrcs() {
    let mut m = album();
    m.sound_recording[2]
        .sound_recording_edition
        .as_mut()
        .unwrap()
        .isrc = "USRC17607839".to_string();
    assert_eq!(
        err(&m),
        DdexError::Isrc {
            isrc: "USRC17607839".to_string(),
            reason: "repeated".to_string()
        }
    );
    let mut m = album();
    m.sound_recording[0]
        .sound_recording_edition
        .as_mut()
        .unwrap()
        .isrc = "US-RC1-76-07839".to_string();
    assert!(matches!(err(&m), DdexError::Isrc { .. }));
    let mut m = album();
    m.track_release[0].isrc = "bad".to_string();
    assert!(matches!(err(&m), DdexError::Isrc { .. }));
    let mut m = album();
    m.sound_recording[0].sound_recording_edition = None;
    invalid_with(&m, &["A1", "SoundRecordingEdition"]);
}

#[test]
fn party_ids_dates_and_cids() {
    let mut m = album();
    m.party_list[0].party_id[0].dpid = "PADPIDA2014120301U".to_string();
    invalid_with(&m, &["exactly one of DPID"]);
    let mut m = album();
    m.party_list[0].party_id[0].isni = "0000000121032684".to_string();
    invalid_with(&m, &["ISNI"]);
    let mut m = album();
    m.party_list[2].full_name.clear();
    invalid_with(&m, &["P3", "neither a PartyId nor a FullName"]);
    let mut m = album();
    release(&mut m).original_release_date = "2023-02-29".to_string();
    invalid_with(&m, &["OriginalReleaseDate", "2023-02-29"]);
    let mut m = album();
    m.sound_recording[1].cid = vec![1; 32];
    invalid_with(&m, &["A2", "another recording"]);
    let mut m = album();
    m.image[0].cid.clear();
    invalid_with(&m, &["A4", "cid of 0 bytes"]);
}

#[test]
fn dangling_references() {
    let mut m = album();
    release(&mut m).display_artist[0].artist_party_reference = "P9".to_string();
    invalid_with(&m, &["dangling", "ArtistPartyReference", "P9", "Party"]);
    let mut m = album();
    release(&mut m).release_label_reference[0].value = "P8".to_string();
    invalid_with(&m, &["dangling", "ReleaseLabelReference", "P8"]);
    let mut m = album();
    m.track_release[0].release_label_reference[0].value = "P7".to_string();
    invalid_with(&m, &["dangling", "TrackRelease \"R1\"", "P7"]);
    let mut m = album();
    m.sound_recording[0].contributor[0].contributor_party_reference = "P6".to_string();
    invalid_with(&m, &["dangling", "A1", "ContributorPartyReference", "P6"]);
    let mut m = album();
    let top = release(&mut m).resource_group.as_mut().unwrap();
    top.resource_group[1].resource_group_content_item[0].release_resource_reference =
        "A9".to_string();
    invalid_with(&m, &["dangling", "A9", "SoundRecording"]);
    let mut m = album();
    let top = release(&mut m).resource_group.as_mut().unwrap();
    top.resource_group[1].resource_group_content_item[0].release_resource_reference =
        "A4".to_string();
    invalid_with(&m, &["dangling", "A4", "SoundRecording"]);
    let mut m = album();
    release(&mut m)
        .resource_group
        .as_mut()
        .unwrap()
        .linked_release_resource_reference[0] = "A5".to_string();
    invalid_with(
        &m,
        &["dangling", "LinkedReleaseResourceReference", "A5", "Image"],
    );
    let mut m = album();
    m.track_release[0].release_resource_reference = "A4".to_string();
    invalid_with(&m, &["dangling", "R1", "A4", "SoundRecording"]);
    let mut m = album();
    m.release_deal[1].deal_release_reference[0] = "R9".to_string();
    invalid_with(
        &m,
        &["dangling", "ReleaseDeal 1 DealReleaseReference", "R9"],
    );
}

#[test]
fn references_are_unique_and_complete() {
    let mut m = album();
    m.party_list[3].party_reference = "P1".to_string();
    invalid_with(&m, &["PartyReference \"P1\" is repeated"]);
    let mut m = album();
    m.image[0].resource_reference = "A1".to_string();
    invalid_with(&m, &["ResourceReference \"A1\" is repeated"]);
    let mut m = album();
    m.track_release[0].release_reference = "R0".to_string();
    invalid_with(&m, &["ReleaseReference \"R0\" is repeated"]);
    let mut m = album();
    let top = release(&mut m).resource_group.as_mut().unwrap();
    top.resource_group[1].resource_group_content_item[0].release_resource_reference =
        "A1".to_string();
    invalid_with(&m, &["\"A1\" is in the ResourceGroup tree 2 times"]);
    let mut m = album();
    release(&mut m).resource_group = None;
    invalid_with(&m, &["no ResourceGroup"]);
    let mut m = album();
    m.release_deal[0]
        .deal_release_reference
        .push("R0".to_string());
    invalid_with(&m, &["\"R0\" is repeated"]);
}

#[test]
fn duplicate_tracks() {
    let mut m = album();
    let top = release(&mut m).resource_group.as_mut().unwrap();
    top.resource_group[1].sequence_number = 1;
    top.resource_group[1].resource_group_content_item[0].sequence_number = 2;
    invalid_with(&m, &["disc 1 track 2", "A2", "A3"]);
    let mut m = album();
    let top = release(&mut m).resource_group.as_mut().unwrap();
    top.resource_group_content_item.push(item(1, "A9"));
    // The dangling reference is found first (step 4).
    invalid_with(&m, &["dangling", "A9"]);
}

#[test]
fn territories() {
    for (code, bad) in [
        ("XX", "XX"),
        ("GB-ENG", "GB-ENG"),
        ("2136", "2136"),
        ("gb", "gb"),
    ] {
        let mut m = album();
        terms(&mut m, 0, 1).territory_code = strings(&[code]);
        assert_eq!(err(&m), DdexError::Territory(bad.to_string()), "{code}");
    }
    let mut m = album();
    terms(&mut m, 0, 0).excluded_territory_code = strings(&["2136"]);
    assert_eq!(err(&m), DdexError::Territory("2136".to_string()));
    let mut m = album();
    terms(&mut m, 0, 1).territory_code.clear();
    invalid_with(&m, &["ReleaseDeal 0 Deal 1", "no TerritoryCode"]);
    let mut m = album();
    terms(&mut m, 0, 1).territory_code = strings(&["GB", "FR", "GB"]);
    invalid_with(&m, &["\"GB\" is listed twice"]);
    let mut m = album();
    terms(&mut m, 0, 0).territory_code = strings(&["GB", "Worldwide"]);
    invalid_with(&m, &["Worldwide"]);
    let mut m = album();
    terms(&mut m, 0, 1).excluded_territory_code = strings(&["FR"]);
    invalid_with(&m, &["ExcludedTerritoryCode \"FR\""]);
}

#[test]
fn worldwide_minus_excluded() {
    let mut m = album();
    let t = terms(&mut m, 0, 0);
    t.territory_code.clear();
    t.excluded_territory_code = strings(&["GB", "US"]);
    let v = ok(&m);
    let stream = &v.covering[1].1.deals[0];
    let now = 1_800_000_000;
    assert!(!crate::ddex::validate::covering_deal(
        &v.covering[1].1,
        "US",
        1,
        now
    ));
    assert!(crate::ddex::validate::covering_deal(
        &v.covering[1].1,
        "FR",
        1,
        now
    ));
    assert_eq!(stream.territories.len(), 32);
    let mut m = album();
    let t = terms(&mut m, 0, 0);
    t.territory_code.clear();
    t.excluded_territory_code = crate::ddex::territory::CODES
        .iter()
        .map(|c| c.to_string())
        .collect();
    invalid_with(&m, &["every territory is excluded"]);
}

#[test]
fn use_types() {
    let mut m = album();
    terms(&mut m, 0, 0).use_type = strings(&["Stream", "OnDemandStream"]);
    invalid_with(&m, &["\"OnDemandStream\" overlaps \"Stream\""]);
    let mut m = album();
    terms(&mut m, 0, 0).use_type = strings(&["PermanentDownload", "Download"]);
    invalid_with(&m, &["\"Download\" overlaps \"PermanentDownload\""]);
    let mut m = album();
    terms(&mut m, 0, 0).use_type = strings(&["Webcast", "Webcast"]);
    invalid_with(&m, &["\"Webcast\" overlaps \"Webcast\""]);
    let mut m = album();
    terms(&mut m, 0, 0).use_type = strings(&["UserDefined"]);
    invalid_with(&m, &["unknown UseType \"UserDefined\""]);
    let mut m = album();
    terms(&mut m, 0, 0).use_type.clear();
    invalid_with(&m, &["no UseType"]);
    let mut m = album();
    terms(&mut m, 0, 0).commercial_model_type.clear();
    invalid_with(&m, &["no CommercialModelType"]);
    let mut m = album();
    terms(&mut m, 0, 0)
        .commercial_model_type
        .push(String::new());
    invalid_with(&m, &["empty CommercialModelType"]);
}

#[test]
fn caps() {
    let caps = Caps {
        max_tracks: 2,
        ..Caps::default()
    };
    assert!(matches!(
        err_with(&album(), &caps),
        DdexError::Cap { got: 3, max: 2, .. }
    ));
    let mut m = album();
    m.sound_recording[0].display_title_text[0].value = "x".repeat(2000);
    match err(&m) {
        DdexError::Cap { what, got, max } => {
            assert_eq!((what.as_str(), got, max), ("DisplayTitleText", 2000, 1024))
        }
        e => panic!("{e:?}"),
    }
    let mut m = album();
    release(&mut m).genre = vec![pb::Genre::default(); 17];
    assert!(matches!(
        err(&m),
        DdexError::Cap {
            got: 17,
            max: 16,
            ..
        }
    ));
    let mut m = album();
    for _ in 0..63 {
        let d = m.release_deal[1].deal[0].clone();
        m.release_deal[1].deal.push(d);
    }
    assert!(matches!(
        err(&m),
        DdexError::Cap {
            got: 66,
            max: 64,
            ..
        }
    ));
}

#[test]
fn deep_nesting_is_refused_before_descending() {
    let mut g = disc(1, vec![item(1, "A1"), item(2, "A2"), item(3, "A3")]);
    for _ in 0..49 {
        g = pb::ResourceGroup {
            resource_group: vec![g],
            ..Default::default()
        };
    }
    let mut m = album();
    release(&mut m).resource_group = Some(g);
    let started = std::time::Instant::now();
    match err(&m) {
        DdexError::Cap { what, got, max } => {
            assert_eq!((what.as_str(), got, max), ("ResourceGroup nesting", 4, 3))
        }
        e => panic!("{e:?}"),
    }
    assert!(started.elapsed() < std::time::Duration::from_secs(1));
    // Three levels are fine (items below a disc group keep its disc).
    let mut m = album();
    let top = release(&mut m).resource_group.as_mut().unwrap();
    let inner = std::mem::take(&mut top.resource_group[1].resource_group_content_item);
    top.resource_group[1].resource_group = vec![disc(1, inner)];
    let v = ok(&m);
    assert_eq!((v.tracks[2].disc, v.tracks[2].track), (2, 1));
}

#[test]
fn mixed_top_group() {
    let mut m = album();
    let top = release(&mut m).resource_group.as_mut().unwrap();
    let moved = top.resource_group[1].resource_group_content_item.remove(0);
    top.resource_group.pop();
    top.resource_group_content_item.push(moved);
    invalid_with(&m, &["both disc groups and content items"]);
}

fn title(m: &mut pb::NewReleaseMessage) -> &mut pb::Text {
    &mut m.release.as_mut().unwrap().display_title_text[0]
}

#[test]
fn the_importers_canonical_form() {
    for (bad, needle) in [
        (" Album", "whitespace"),
        ("Album\n", "whitespace"),
        ("Al\u{1}bum", "U+0001"),
        ("Al\u{FFFE}bum", "U+FFFE"),
    ] {
        let mut m = album();
        title(&mut m).value = bad.to_string();
        invalid_with(&m, &[needle]);
    }
    let mut m = album();
    title(&mut m).value = "Tab\tinside and\nnewline are fine".to_string();
    assert!(validate(&m, &Caps::default()).is_ok());
    for (variant, needle) in [
        (pb::Variant::default(), "empty variant"),
        (
            pb::Variant {
                is_default: 3,
                ..Default::default()
            },
            "IsDefault 3",
        ),
    ] {
        let mut m = album();
        title(&mut m).variant = Some(variant);
        invalid_with(&m, &[needle]);
    }
    let mut m = album();
    m.message_header.as_mut().unwrap().message_id.clear();
    invalid_with(&m, &["MessageId"]);
}
