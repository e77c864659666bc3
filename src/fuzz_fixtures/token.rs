//! Fuzz case `kv_token`: the KV token format functions and token actions.
//!
//! Drives `check_key`, `check_protocol_id`, `parse_tags`/`check_tags` on raw
//! strings and on grammar-built ones, the wire decode of `KvTokenCreate`,
//! `KvTokenUpdate` and `KvTokenDelete`, their `check_stateless`, and
//! `Action::embedded_sig` on properly signed (and then tampered) actions.
//!
//! Oracles: nothing panics; every check gives the same answer twice;
//! `check_tags` accepts exactly what `parse_tags` accepts (it is
//! `parse_tags` without the list, by design); an accepted spelling is the
//! canonical one; grammar-built protocol ids, tags and keys are accepted
//! exactly when a model of the documented rules says so; a decoded action
//! converts back to an equal wire message; a signature made by the client
//! verifies, and one over any other chain, generation, controller or with a
//! flipped `s` byte does not.
//!
//! Input: a mode byte (`% 4`): 0 raw strings (split at `0x00`), 1 the
//! grammar, 2 wire bytes of one action, 3 a signed action built from
//! choices. Every choice is one byte read with `Unstructured::int_in_range`.

use std::sync::OnceLock;

use arbitrary::Unstructured;
use ed25519_dalek::SigningKey;
use prost::Message;

use crate::keyspaces::kv::token::{check_key, check_protocol_id, check_tags, client, parse_tags};
use crate::keyspaces::kv::{KvTokenCreate, KvTokenDelete, KvTokenParams, KvTokenUpdate};
use crate::keyspaces::params::Params;
use crate::proto::kv as pb;
use crate::tx::Action;

const CHAIN: &str = "stave-fuzz";
const NAME_CHARS: &[u8] = b"abz09 A_-";
const PIDS: [&str; 5] = [
    "[1,\"profile data\"]",
    "[0,\"hello\"]",
    "[2, \"hello\"]",
    "[3,\"hello\"]",
    "[1,\"ab\"]",
];
const KEYS: [&str; 4] = ["name", "k", "", "\u{e9}t\u{e9}"];
const TAGS: [&str; 7] = ["red", "big", "", "\u{e9}", "\"q\"", "t/1", "0123456789"];
const TAG_JSON: [&str; 5] = [
    "",
    "[\"red\",\"big\"]",
    "[]",
    "[\"red\",\"red\"]",
    "[ \"red\"]",
];
const GENS: [u64; 4] = [1, 2, 0, u64::MAX];

fn pick(u: &mut Unstructured<'_>, n: usize) -> usize {
    u.int_in_range(0..=n.saturating_sub(1)).unwrap_or(0)
}

/// Up to `max` bytes (`max` < 256), length first.
fn take<'a>(u: &mut Unstructured<'a>, max: usize) -> &'a [u8] {
    let n = pick(u, max + 1).min(u.len());
    u.bytes(n).unwrap_or_default()
}

fn text(u: &mut Unstructured<'_>, max: usize) -> String {
    String::from_utf8_lossy(take(u, max)).into_owned()
}

fn signing_keys() -> &'static [SigningKey; 3] {
    static KEYS: OnceLock<[SigningKey; 3]> = OnceLock::new();
    KEYS.get_or_init(|| [1u8, 2, 3].map(|s| SigningKey::from_bytes(&[s; 32])))
}

/// Runs the case on `data`.
pub fn token_case(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let p = Params::default();
    match pick(&mut u, 4) {
        0 => raw_strings(&data[data.len().min(1)..], &p.kv_tokens),
        1 => grammar(&mut u, &p.kv_tokens),
        2 => wire(&mut u, &p),
        _ => drop(signed(&mut u, &p)),
    }
}

