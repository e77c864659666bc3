//! The root's attributes, MessageHeader and PartyList.

use super::cx::{at, req, sub, Cx};
use super::parse::Node;
use crate::ddex::time::date_time_ms;
use crate::ddex::{invalid, DdexError};
use crate::proto::ddex as pb;

/// The profiles Stave accepts.
const PROFILES: [&str; 2] = ["Audio", "SimpleAudioSingle"];

/// Reads the root's attributes, refusing a profile outside [`PROFILES`]
/// and any profile variant.
pub(super) fn root_attrs(n: &Node, m: &mut pb::NewReleaseMessage) -> Result<(), DdexError> {
    if let Some(v) = n.attr("ReleaseProfileVariantVersionId") {
        return Err(invalid(format!(
            "ReleaseProfileVariantVersionId {v:?} is not accepted: only the plain Audio and SimpleAudioSingle profiles"
        )));
    }
    match n.attr("ReleaseProfileVersionId") {
        Some(p) if PROFILES.contains(&p) => p.clone_into(&mut m.release_profile_version_id),
        Some(p) => {
            return Err(invalid(format!(
                "ReleaseProfileVersionId {p:?} is not accepted: only Audio and SimpleAudioSingle"
            )))
        }
        None => {
            return Err(invalid(
                "ReleaseProfileVersionId is missing: only Audio and SimpleAudioSingle are accepted",
            ))
        }
    }
    m.language_and_script_code = n.attr("LanguageAndScriptCode").unwrap_or("").to_string();
    m.avs_version_id = n.attr("AvsVersionId").unwrap_or("").to_string();
    Ok(())
}

/// MessageHeader; MessageId and MessageCreatedDateTime are required and a
/// TestMessage is refused.
pub(super) fn header(cx: &mut Cx, path: &str, n: &Node) -> Result<pb::MessageHeader, DdexError> {
    req(n, path, "MessageId")?;
    req(n, path, "MessageCreatedDateTime")?;
    let mut h = pb::MessageHeader::default();
    let mut seen = [false; 4];
    for c in &n.children {
        let p = sub(path, c);
        match c.name.as_str() {
            "MessageThreadId" => cx.once(&mut h.message_thread_id, &mut seen[0], &p, c),
            "MessageId" => cx.once(&mut h.message_id, &mut seen[1], &p, c),
            "MessageSender" => {
                let s = party(cx, &p, c);
                if h.message_sender.is_some() {
                    cx.drop(format!(
                        "{p} {:?} (a repeat; the first is kept)",
                        s.party_id
                    ));
                } else {
                    h.message_sender = Some(s);
                }
            }
            "MessageRecipient" => h.message_recipient.push(party(cx, &p, c)),
            "MessageCreatedDateTime" => {
                cx.once(&mut h.message_created_date_time, &mut seen[2], &p, c)
            }
            "MessageControlType" => cx.once(&mut h.message_control_type, &mut seen[3], &p, c),
            _ => cx.skip(path, c),
        }
    }
    if h.message_control_type == "TestMessage" {
        return Err(invalid(
            "MessageControlType is TestMessage: test messages are not published",
        ));
    }
    h.message_created_ms = date_time_ms(&h.message_created_date_time)
        .map_err(|e| at(&format!("{path}/MessageCreatedDateTime"), e))?;
    Ok(h)
}

/// MessageSender or MessageRecipient: PartyId and PartyName/FullName.
fn party(cx: &mut Cx, path: &str, n: &Node) -> pb::MessageParty {
    let mut p = pb::MessageParty::default();
    let (mut seen_id, mut seen_name) = (false, false);
    for c in &n.children {
        let cp = sub(path, c);
        match c.name.as_str() {
            "PartyId" => cx.once(&mut p.party_id, &mut seen_id, &cp, c),
            "PartyName" => {
                for g in &c.children {
                    match g.name.as_str() {
                        "FullName" => cx.once(&mut p.full_name, &mut seen_name, &sub(&cp, g), g),
                        _ => cx.skip(&cp, g),
                    }
                }
            }
            _ => cx.skip(path, c),
        }
    }
    p
}

/// PartyList: each Party's reference, names and DPID/ISNI ids.
pub(super) fn party_list(cx: &mut Cx, path: &str, n: &Node) -> Vec<pb::Party> {
    let mut out = Vec::new();
    for c in &n.children {
        match c.name.as_str() {
            "Party" => out.push(list_party(cx, &sub(path, c), c)),
            _ => cx.skip(path, c),
        }
    }
    out
}

fn list_party(cx: &mut Cx, path: &str, n: &Node) -> pb::Party {
    let mut p = pb::Party::default();
    let mut seen = false;
    for c in &n.children {
        let cp = sub(path, c);
        match c.name.as_str() {
            "PartyReference" => cx.once(&mut p.party_reference, &mut seen, &cp, c),
            "PartyName" => p.full_name.push(party_name(cx, &cp, c)),
            "PartyId" => party_ids(cx, &cp, c, &mut p.party_id),
            _ => cx.skip(path, c),
        }
    }
    p
}

/// PartyName: FullName, with the PartyName's variant attributes.
fn party_name(cx: &mut Cx, path: &str, n: &Node) -> pb::Text {
    let mut t = pb::Text {
        variant: cx.variant(path, n),
        ..Default::default()
    };
    let mut seen = false;
    for c in &n.children {
        match c.name.as_str() {
            "FullName" => cx.once(&mut t.value, &mut seen, &sub(path, c), c),
            _ => cx.skip(path, c),
        }
    }
    t
}

/// One PartyId element: each DPID or ISNI child becomes one `PartyId`.
fn party_ids(cx: &mut Cx, path: &str, n: &Node, out: &mut Vec<pb::PartyId>) {
    for c in &n.children {
        let cp = sub(path, c);
        match c.name.as_str() {
            "DPID" => out.push(pb::PartyId {
                dpid: cx.leaf(&cp, c),
                ..Default::default()
            }),
            "ISNI" => out.push(pb::PartyId {
                isni: cx.leaf(&cp, c),
                ..Default::default()
            }),
            _ => cx.skip(path, c),
        }
    }
}
