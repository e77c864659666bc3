//! Every seed and every committed corpus input of the release fuzz targets
//! (fuzz/corpus/{ern_xml,release_validate}/, grown by scripts/fuzz) goes
//! through its target's case as an ordinary test, so CI checks the
//! fuzzers' invariants on stable without a fuzzing run.

use std::path::{Path, PathBuf};

use prost::Message;
use stave_ddex::ddex::fuzz_fixtures::{validate_case, xml_case, xml_seeds};
use stave_ddex::ddex::xml::{import, ImportOptions};

fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    // a renamed or missing corpus must fail, not replay nothing
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("the corpus {} of {target}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    assert!(!files.is_empty(), "the corpus {} is empty", dir.display());
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).expect("read a corpus file");
            (p, bytes)
        })
        .collect()
}

#[test]
fn ern_xml_seeds_and_corpus_hold_the_round_trip() {
    let seeds = xml_seeds();
    assert!(seeds.len() >= 5);
    for (name, bytes) in seeds {
        eprintln!("seed {name}");
        xml_case(bytes);
        // and every prefix of it
        for cut in (0..bytes.len()).step_by(211) {
            xml_case(&bytes[..cut]);
        }
    }
    for (path, bytes) in corpus("ern_xml") {
        eprintln!("corpus {}", path.display());
        xml_case(&bytes);
    }
}

#[test]
fn release_validate_seeds_and_corpus_answer_twice_the_same() {
    for (name, bytes) in xml_seeds() {
        let Ok(m) = import(bytes, &ImportOptions::default()) else {
            continue;
        };
        eprintln!("seed {name}");
        let wire = m.message.encode_to_vec();
        validate_case(&wire);
        for i in (0..wire.len()).step_by(37) {
            let mut flipped = wire.clone();
            flipped[i] ^= 0x5a;
            validate_case(&flipped);
        }
    }
    for (path, bytes) in corpus("release_validate") {
        eprintln!("corpus {}", path.display());
        validate_case(&bytes);
    }
}
