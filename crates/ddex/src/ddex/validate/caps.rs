//! Step 2: every collection and every string of the message against the
//! genesis [`Caps`]. Which cap bounds which list:
//!
//! - `max_tracks`: SoundRecordings, and content items over the whole tree;
//!   `max_tracks + 1`: `ResourceGroup`s over the whole tree;
//! - `max_parties`: parties; display artists and contributors of one
//!   element;
//! - `max_images`: images; `max_tracks + max_images`: linked resource
//!   references of one group;
//! - `max_track_releases`: TrackReleases; `max_track_releases + 1`:
//!   DealReleaseReferences of one ReleaseDeal;
//! - `max_deals`: ReleaseDeals, and Deals summed over them;
//! - `max_territories_per_deal`, `max_periods_per_deal`,
//!   `max_use_types_per_deal` (also CommercialModelTypes): per DealTerms;
//! - `max_variants`: any other repeated field;
//! - `max_string_bytes`: every string and the cids;
//! - `max_group_depth`: `ResourceGroup` levels, checked before descending.

use super::Caps;
use crate::ddex::{cap, invalid, DdexError};
use crate::proto::ddex as pb;

type R = Result<(), DdexError>;

/// Checks step 2.
pub(super) fn check(msg: &pb::NewReleaseMessage, caps: &Caps) -> R {
    let w = Walker { caps };
    w.message(msg)?;
    if let Some(h) = &msg.message_header {
        w.header(h)?;
    }
    w.list("Party", &msg.party_list, caps.max_parties, |p| w.party(p))?;
    w.list(
        "SoundRecording",
        &msg.sound_recording,
        caps.max_tracks,
        |s| w.recording(s),
    )?;
    w.list("Image", &msg.image, caps.max_images, |i| w.image(i))?;
    if let Some(r) = &msg.release {
        w.release(r)?;
    }
    w.list(
        "TrackRelease",
        &msg.track_release,
        caps.max_track_releases,
        |t| w.track_release(t),
    )?;
    w.deals(&msg.release_deal)
}

struct Walker<'a> {
    caps: &'a Caps,
}

/// Running totals over the group tree.
#[derive(Default)]
struct TreeCount {
    groups: usize,
    items: usize,
}