/// Each piece against every format function; accepted means canonical.
fn raw_strings(data: &[u8], p: &KvTokenParams) {
    for piece in data.split(|b| *b == 0).take(4) {
        let s = String::from_utf8_lossy(piece);
        assert_eq!(check_key(&s, p), check_key(&s, p), "check_key twice");
        let pid = check_protocol_id(&s, p);
        assert_eq!(pid, check_protocol_id(&s, p), "check_protocol_id twice");
        if let Ok((level, name)) = &pid {
            let canonical = serde_json::to_string(&(level, name)).ok();
            assert_eq!(
                canonical.as_deref(),
                Some(&*s),
                "accepted pid not canonical"
            );
        }
        tags_agree(&s, p);
    }
}

/// `parse_tags` twice, against `check_tags`; an accepted list is canonical.
fn tags_agree(s: &str, p: &KvTokenParams) -> bool {
    let parsed = parse_tags(s, p);
    assert_eq!(parsed, parse_tags(s, p), "parse_tags twice on {s:?}");
    assert_eq!(
        parsed.is_ok(),
        check_tags(s, p).is_ok(),
        "parse vs check on {s:?}"
    );
    if let Ok(list) = &parsed {
        let canonical = client::tags_json(list);
        assert_eq!(canonical, s, "accepted tags not canonical");
    }
    parsed.is_ok()
}

/// Grammar-built values against a model of the documented rules.
fn grammar(u: &mut Unstructured<'_>, p: &KvTokenParams) {
    let level = pick(u, 4) as u8;
    let name = match pick(u, 5) {
        0 => "a".repeat(p.max_protocol_name_chars as usize),
        1 => "a".repeat(p.max_protocol_name_chars as usize + 1),
        _ => (0..pick(u, 14))
            .map(|_| NAME_CHARS[pick(u, NAME_CHARS.len())] as char)
            .collect(),
    };
    let pid = client::protocol_id(level, &name);
    let chars = name.chars().count();
    let name_ok = (p.min_protocol_name_chars as usize..=p.max_protocol_name_chars as usize)
        .contains(&chars)
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b' ')
        && !name.starts_with(' ')
        && !name.ends_with(' ')
        && !name.contains("  ");
    let got = check_protocol_id(&pid, p);
    assert_eq!(got.is_ok(), level <= 2 && name_ok, "pid {pid:?}: {got:?}");
    let tags: Vec<String> = (0..pick(u, 19)).map(|_| tag(u)).collect();
    let json = match tags.is_empty() && pick(u, 2) == 0 {
        true => String::new(),
        false => serde_json::to_string(&tags).unwrap_or_default(),
    };
    let distinct = tags.iter().collect::<std::collections::BTreeSet<_>>().len() == tags.len();
    let tags_ok = json.is_empty()
        || (!tags.is_empty()
            && tags.len() <= p.max_tags as usize
            && distinct
            && tags
                .iter()
                .all(|t| !t.is_empty() && t.len() <= p.max_tag_bytes as usize));
    assert_eq!(tags_agree(&json, p), tags_ok, "tags {json:?}");
    let max = p.max_key_bytes as usize;
    let key = "k".repeat([0, 1, max, max + 1][pick(u, 4)]);
    let key_ok = !key.is_empty() && key.len() <= p.max_key_bytes as usize;
    assert_eq!(
        check_key(&key, p).is_ok(),
        key_ok,
        "key of {} bytes",
        key.len()
    );
}

fn tag(u: &mut Unstructured<'_>) -> String {
    match pick(u, TAGS.len() + 2) {
        i if i < TAGS.len() => TAGS[i].to_string(),
        i if i == TAGS.len() => "x".repeat(64 + pick(u, 2)),
        _ => text(u, 16),
    }
}

/// Wire bytes of one token action: decode, check, convert back.
fn wire(u: &mut Unstructured<'_>, p: &Params) {
    let kind = pick(u, 3);
    let bytes = take(u, 255);
    let action = match kind {
        0 => decoded::<pb::KvTokenCreate, KvTokenCreate>(bytes).map(Action::KvTokenCreate),
        1 => decoded::<pb::KvTokenUpdate, KvTokenUpdate>(bytes).map(Action::KvTokenUpdate),
        _ => decoded::<pb::KvTokenDelete, KvTokenDelete>(bytes).map(Action::KvTokenDelete),
    };
    if let Some(a) = action {
        checks(&a, p, CHAIN);
    }
}

