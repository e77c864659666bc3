//! ResourceList: SoundRecording (its one NonImmersive edition) and Image,
//! each with its cid, and the TechnicalDetails both carry.

use super::common::{contributor, display_artist, display_title, duration, line};
use super::cx::{req, sub, Cx};
use super::parse::Node;
use super::CID_NAMESPACE;
use crate::ddex::{invalid, DdexError};
use crate::proto::ddex as pb;

/// ResourceList: appends its SoundRecordings and Images to `m`.
pub(super) fn resource_list(
    cx: &mut Cx,
    path: &str,
    n: &Node,
    m: &mut pb::NewReleaseMessage,
) -> Result<(), DdexError> {
    for c in &n.children {
        let p = sub(path, c);
        match c.name.as_str() {
            "SoundRecording" => m.sound_recording.push(sound_recording(cx, &p, c)?),
            "Image" => m.image.push(image(cx, &p, c)?),
            _ => cx.skip(path, c),
        }
    }
    Ok(())
}

fn sound_recording(cx: &mut Cx, path: &str, n: &Node) -> Result<pb::SoundRecording, DdexError> {
    let reference = req(n, path, "ResourceReference")?.text.clone();
    let mut r = pb::SoundRecording::default();
    let mut prop_cid = None;
    let mut seen = [false; 3];
    for c in &n.children {
        let p = sub(path, c);
        match c.name.as_str() {
            "ResourceReference" => cx.once(&mut r.resource_reference, &mut seen[0], &p, c),
            "Type" => cx.once(&mut r.r#type, &mut seen[1], &p, c),
            "SoundRecordingEdition" => {
                let taken = r.sound_recording_edition.is_some();
                if let Some((ed, cid)) = edition(cx, &p, c, &reference, taken)? {
                    r.sound_recording_edition = Some(ed);
                    prop_cid = cid;
                }
            }
            "DisplayTitleText" => r.display_title_text.push(cx.text(&p, c)),
            "DisplayTitle" => r.display_title.push(display_title(cx, &p, c)),
            "DisplayArtistName" => r.display_artist_name.push(cx.text(&p, c)),
            "DisplayArtist" => r.display_artist.push(display_artist(cx, &p, c)),
            "Contributor" => r.contributor.push(contributor(cx, &p, c)),
            "Duration" if seen[2] => cx.drop(format!("{p} (a repeat; the first is kept)")),
            "Duration" => {
                (r.duration, r.duration_ms) = duration(cx, &p, c)?;
                seen[2] = true;
            }
            "ParentalWarningType" => r.parental_warning_type.push(cx.text(&p, c)),
            _ => cx.skip(path, c),
        }
    }
    let isrc = r
        .sound_recording_edition
        .as_ref()
        .map(|e| e.isrc.clone())
        .unwrap_or_default();
    if isrc.is_empty() {
        return Err(invalid(format!(
            "missing required element {path}/SoundRecordingEdition/ResourceId/ISRC (resource {reference:?}, in a NonImmersiveEdition)"
        )));
    }
    r.cid = recording_cid(cx, &isrc, &reference, prop_cid)?;
    Ok(r)
}

/// An accepted edition and the cid its ResourceId carried.
type Edition = (pb::SoundRecordingEdition, Option<Vec<u8>>);

/// One SoundRecordingEdition: `None` when it is not the first
/// NonImmersive one (then it is listed in `dropped`).
fn edition(
    cx: &mut Cx,
    path: &str,
    n: &Node,
    reference: &str,
    taken: bool,
) -> Result<Option<Edition>, DdexError> {
    let kind = n
        .child("Type")
        .map_or("NonImmersiveEdition", |t| t.text.as_str());
    if kind != "NonImmersiveEdition" {
        cx.drop(format!("{kind} of {reference}"));
        return Ok(None);
    }
    if taken {
        cx.drop(format!("a second NonImmersiveEdition of {reference}"));
        return Ok(None);
    }
    let mut ed = pb::SoundRecordingEdition::default();
    let mut cid = None;
    let mut seen_isrc = false;
    for c in &n.children {
        let p = sub(path, c);
        match c.name.as_str() {
            "Type" => {}
            "ResourceId" => {
                for g in &c.children {
                    match g.name.as_str() {
                        "ISRC" => cx.once(&mut ed.isrc, &mut seen_isrc, &sub(&p, g), g),
                        "ProprietaryId" => proprietary_cid(cx, &p, g, &mut cid)?,
                        _ => cx.skip(&p, g),
                    }
                }
            }
            "PLine" => ed.p_line.push(line(cx, &p, c, "PLineText")),
            "TechnicalDetails" => ed.technical_details.push(technical(cx, &p, c)),
            _ => cx.skip(path, c),
        }
    }
    Ok(Some((ed, cid)))
}

/// A ProprietaryId under the ResourceId at `path`: the cid when its
/// Namespace is `stave:cid`, else skipped.
fn proprietary_cid(
    cx: &mut Cx,
    path: &str,
    n: &Node,
    cid: &mut Option<Vec<u8>>,
) -> Result<(), DdexError> {
    if n.attr("Namespace") != Some(CID_NAMESPACE) {
        cx.skip(path, n);
        return Ok(());
    }
    let p = sub(path, n);
    let text = cx.leaf(&p, n);
    let bytes = from_hex(&text).ok_or_else(|| {
        invalid(format!(
            "{p}: ProprietaryId {CID_NAMESPACE} {:?} is not hex",
            text.chars().take(80).collect::<String>()
        ))
    })?;
    if cid.is_some() {
        cx.drop(format!(
            "{p} {text} (a second {CID_NAMESPACE}; the first is kept)"
        ));
    } else if !bytes.is_empty() {
        *cid = Some(bytes);
    }
    Ok(())
}

/// The cid of a recording: the user's map, else its ProprietaryId.
fn recording_cid(
    cx: &Cx,
    isrc: &str,
    reference: &str,
    prop: Option<Vec<u8>>,
) -> Result<Vec<u8>, DdexError> {
    if let Some(c) = cx.opts.cids.get(isrc) {
        return Ok(c.clone());
    }
    prop.ok_or_else(|| {
        invalid(format!(
            "no cid for ISRC {isrc} (resource {reference}): pass --map {isrc}=CID"
        ))
    })
}

fn image(cx: &mut Cx, path: &str, n: &Node) -> Result<pb::Image, DdexError> {
    let mut im = pb::Image::default();
    let mut prop_cid = None;
    let mut seen = [false; 2];
    for c in &n.children {
        let p = sub(path, c);
        match c.name.as_str() {
            "ResourceReference" => cx.once(&mut im.resource_reference, &mut seen[0], &p, c),
            "Type" => cx.once(&mut im.r#type, &mut seen[1], &p, c),
            "ResourceId" => {
                for g in &c.children {
                    match g.name.as_str() {
                        "ProprietaryId" => proprietary_cid(cx, &p, g, &mut prop_cid)?,
                        _ => cx.skip(&p, g),
                    }
                }
            }
            "ParentalWarningType" => im.parental_warning_type.push(cx.text(&p, c)),
            "TechnicalDetails" => im.technical_details.push(technical(cx, &p, c)),
            _ => cx.skip(path, c),
        }
    }
    let cover = cx
        .opts
        .cover
        .as_ref()
        .filter(|_| im.r#type == "FrontCoverImage");
    im.cid = match (cover, prop_cid) {
        (Some(c), _) => c.clone(),
        (None, Some(c)) => c,
        (None, None) if im.r#type == "FrontCoverImage" => {
            return Err(invalid(format!(
                "no cid for the FrontCoverImage {}: pass --cover CID",
                im.resource_reference
            )))
        }
        (None, None) => {
            return Err(invalid(format!(
                "no cid for image {} ({}): add a ProprietaryId Namespace=\"{CID_NAMESPACE}\"",
                im.resource_reference, im.r#type
            )))
        }
    };
    Ok(im)
}

/// TechnicalDetails: the reference, the first DeliveryFile (a recording's)
/// or the File directly under it (an image's).
fn technical(cx: &mut Cx, path: &str, n: &Node) -> pb::TechnicalDetails {
    let mut td = pb::TechnicalDetails::default();
    let mut seen = [false; 3];
    for c in &n.children {
        let p = sub(path, c);
        match c.name.as_str() {
            "TechnicalResourceDetailsReference" => cx.once(
                &mut td.technical_resource_details_reference,
                &mut seen[0],
                &p,
                c,
            ),
            "DeliveryFile" if seen[1] => cx.drop(format!("{p} (a repeat; the first is kept)")),
            "DeliveryFile" => {
                seen[1] = true;
                delivery_file(cx, &p, c, &mut td);
            }
            "File" if seen[2] => cx.drop(format!("{p} (a repeat; the first is kept)")),
            "File" => {
                seen[2] = true;
                file(cx, &p, c, &mut td);
            }
            _ => cx.skip(path, c),
        }
    }
    td
}

fn delivery_file(cx: &mut Cx, path: &str, n: &Node, td: &mut pb::TechnicalDetails) {
    let mut seen = [false; 4];
    for c in &n.children {
        let p = sub(path, c);
        match c.name.as_str() {
            "Type" => cx.once(&mut td.delivery_file_type, &mut seen[0], &p, c),
            "AudioCodecType" => cx.once(&mut td.audio_codec_type, &mut seen[1], &p, c),
            "NumberOfChannels" => td.number_of_channels = cx.num(&p, c),
            "SamplingRate" => cx.once(&mut td.sampling_rate, &mut seen[2], &p, c),
            "BitsPerSample" => td.bits_per_sample = cx.num(&p, c),
            "File" if seen[3] => cx.drop(format!("{p} (a repeat; the first is kept)")),
            "File" => {
                seen[3] = true;
                file(cx, &p, c, td);
            }
            _ => cx.skip(path, c),
        }
    }
}

fn file(cx: &mut Cx, path: &str, n: &Node, td: &mut pb::TechnicalDetails) {
    let mut seen = [false; 3];
    for c in &n.children {
        let p = sub(path, c);
        match c.name.as_str() {
            "URI" => cx.once(&mut td.uri, &mut seen[0], &p, c),
            "HashSum" => {
                for g in &c.children {
                    let gp = sub(&p, g);
                    match g.name.as_str() {
                        "Algorithm" => cx.once(&mut td.hash_algorithm, &mut seen[1], &gp, g),
                        "HashSumValue" => cx.once(&mut td.hash_sum_value, &mut seen[2], &gp, g),
                        _ => cx.skip(&p, g),
                    }
                }
            }
            _ => cx.skip(path, c),
        }
    }
}

/// Hex (either case) → bytes; `None` for odd length or a non-hex digit.
pub(super) fn from_hex(s: &str) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    if !b.len().is_multiple_of(2) {
        return None;
    }
    b.chunks(2)
        .map(|pair| {
            let hi = char::from(*pair.first()?).to_digit(16)?;
            let lo = char::from(*pair.get(1)?).to_digit(16)?;
            u8::try_from(hi * 16 + lo).ok()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::from_hex;

    #[test]
    fn hex() {
        assert_eq!(from_hex("00ffAb"), Some(vec![0, 255, 0xab]));
        assert_eq!(from_hex(""), Some(vec![]));
        assert_eq!(from_hex("abc"), None);
        assert_eq!(from_hex("zz"), None);
        assert_eq!(from_hex("é1"), None);
    }
}
