//! The README is checked against the node, so it cannot drift again (a
//! black-box client found three places where it had):
//! - every row `| N | \`NAME\` | …` of a code table names a real code, and
//!   every code the node has has such a row;
//! - `kv.Set`/`kv.Delete` size failures answer the codes the README's table gives;
//! - a KV token field of the wrong length fails decoding (`DECODE`), and an
//!   empty token value `KV_BAD_FIELD`, as the README says.
//!
//! The token sign-bytes vector is checked against the README's text by the
//! unit test `sign_bytes_match_the_readme_test_vector`.

mod inproc;
use bytes::Bytes;
use ed25519_dalek::Signer;
use inproc::kv::*;
use inproc::*;
use prost::Message;
use stave::proto::tx as pb;
use stave::tx::Code;

const README: &str = include_str!("../README.md");

/// The README line that starts with `start`.
fn readme_line(start: &str) -> &'static str {
    README
        .lines()
        .find(|l| l.starts_with(start))
        .unwrap_or_else(|| panic!("README has no line starting {start:?}"))
}

#[test]
fn every_code_table_row_names_a_real_code() {
    let mut rows = 0;
    let mut seen = std::collections::BTreeSet::new();
    for line in README.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let (Some(num), Some(name)) = (cells.get(1), cells.get(2)) else {
            continue;
        };
        let (Ok(n), Some(name)) = (num.parse::<u32>(), name.strip_prefix('`')) else {
            continue;
        };
        let name = name.trim_end_matches('`');
        let code = Code::ALL.iter().find(|c| c.value() == n);
        assert_eq!(
            code.map(|c| c.name()),
            Some(name),
            "README row {line:?}: code {n} is not {name}"
        );
        rows += 1;
        seen.insert(n);
    }
    assert!(rows >= 17, "found only {rows} code rows");
    let missing: Vec<String> = Code::ALL
        .iter()
        .filter(|c| !seen.contains(&c.value()))
        .map(|c| format!("{} {}", c.value(), c.name()))
        .collect();
    assert!(missing.is_empty(), "codes with no README row: {missing:?}");
}

/// A signed tx whose one action is `action`, built as raw protobuf so that
/// fields can have lengths the domain types refuse.
fn raw_tx(seed: u8, nonce: u64, action: pb::action::Kind) -> Bytes {
    let k = key(seed);
    let body = pb::TxBody {
        chain_id: CHAIN.into(),
        signer: k.verifying_key().to_bytes().to_vec(),
        nonce,
        actions: vec![pb::Action { kind: Some(action) }],
        memo: String::new(),
    };
    let body_bytes = body.encode_to_vec();
    let signature = k
        .sign(&stave::tx::sign_bytes(&body_bytes))
        .to_bytes()
        .to_vec();
    Bytes::from(
        pb::Tx {
            body_bytes,
            signature,
        }
        .encode_to_vec(),
    )
}

fn token_with(mutate: impl FnOnce(&mut stave::proto::kv::KvTokenCreate)) -> pb::action::Kind {
    let stave::tx::Action::KvTokenCreate(c) = create(1, "k", "v", &[], 1) else {
        unreachable!()
    };
    let mut p = stave::proto::kv::KvTokenCreate::from(c);
    mutate(&mut p);
    pb::action::Kind::KvTokenCreate(p)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_codes_the_readme_gives_are_the_codes_the_node_answers() {
    let dir = tempfile::tempdir().unwrap();
    let mut node = Node::open(dir.path());
    node.init_chain(default_genesis()).await;
    let long_value = "x".repeat(64 * 1024 + 1);
    let short_sig = token_with(|p| p.token.as_mut().unwrap().signature.truncate(63));
    let cases: Vec<(&str, Bytes, Code)> = vec![
        (
            "kv.Set empty key",
            signed(1, 0, vec![set("", "v")]),
            Code::KvBadKey,
        ),
        (
            "kv.Set value over max_kv_value_bytes",
            signed(1, 0, vec![set("k", &long_value)]),
            Code::KvValueTooLarge,
        ),
        (
            "kv.Delete empty key",
            signed(1, 0, vec![del("")]),
            Code::KvBadKey,
        ),
        (
            "KvTokenCreate with a 63-byte signature",
            raw_tx(1, 0, short_sig),
            Code::Decode,
        ),
        (
            "KvTokenCreate with an empty value",
            signed(1, 0, vec![create(1, "k", "", &[], 1)]),
            Code::KvBadField,
        ),
    ];
    for (what, tx, want) in cases {
        let r = node.check_tx(tx, false).await;
        assert_eq!(r.code.value(), want.value(), "{what}: {}", r.log);
    }
    let kv_set = readme_line("| `kv.Set {");
    for c in [Code::KvBadKey, Code::KvValueTooLarge] {
        let cited = format!("`{}` ({})", c.name(), c.value());
        assert!(kv_set.contains(&cited), "README's kv.Set row lacks {cited}");
    }
    let kv_delete = readme_line("| `kv.Delete {");
    assert!(kv_delete.contains("`KV_BAD_KEY` (306)"), "{kv_delete}");
    let stateless = readme_line("Stateless (CheckTx, never in a block)");
    assert!(
        stateless.contains("316 other field (generation 0, empty value)"),
        "{stateless}"
    );
    let decode = readme_line("A token id or signature of the wrong length");
    assert!(decode.contains("1 `DECODE`"), "{decode}");
}