/// Decodes `bytes` as wire type `W` and then domain type `D`; asserts that
/// `D` converts back to the same `W`.
fn decoded<W, D>(bytes: &[u8]) -> Option<D>
where
    W: Message + Default + Clone + PartialEq + TryInto<D>,
    D: Clone + Into<W>,
{
    let w = W::decode(bytes).ok()?;
    let d: D = w.clone().try_into().ok()?;
    let back: W = d.clone().into();
    assert!(back == w, "domain -> wire is not the decoded message");
    Some(d)
}

/// `check_stateless` and `embedded_sig` twice: whether the check passed,
/// and the verification result when the signature could be prepared.
fn checks(a: &Action, p: &Params, chain: &str) -> (bool, Option<bool>) {
    let c1 = a.check_stateless(p).map_err(|e| e.to_string());
    assert_eq!(
        c1,
        a.check_stateless(p).map_err(|e| e.to_string()),
        "check twice"
    );
    let sig = |a: &Action| -> Result<Option<bool>, String> {
        let s = a.embedded_sig(chain).map_err(|e| e.to_string())?;
        Ok(s.map(|s| s.verify().is_ok()))
    };
    let s1 = sig(a);
    assert_eq!(s1, sig(a), "embedded_sig twice");
    assert!(
        !matches!(s1, Ok(None)),
        "a token action without an embedded signature"
    );
    (c1.is_ok(), s1.ok().flatten())
}

/// A client-signed action, maybe tampered with, must verify exactly when
/// it was not. Returns whether it passed `check_stateless`.
fn signed(u: &mut Unstructured<'_>, p: &Params) -> bool {
    let keys = signing_keys();
    let sk = &keys[pick(u, 3)];
    let op = pick(u, 3);
    let pid = match pick(u, PIDS.len() + 1) {
        i if i < PIDS.len() => PIDS[i].to_string(),
        _ => text(u, 40),
    };
    let key = match pick(u, KEYS.len() + 1) {
        i if i < KEYS.len() => KEYS[i].to_string(),
        _ => text(u, 40),
    };
    let value = take(u, 32).to_vec();
    let tags = match pick(u, TAG_JSON.len() + 1) {
        i if i < TAG_JSON.len() => TAG_JSON[i].to_string(),
        _ => text(u, 40),
    };
    let generation = GENS[pick(u, GENS.len())];
    let id = [pick(u, 256) as u8; 32];
    let mut a = match op {
        0 => Action::KvTokenCreate(client::create(
            sk, CHAIN, &pid, &key, &value, &tags, generation,
        )),
        1 => Action::KvTokenUpdate(client::update(
            sk, CHAIN, &pid, &key, &value, &tags, generation, id,
        )),
        _ => Action::KvTokenDelete(client::delete(sk, CHAIN, &pid, &key, generation, id)),
    };
    wire_round_trip(&a);
    let tamper = pick(u, 5);
    let chain = if tamper == 2 { "stave-other" } else { CHAIN };
    tamper_with(&mut a, tamper, u, &client::controller_hex(&keys[0]));
    let (checked, verified) = checks(&a, p, chain);
    let changed = tamper != 0 && !(tamper == 4 && std::ptr::eq(sk, &keys[0]));
    assert_eq!(
        verified,
        Some(!changed),
        "signed action, tamper {tamper}: {a:?}"
    );
    checked
}

/// The action's wire bytes decode to an action equal to it.
fn wire_round_trip(a: &Action) {
    let same = match a {
        Action::KvTokenCreate(d) => {
            let b = pb::KvTokenCreate::from(d.clone()).encode_to_vec();
            decoded::<pb::KvTokenCreate, KvTokenCreate>(&b).as_ref() == Some(d)
        }
        Action::KvTokenUpdate(d) => {
            let b = pb::KvTokenUpdate::from(d.clone()).encode_to_vec();
            decoded::<pb::KvTokenUpdate, KvTokenUpdate>(&b).as_ref() == Some(d)
        }
        Action::KvTokenDelete(d) => {
            let b = pb::KvTokenDelete::from(d.clone()).encode_to_vec();
            decoded::<pb::KvTokenDelete, KvTokenDelete>(&b).as_ref() == Some(d)
        }
        _ => true,
    };
    assert!(same, "wire round trip changed {a:?}");
}

