//! The exporter's sections, one function per ERN composite, each writing
//! its children in ERN 4.3 sequence order.

use super::W;
use crate::proto::ddex as pb;

/// The root's children: MessageHeader, PartyList, ResourceList,
/// ReleaseList, DealList.
pub(super) fn message(w: &mut W, m: &pb::NewReleaseMessage) {
    if let Some(h) = &m.message_header {
        header(w, h);
    }
    if !m.party_list.is_empty() {
        w.open("PartyList", &[]);
        m.party_list.iter().for_each(|p| party(w, p));
        w.close("PartyList");
    }
    w.open("ResourceList", &[]);
    m.sound_recording.iter().for_each(|r| sound_recording(w, r));
    m.image.iter().for_each(|i| image(w, i));
    w.close("ResourceList");
    w.open("ReleaseList", &[]);
    if let Some(r) = &m.release {
        release(w, r);
    }
    m.track_release.iter().for_each(|t| track_release(w, t));
    w.close("ReleaseList");
    w.open("DealList", &[]);
    m.release_deal.iter().for_each(|d| release_deal(w, d));
    w.close("DealList");
}

fn variant(v: &Option<pb::Variant>) -> Vec<(&'static str, String)> {
    let Some(v) = v else {
        return Vec::new();
    };
    let mut a = Vec::new();
    if !v.language_and_script_code.is_empty() {
        a.push(("LanguageAndScriptCode", v.language_and_script_code.clone()));
    }
    if !v.applicable_territory_code.is_empty() {
        a.push((
            "ApplicableTerritoryCode",
            v.applicable_territory_code.clone(),
        ));
    }
    match v.is_default {
        1 => a.push(("IsDefault", "true".to_string())),
        2 => a.push(("IsDefault", "false".to_string())),
        _ => {}
    }
    a
}

fn seq(n: u32) -> Vec<(&'static str, String)> {
    if n == 0 {
        Vec::new()
    } else {
        vec![("SequenceNumber", n.to_string())]
    }
}

fn texts(w: &mut W, name: &str, values: &[pb::Text]) {
    for t in values {
        w.leaf(name, &variant(&t.variant), &t.value);
    }
}

fn header(w: &mut W, h: &pb::MessageHeader) {
    w.open("MessageHeader", &[]);
    w.opt("MessageThreadId", &h.message_thread_id);
    w.opt("MessageId", &h.message_id);
    if let Some(s) = &h.message_sender {
        messaging_party(w, "MessageSender", s);
    }
    for r in &h.message_recipient {
        messaging_party(w, "MessageRecipient", r);
    }
    w.opt("MessageCreatedDateTime", &h.message_created_date_time);
    w.opt("MessageControlType", &h.message_control_type);
    w.close("MessageHeader");
}

fn messaging_party(w: &mut W, name: &str, p: &pb::MessageParty) {
    w.open(name, &[]);
    w.opt("PartyId", &p.party_id);
    if !p.full_name.is_empty() {
        w.open("PartyName", &[]);
        w.leaf("FullName", &[], &p.full_name);
        w.close("PartyName");
    }
    w.close(name);
}

fn party(w: &mut W, p: &pb::Party) {
    w.open("Party", &[]);
    w.opt("PartyReference", &p.party_reference);
    for n in &p.full_name {
        w.open("PartyName", &variant(&n.variant));
        w.leaf("FullName", &[], &n.value);
        w.close("PartyName");
    }
    for id in &p.party_id {
        w.open("PartyId", &[]);
        w.opt("ISNI", &id.isni);
        w.opt("DPID", &id.dpid);
        w.close("PartyId");
    }
    w.close("Party");
}