impl Walker<'_> {
    /// The length cap, and the importer's canonical form, so every stored
    /// release exports to XML that imports to the same message: no
    /// leading or trailing XML whitespace, no character XML 1.0 forbids.
    fn s(&self, what: &str, s: &str) -> R {
        cap(what, s.len(), self.caps.max_string_bytes)?;
        let xml_space = |c: char| matches!(c, ' ' | '\t' | '\n' | '\r');
        if s.starts_with(xml_space) || s.ends_with(xml_space) {
            return Err(invalid(format!(
                "{what} {:?} has leading or trailing whitespace",
                super::shown(s)
            )));
        }
        let forbidden =
            |c: char| (c < ' ' && !xml_space(c)) || matches!(c, '\u{FFFE}' | '\u{FFFF}');
        if let Some(c) = s.chars().find(|c| forbidden(*c)) {
            return Err(invalid(format!(
                "{what} holds U+{:04X}, which XML 1.0 cannot carry",
                u32::from(c)
            )));
        }
        Ok(())
    }

    fn strs(&self, what: &str, v: &[String], max: u32) -> R {
        cap(what, v.len(), max)?;
        v.iter().try_for_each(|s| self.s(what, s))
    }

    fn list<T>(&self, what: &str, v: &[T], max: u32, f: impl Fn(&T) -> R) -> R {
        cap(what, v.len(), max)?;
        v.iter().try_for_each(f)
    }

    fn variants<T>(&self, what: &str, v: &[T], f: impl Fn(&T) -> R) -> R {
        self.list(what, v, self.caps.max_variants, f)
    }

    fn message(&self, m: &pb::NewReleaseMessage) -> R {
        self.s("ern_version", &m.ern_version)?;
        self.s("ReleaseProfileVersionId", &m.release_profile_version_id)?;
        self.s("LanguageAndScriptCode", &m.language_and_script_code)?;
        self.s("AvsVersionId", &m.avs_version_id)
    }

    fn variant(&self, v: &Option<pb::Variant>) -> R {
        let Some(v) = v else { return Ok(()) };
        if *v == pb::Variant::default() {
            return Err(invalid(
                "an empty variant (no language, territory or IsDefault): leave it out",
            ));
        }
        if v.is_default > 2 {
            return Err(invalid(format!(
                "IsDefault {} is not 0 (absent), 1 (true) or 2 (false)",
                v.is_default
            )));
        }
        self.s("LanguageAndScriptCode", &v.language_and_script_code)?;
        self.s("ApplicableTerritoryCode", &v.applicable_territory_code)
    }

    fn texts(&self, what: &str, v: &[pb::Text]) -> R {
        self.variants(what, v, |t| {
            self.s(what, &t.value)?;
            self.variant(&t.variant)
        })
    }

    fn lines(&self, what: &str, v: &[pb::Line]) -> R {
        self.variants(what, v, |l| {
            self.s(what, &l.text)?;
            self.variant(&l.variant)
        })
    }

    fn genres(&self, v: &[pb::Genre]) -> R {
        self.variants("Genre", v, |g| {
            self.s("GenreText", &g.genre_text)?;
            self.s("SubGenre", &g.sub_genre)?;
            self.variant(&g.variant)
        })
    }

    fn titles(&self, v: &[pb::DisplayTitle]) -> R {
        self.variants("DisplayTitle", v, |t| {
            self.s("TitleText", &t.title_text)?;
            self.strs("SubTitle", &t.sub_title, self.caps.max_variants)?;
            self.variant(&t.variant)
        })
    }

    fn message_party(&self, p: &pb::MessageParty) -> R {
        self.s("MessageParty PartyId", &p.party_id)?;
        self.s("MessageParty FullName", &p.full_name)
    }

    fn header(&self, h: &pb::MessageHeader) -> R {
        self.s("MessageThreadId", &h.message_thread_id)?;
        self.s("MessageId", &h.message_id)?;
        if let Some(p) = &h.message_sender {
            self.message_party(p)?;
        }
        self.variants("MessageRecipient", &h.message_recipient, |p| {
            self.message_party(p)
        })?;
        self.s("MessageCreatedDateTime", &h.message_created_date_time)?;
        self.s("MessageControlType", &h.message_control_type)
    }

    fn party(&self, p: &pb::Party) -> R {
        self.s("PartyReference", &p.party_reference)?;
        self.texts("FullName", &p.full_name)?;
        self.variants("PartyId", &p.party_id, |i| {
            self.s("DPID", &i.dpid)?;
            self.s("ISNI", &i.isni)
        })
    }

    fn artists(&self, v: &[pb::DisplayArtist]) -> R {
        self.list("DisplayArtist", v, self.caps.max_parties, |a| {
            self.s("ArtistPartyReference", &a.artist_party_reference)?;
            self.s("DisplayArtistRole", &a.display_artist_role)
        })
    }

    fn contributors(&self, v: &[pb::Contributor]) -> R {
        self.list("Contributor", v, self.caps.max_parties, |c| {
            self.s("ContributorPartyReference", &c.contributor_party_reference)?;
            self.strs("Role", &c.role, self.caps.max_variants)
        })
    }

    fn technical(&self, v: &[pb::TechnicalDetails]) -> R {
        self.variants("TechnicalDetails", v, |t| {
            for s in [
                &t.technical_resource_details_reference,
                &t.delivery_file_type,
                &t.audio_codec_type,
                &t.sampling_rate,
                &t.uri,
                &t.hash_algorithm,
                &t.hash_sum_value,
            ] {
                self.s("TechnicalDetails field", s)?;
            }
            Ok(())
        })
    }

    fn cid(&self, c: &[u8]) -> R {
        cap("cid bytes", c.len(), self.caps.max_string_bytes)
    }

    fn recording(&self, s: &pb::SoundRecording) -> R {
        self.s("ResourceReference", &s.resource_reference)?;
        self.s("SoundRecording Type", &s.r#type)?;
        if let Some(e) = &s.sound_recording_edition {
            self.s("ISRC", &e.isrc)?;
            self.lines("PLine", &e.p_line)?;
            self.technical(&e.technical_details)?;
        }
        self.texts("DisplayTitleText", &s.display_title_text)?;
        self.titles(&s.display_title)?;
        self.texts("DisplayArtistName", &s.display_artist_name)?;
        self.artists(&s.display_artist)?;
        self.contributors(&s.contributor)?;
        self.s("Duration", &s.duration)?;
        self.texts("ParentalWarningType", &s.parental_warning_type)?;
        self.cid(&s.cid)
    }

    fn image(&self, i: &pb::Image) -> R {
        self.s("ResourceReference", &i.resource_reference)?;
        self.s("Image Type", &i.r#type)?;
        self.texts("ParentalWarningType", &i.parental_warning_type)?;
        self.technical(&i.technical_details)?;
        self.cid(&i.cid)
    }

    fn release(&self, r: &pb::Release) -> R {
        for (what, s) in [
            ("ReleaseReference", &r.release_reference),
            ("ReleaseType", &r.release_type),
            ("ICPN", &r.icpn),
            ("GRid", &r.grid),
            ("ReleaseDate", &r.release_date),
            ("OriginalReleaseDate", &r.original_release_date),
            ("Duration", &r.duration),
        ] {
            self.s(what, s)?;
        }
        self.texts("DisplayTitleText", &r.display_title_text)?;
        self.titles(&r.display_title)?;
        self.texts("DisplayArtistName", &r.display_artist_name)?;
        self.artists(&r.display_artist)?;
        self.texts("ReleaseLabelReference", &r.release_label_reference)?;
        self.lines("PLine", &r.p_line)?;
        self.lines("CLine", &r.c_line)?;
        self.genres(&r.genre)?;
        self.texts("ParentalWarningType", &r.parental_warning_type)?;
        match &r.resource_group {
            Some(g) => {
                cap("ResourceGroup nesting", 1, self.caps.max_group_depth)?;
                self.group(g, 1, &mut TreeCount::default())
            }
            None => Ok(()),
        }
    }

    /// One group at nesting `level` (the top group is 1). A child's level
    /// is checked here, before descending into it.
    fn group(&self, g: &pb::ResourceGroup, level: u32, n: &mut TreeCount) -> R {
        let c = self.caps;
        n.groups = n.groups.saturating_add(1);
        let groups_max = c.max_tracks.saturating_add(1);
        cap("ResourceGroups in the tree", n.groups, groups_max)?;
        n.items = n.items.saturating_add(g.resource_group_content_item.len());
        cap(
            "ResourceGroupContentItems in the tree",
            n.items,
            c.max_tracks,
        )?;
        self.texts("ResourceGroup DisplayTitleText", &g.display_title_text)?;
        let linked_max = c.max_tracks.saturating_add(c.max_images);
        let linked = &g.linked_release_resource_reference;
        self.strs("LinkedReleaseResourceReference", linked, linked_max)?;
        for i in &g.resource_group_content_item {
            self.s("ReleaseResourceReference", &i.release_resource_reference)?;
        }
        if g.resource_group.is_empty() {
            return Ok(());
        }
        let next = level.saturating_add(1);
        cap("ResourceGroup nesting", next as usize, c.max_group_depth)?;
        g.resource_group
            .iter()
            .try_for_each(|child| self.group(child, next, n))
    }

    fn track_release(&self, t: &pb::TrackRelease) -> R {
        self.s("ReleaseReference", &t.release_reference)?;
        self.s("ISRC", &t.isrc)?;
        self.s("ReleaseResourceReference", &t.release_resource_reference)?;
        self.texts("ReleaseLabelReference", &t.release_label_reference)?;
        self.genres(&t.genre)
    }

    fn deals(&self, v: &[pb::ReleaseDeal]) -> R {
        let c = self.caps;
        cap("ReleaseDeals", v.len(), c.max_deals)?;
        let total = v
            .iter()
            .fold(0usize, |n, rd| n.saturating_add(rd.deal.len()));
        cap("Deals", total, c.max_deals)?;
        let refs_max = c.max_track_releases.saturating_add(1);
        for rd in v {
            self.strs("DealReleaseReference", &rd.deal_release_reference, refs_max)?;
            for d in &rd.deal {
                if let Some(t) = &d.deal_terms {
                    self.terms(t)?;
                }
            }
        }
        Ok(())
    }

    fn terms(&self, t: &pb::DealTerms) -> R {
        let c = self.caps;
        let tmax = c.max_territories_per_deal;
        self.strs("TerritoryCode", &t.territory_code, tmax)?;
        self.strs("ExcludedTerritoryCode", &t.excluded_territory_code, tmax)?;
        self.list(
            "ValidityPeriod",
            &t.validity_period,
            c.max_periods_per_deal,
            |p| {
                self.s("StartDate", &p.start_date)?;
                self.s("StartDateTime", &p.start_date_time)?;
                self.s("EndDate", &p.end_date)?;
                self.s("EndDateTime", &p.end_date_time)
            },
        )?;
        let umax = c.max_use_types_per_deal;
        self.strs("CommercialModelType", &t.commercial_model_type, umax)?;
        self.strs("UseType", &t.use_type, umax)
    }
}