/// 1: flip a bit of the signature's `s`; 3: bump the generation; 4: name
/// `ctl` as the controller (2, another chain, is done by the caller).
fn tamper_with(a: &mut Action, how: usize, u: &mut Unstructured<'_>, ctl: &str) {
    let (byte, bit) = (32 + pick(u, 32), 1u8 << pick(u, 8));
    let (sig, generation, controller) = match a {
        Action::KvTokenCreate(d) => (
            &mut d.token.signature,
            &mut d.generation,
            &mut d.token.controller,
        ),
        Action::KvTokenUpdate(d) => (
            &mut d.token.signature,
            &mut d.generation,
            &mut d.token.controller,
        ),
        Action::KvTokenDelete(d) => (&mut d.signature, &mut d.generation, &mut d.controller),
        _ => return,
    };
    match how {
        1 => sig[byte] ^= bit,
        3 => *generation = generation.wrapping_add(1),
        4 => *controller = ctl.to_string(),
        _ => {}
    }
}

/// Seeds: raw strings, grammar picks, wire bytes and signed actions.
pub fn seeds() -> Vec<(String, Vec<u8>)> {
    let sk = &signing_keys()[1];
    let create = client::create(sk, CHAIN, PIDS[0], "name", b"Ada", TAG_JSON[1], 1);
    let delete = client::delete(sk, CHAIN, PIDS[0], "name", 2, [7; 32]);
    let mut wire_create = vec![2, 0, 0];
    let b = pb::KvTokenCreate::from(create).encode_to_vec();
    wire_create[2] = b.len().min(255) as u8;
    wire_create.extend(&b);
    let mut wire_delete = vec![2, 2, 0];
    let b = pb::KvTokenDelete::from(delete).encode_to_vec();
    wire_delete[2] = b.len().min(255) as u8;
    wire_delete.extend(&b);
    let raw = b"\x00[1,\"profile data\"]\x00[\"red\",\"big\"]\x00name\x00[\"a\",\"a\"]".to_vec();
    vec![
        ("raw_strings".into(), raw),
        // level 1, name "ab z 0", tags [red, big], a 1-byte key
        (
            "grammar_valid".into(),
            vec![1, 1, 2, 6, 0, 1, 3, 2, 3, 4, 2, 0, 1, 1],
        ),
        ("grammar_bad".into(), vec![1, 3, 1, 2, 0, 0, 0, 3]),
        ("wire_create".into(), wire_create),
        ("wire_delete".into(), wire_delete),
        // key 1, create, pid 0, key "name", 3-byte value, tags 1, gen 1, untouched
        (
            "signed_create".into(),
            vec![3, 1, 0, 0, 0, 3, b'A', b'd', b'a', 1, 0, 9, 0],
        ),
        (
            "signed_update_other_chain".into(),
            vec![3, 0, 1, 0, 0, 1, b'v', 0, 1, 9, 2],
        ),
        (
            "signed_delete_flipped".into(),
            vec![3, 2, 2, 0, 0, 0, 0, 1, 9, 1, 5, 3],
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz_fixtures::common::Noise;

    #[test]
    fn seeds_and_pseudo_random_inputs_pass() {
        for (name, s) in seeds() {
            token_case(&s);
            assert!(!name.is_empty());
        }
        let mut x = Noise::new(0x9e37_79b9_7f4a_7c15);
        for n in 0..2000 {
            token_case(&x.bytes(n % 200));
        }
    }

    #[test]
    fn signed_seeds_pass_the_stateless_checks() {
        for (name, s) in seeds().iter().filter(|(n, _)| n.starts_with("signed_")) {
            let mut u = Unstructured::new(&s[1..]);
            assert!(signed(&mut u, &Params::default()), "{name}");
        }
    }
}
