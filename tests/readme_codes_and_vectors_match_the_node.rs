//! The README and its per-area reference pages (`docs/*.md`, written by
//! hand) are checked against the node, so they cannot drift again (a
//! black-box client found three places where the README had):
//! - every row `| N | \`NAME\` | …` of a code table names a real code, and
//!   every "`NAME` N" citation has its number;
//! - `docs/codes.md`, the full table, is generated from `src/tx/codes.rs`;
//! - `kv.Set`/`kv.Delete` size failures answer the codes the README's table gives;
//! - a KV token field of the wrong length fails decoding (`DECODE`), and an
//!   empty token value `KV_BAD_FIELD`, as the README says.
//!
//! The token sign-bytes vector is checked against `docs/kv.md` by the unit
//! test `sign_bytes_match_the_docs_test_vector`.

mod inproc;
use bytes::Bytes;
use ed25519_dalek::Signer;
use inproc::kv::*;
use inproc::*;
use prost::Message;
use stave::proto::tx as pb;
use stave::tx::Code;

/// The README, then each hand-written reference page it links to.
const README: &str = concat!(
    include_str!("../README.md"),
    include_str!("../docs/casbin.md"),
    include_str!("../docs/gas.md"),
    include_str!("../docs/governance.md"),
    include_str!("../docs/kv.md"),
    include_str!("../docs/local-store.md"),
    include_str!("../docs/network.md"),
    include_str!("../docs/rights.md"),
);

/// The line of the README or its pages that starts with `start`.
fn readme_line(start: &str) -> &'static str {
    README
        .lines()
        .find(|l| l.starts_with(start))
        .unwrap_or_else(|| panic!("README has no line starting {start:?}"))
}

#[test]
fn every_code_table_row_names_a_real_code() {
    let mut rows = 0;
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
    }
    assert!(rows >= 17, "found only {rows} code rows");
}

/// Wherever the README cites a code with its number (`` `NAME` 12 `` or
/// `` `NAME` (12) ``), the number is the node's.
#[test]
fn every_code_the_readme_cites_has_its_number() {
    let mut cited = 0;
    for c in Code::ALL {
        let tag = format!("`{}`", c.name());
        for after in README.split(tag.as_str()).skip(1) {
            let digits: String = after
                .trim_start_matches([' ', '('])
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            if let (true, Ok(n)) = (after.starts_with(' '), digits.parse::<u32>()) {
                assert_eq!(n, c.value(), "README cites {tag} as {n}");
                cited += 1;
            }
        }
    }
    assert!(cited >= 20, "found only {cited} citations");
}

/// The example model `docs/casbin.md` prints is the one the tests (and the
/// gas table's `AddCasbinModel` row) add.
#[test]
fn the_casbin_page_prints_the_example_model() {
    let page = include_str!("../docs/casbin.md");
    let example = stave::keyspaces::casbin::model::EXAMPLE_RBAC;
    assert!(
        page.contains(&format!("```ini\n{example}```")),
        "docs/casbin.md lacks EXAMPLE_RBAC"
    );
}

const CODES_RS: &str = include_str!("../src/tx/codes.rs");
const CODES_MD: &str = include_str!("../docs/codes.md");

/// `docs/codes.md`, every code with its doc comment from `src/tx/codes.rs`.
fn generated_codes_md() -> String {
    let body = CODES_RS
        .split("pub enum Code {")
        .nth(1)
        .and_then(|s| s.split("\n}").next())
        .expect("codes.rs has the Code enum");
    let mut out = String::from(
        "# Error codes\n\n\
         Every code Stave answers, codespace `stave`. The number never changes meaning.\n\
         Generated from the doc comments in `src/tx/codes.rs`: after changing them, run\n\
         `STAVE_WRITE_DOCS=1 cargo test --release --test readme_codes_and_vectors_match_the_node`.\n\
         The README and the area pages beside this one say which actions answer\n\
         which codes.\n\n\
         | Code | Name | Meaning |\n| --- | --- | --- |\n",
    );
    let mut doc = Vec::new();
    for line in body.lines().map(str::trim) {
        if let Some(d) = line.strip_prefix("///") {
            doc.push(d.trim().to_string());
        } else if let Some((_, n)) = line.trim_end_matches(',').split_once(" = ") {
            let n: u32 = n.parse().expect("a variant's value");
            let code = Code::ALL.iter().find(|c| c.value() == n).expect("in ALL");
            let meaning = if doc.is_empty() {
                "Applied.".into()
            } else {
                doc.join(" ")
            };
            out.push_str(&format!("| {n} | `{}` | {meaning} |\n", code.name()));
            doc.clear();
        }
    }
    out
}

#[test]
fn docs_codes_md_lists_every_code_from_the_source() {
    let want = generated_codes_md();
    if std::env::var_os("STAVE_WRITE_DOCS").is_some() {
        std::fs::write(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/codes.md"), &want).unwrap();
        return;
    }
    assert_eq!(CODES_MD, want, "docs/codes.md is stale: see its header");
    for c in Code::ALL {
        assert!(CODES_MD.contains(&format!("| {} | `{}` |", c.value(), c.name())));
    }
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
        gas_limit: stave::tx::build::DEFAULT_GAS_LIMIT,
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
            pow_nonce: 0,
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
