//! Canonical spellings of `protocol_id`, `tags` and keys. A non-canonical
//! spelling is rejected, never normalised.

use crate::keyspaces::kv::{KvError, KvTokenParams};

/// `key`: 1..=max bytes of UTF-8.
pub fn check_key(key: &str, p: &KvTokenParams) -> Result<(), KvError> {
    if key.is_empty() || key.len() > p.max_key_bytes as usize {
        return Err(KvError::BadKey {
            len: key.len(),
            max: p.max_key_bytes,
        });
    }
    Ok(())
}

/// `protocol_id`: the JSON `[level,"name"]` with level 0, 1 or 2, exactly as
/// `serde_json` writes it compactly (no whitespace); the name is a BRC-100
/// protocol name: lowercase letters, digits and single inner spaces, of
/// `min..=max` characters.
pub fn check_protocol_id(pid: &str, p: &KvTokenParams) -> Result<(u8, String), KvError> {
    let bad = |reason: String| KvError::BadProtocolId {
        got: pid.chars().take(120).collect(),
        reason,
    };
    let (level, name): (u8, String) =
        serde_json::from_str(pid).map_err(|e| bad(format!("not [level,\"name\"]: {e}")))?;
    let canonical = serde_json::to_string(&(level, &name)).map_err(|e| bad(e.to_string()))?;
    if canonical != pid {
        return Err(bad(format!(
            "not canonical; the canonical spelling is {canonical}"
        )));
    }
    if level > 2 {
        return Err(bad(format!("security level {level} is not 0, 1 or 2")));
    }
    let chars = name.chars().count();
    let (min, max) = (p.min_protocol_name_chars, p.max_protocol_name_chars);
    if chars < min as usize || chars > max as usize {
        return Err(bad(format!(
            "name has {chars} characters; allowed {min}..={max}"
        )));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == ' ')
    {
        return Err(bad("name may hold only a-z, 0-9 and spaces".into()));
    }
    if name.starts_with(' ') || name.ends_with(' ') || name.contains("  ") {
        return Err(bad("name has leading, trailing or double spaces".into()));
    }
    Ok((level, name))
}

/// `tags`: empty (no tags), or the compact JSON array of 1..=max distinct
/// strings of 1..=max_tag_bytes bytes each, exactly as `serde_json` writes it.
/// `[]` is rejected: an empty tag set is absent.
pub fn parse_tags(tags: &str, p: &KvTokenParams) -> Result<Vec<String>, KvError> {
    if tags.is_empty() {
        return Ok(Vec::new());
    }
    let bad = |reason: String| KvError::BadTags {
        got: tags.chars().take(120).collect(),
        reason,
    };
    let list: Vec<String> =
        serde_json::from_str(tags).map_err(|e| bad(format!("not a JSON array of strings: {e}")))?;
    let canonical = serde_json::to_string(&list).map_err(|e| bad(e.to_string()))?;
    if canonical != tags {
        return Err(bad(format!(
            "not canonical; the canonical spelling is {canonical}"
        )));
    }
    if list.is_empty() {
        return Err(bad("an empty tag set is written as no tags, not []".into()));
    }
    if list.len() > p.max_tags as usize {
        return Err(bad(format!(
            "{} tags, the cap is {}",
            list.len(),
            p.max_tags
        )));
    }
    let mut seen = std::collections::BTreeSet::new();
    for t in &list {
        if t.is_empty() || t.len() > p.max_tag_bytes as usize {
            return Err(bad(format!(
                "tag {t:?} is {} bytes; allowed 1..={}",
                t.len(),
                p.max_tag_bytes
            )));
        }
        if !seen.insert(t.as_str()) {
            return Err(bad(format!("duplicate tag {t:?}")));
        }
    }
    Ok(list)
}

/// [`parse_tags`] without the list.
pub fn check_tags(tags: &str, p: &KvTokenParams) -> Result<(), KvError> {
    parse_tags(tags, p).map(|_| ())
}
