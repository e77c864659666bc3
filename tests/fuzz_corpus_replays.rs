//! Every seed and every committed corpus input of the node's fuzz targets
//! (`fuzz/corpus/<target>/`, grown by `scripts/fuzz`, minimised before a
//! commit) goes through its target's case as an ordinary test, so CI checks
//! the fuzzers' invariants, and every crash they found, on stable with no
//! instrumented build (issue 27). The cases are `stave::fuzz_fixtures`.

use std::path::{Path, PathBuf};

use stave::fuzz_fixtures::{run, seeds, TARGETS};

/// The committed corpus of `target`, sorted by name.
fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
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

/// Runs `target` over its seeds and corpus; returns how many inputs ran.
fn replay(target: &str) -> usize {
    let seeds = seeds(target);
    assert!(!seeds.is_empty(), "{target} has seeds");
    let mut n = 0;
    for (name, bytes) in seeds {
        eprintln!("{target}: seed {name}");
        assert!(run(target, &bytes), "{target} is a target");
        n += 1;
    }
    for (path, bytes) in corpus(target) {
        eprintln!("{target}: {}", path.display());
        run(target, &bytes);
        n += 1;
    }
    n
}

macro_rules! replays {
    ($($target:ident),* $(,)?) => {$(
        #[test]
        fn $target() {
            let n = replay(stringify!($target));
            eprintln!("{}: {n} inputs", stringify!($target));
        }
    )*};
}

replays!(
    tx_envelope,
    abci_frame,
    finalize_block,
    abci_query,
    casbin,
    kvdb,
    kv_token,
    peer,
    stream_dek,
    snapshot_chunk,
);

#[test]
fn every_target_has_a_test_and_a_fuzz_binary() {
    let manifest =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/Cargo.toml"))
            .expect("fuzz/Cargo.toml");
    let this = include_str!("fuzz_corpus_replays.rs");
    for t in TARGETS {
        assert!(
            manifest.contains(&format!("name = \"{t}\"")),
            "fuzz/Cargo.toml lacks {t}"
        );
        assert!(
            this.contains(&format!("    {t},\n")),
            "no replay test for {t}"
        );
    }
}