fn sound_recording(w: &mut W, r: &pb::SoundRecording) {
    w.open("SoundRecording", &[]);
    w.opt("ResourceReference", &r.resource_reference);
    w.opt("Type", &r.r#type);
    if let Some(ed) = &r.sound_recording_edition {
        w.open("SoundRecordingEdition", &[]);
        w.open("ResourceId", &[]);
        w.opt("ISRC", &ed.isrc);
        if !r.cid.is_empty() {
            w.cid(&r.cid);
        }
        w.close("ResourceId");
        ed.p_line.iter().for_each(|l| line(w, "PLine", l));
        for td in &ed.technical_details {
            technical(w, td, false);
        }
        w.close("SoundRecordingEdition");
    }
    texts(w, "DisplayTitleText", &r.display_title_text);
    r.display_title.iter().for_each(|t| display_title(w, t));
    texts(w, "DisplayArtistName", &r.display_artist_name);
    r.display_artist.iter().for_each(|a| display_artist(w, a));
    for c in &r.contributor {
        w.open("Contributor", &seq(c.sequence_number));
        w.opt("ContributorPartyReference", &c.contributor_party_reference);
        w.each("Role", &c.role);
        w.close("Contributor");
    }
    w.opt("Duration", &r.duration);
    texts(w, "ParentalWarningType", &r.parental_warning_type);
    w.close("SoundRecording");
}

fn image(w: &mut W, i: &pb::Image) {
    w.open("Image", &[]);
    w.opt("ResourceReference", &i.resource_reference);
    w.opt("Type", &i.r#type);
    if !i.cid.is_empty() {
        w.open("ResourceId", &[]);
        w.cid(&i.cid);
        w.close("ResourceId");
    }
    texts(w, "ParentalWarningType", &i.parental_warning_type);
    for td in &i.technical_details {
        technical(w, td, true);
    }
    w.close("Image");
}

/// TechnicalDetails: a recording's File sits in a DeliveryFile, an
/// image's directly under TechnicalDetails (unless it carries delivery
/// file fields).
fn technical(w: &mut W, td: &pb::TechnicalDetails, image: bool) {
    w.open("TechnicalDetails", &[]);
    w.opt(
        "TechnicalResourceDetailsReference",
        &td.technical_resource_details_reference,
    );
    let has_file =
        !(td.uri.is_empty() && td.hash_algorithm.is_empty() && td.hash_sum_value.is_empty());
    let delivery = !(td.delivery_file_type.is_empty()
        && td.audio_codec_type.is_empty()
        && td.number_of_channels == 0
        && td.sampling_rate.is_empty()
        && td.bits_per_sample == 0);
    if delivery || (has_file && !image) {
        w.open("DeliveryFile", &[]);
        w.opt("Type", &td.delivery_file_type);
        w.opt("AudioCodecType", &td.audio_codec_type);
        w.num("NumberOfChannels", td.number_of_channels);
        w.opt("SamplingRate", &td.sampling_rate);
        w.num("BitsPerSample", td.bits_per_sample);
        file(w, td, has_file);
        w.close("DeliveryFile");
    } else {
        file(w, td, has_file);
    }
    w.close("TechnicalDetails");
}

fn file(w: &mut W, td: &pb::TechnicalDetails, has_file: bool) {
    if !has_file {
        return;
    }
    w.open("File", &[]);
    w.opt("URI", &td.uri);
    if !(td.hash_algorithm.is_empty() && td.hash_sum_value.is_empty()) {
        w.open("HashSum", &[]);
        w.opt("Algorithm", &td.hash_algorithm);
        w.opt("HashSumValue", &td.hash_sum_value);
        w.close("HashSum");
    }
    w.close("File");
}

fn display_title(w: &mut W, t: &pb::DisplayTitle) {
    w.open("DisplayTitle", &variant(&t.variant));
    w.opt("TitleText", &t.title_text);
    w.each("SubTitle", &t.sub_title);
    w.close("DisplayTitle");
}

fn display_artist(w: &mut W, a: &pb::DisplayArtist) {
    w.open("DisplayArtist", &seq(a.sequence_number));
    w.opt("ArtistPartyReference", &a.artist_party_reference);
    w.opt("DisplayArtistRole", &a.display_artist_role);
    w.close("DisplayArtist");
}

fn line(w: &mut W, name: &str, l: &pb::Line) {
    w.open(name, &variant(&l.variant));
    w.num("Year", l.year);
    w.opt(&format!("{name}Text"), &l.text);
    w.close(name);
}

fn genre(w: &mut W, g: &pb::Genre) {
    w.open("Genre", &variant(&g.variant));
    w.opt("GenreText", &g.genre_text);
    w.opt("SubGenre", &g.sub_genre);
    w.close("Genre");
}

fn release(w: &mut W, r: &pb::Release) {
    w.open("Release", &[]);
    w.opt("ReleaseReference", &r.release_reference);
    w.opt("ReleaseType", &r.release_type);
    w.open("ReleaseId", &[]);
    w.opt("GRid", &r.grid);
    w.opt("ICPN", &r.icpn);
    w.close("ReleaseId");
    texts(w, "DisplayTitleText", &r.display_title_text);
    r.display_title.iter().for_each(|t| display_title(w, t));
    texts(w, "DisplayArtistName", &r.display_artist_name);
    r.display_artist.iter().for_each(|a| display_artist(w, a));
    texts(w, "ReleaseLabelReference", &r.release_label_reference);
    r.p_line.iter().for_each(|l| line(w, "PLine", l));
    r.c_line.iter().for_each(|l| line(w, "CLine", l));
    w.opt("Duration", &r.duration);
    r.genre.iter().for_each(|g| genre(w, g));
    w.opt("ReleaseDate", &r.release_date);
    w.opt("OriginalReleaseDate", &r.original_release_date);
    texts(w, "ParentalWarningType", &r.parental_warning_type);
    if let Some(g) = &r.resource_group {
        resource_group(w, g);
    }
    w.close("Release");
}

fn resource_group(w: &mut W, g: &pb::ResourceGroup) {
    w.open("ResourceGroup", &[]);
    texts(w, "DisplayTitleText", &g.display_title_text);
    w.num("SequenceNumber", g.sequence_number);
    g.resource_group.iter().for_each(|s| resource_group(w, s));
    for it in &g.resource_group_content_item {
        w.open("ResourceGroupContentItem", &[]);
        w.num("SequenceNumber", it.sequence_number);
        w.opt("ReleaseResourceReference", &it.release_resource_reference);
        w.close("ResourceGroupContentItem");
    }
    w.each(
        "LinkedReleaseResourceReference",
        &g.linked_release_resource_reference,
    );
    w.close("ResourceGroup");
}

fn track_release(w: &mut W, t: &pb::TrackRelease) {
    w.open("TrackRelease", &[]);
    w.opt("ReleaseReference", &t.release_reference);
    w.open("ReleaseId", &[]);
    w.opt("ISRC", &t.isrc);
    w.close("ReleaseId");
    w.opt("ReleaseResourceReference", &t.release_resource_reference);
    texts(w, "ReleaseLabelReference", &t.release_label_reference);
    t.genre.iter().for_each(|g| genre(w, g));
    w.close("TrackRelease");
}

fn release_deal(w: &mut W, d: &pb::ReleaseDeal) {
    w.open("ReleaseDeal", &[]);
    w.each("DealReleaseReference", &d.deal_release_reference);
    for deal in &d.deal {
        w.open("Deal", &[]);
        if let Some(t) = &deal.deal_terms {
            terms(w, t);
        }
        w.close("Deal");
    }
    w.close("ReleaseDeal");
}

fn terms(w: &mut W, t: &pb::DealTerms) {
    w.open("DealTerms", &[]);
    w.each("TerritoryCode", &t.territory_code);
    w.each("ExcludedTerritoryCode", &t.excluded_territory_code);
    for v in &t.validity_period {
        w.open("ValidityPeriod", &[]);
        w.opt("StartDate", &v.start_date);
        w.opt("EndDate", &v.end_date);
        w.opt("StartDateTime", &v.start_date_time);
        w.opt("EndDateTime", &v.end_date_time);
        w.close("ValidityPeriod");
    }
    w.each("CommercialModelType", &t.commercial_model_type);
    w.each("UseType", &t.use_type);
    w.close("DealTerms");
}
