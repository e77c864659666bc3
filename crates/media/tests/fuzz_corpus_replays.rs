//! Every seed and every committed corpus input of the fuzz targets
//! (fuzz/corpus/<target>/, grown by scripts/fuzz) goes through its target's
//! case as an ordinary test, so CI checks the fuzzers' invariants on stable
//! without a fuzzing run (BRIEF §8).

use std::path::{Path, PathBuf};

use stave_media::fuzz_fixtures::{
    audio_case, audio_seeds, image_case, image_seeds, reply_case, worker_run,
};
use stave_media::worker::reply_line;

/// The committed corpus of `target`, sorted by name.
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
fn audio_seeds_and_corpus_hold_the_audio_invariants() {
    let dir = tempfile::tempdir().unwrap();
    let seeds = audio_seeds(dir.path());
    assert!(
        seeds.iter().any(|(n, _)| n.ends_with(".flac")),
        "the FLAC seed"
    );
    for (name, bytes) in &seeds {
        eprintln!("seed {name}");
        audio_case(dir.path(), bytes);
    }
    for (path, bytes) in corpus("audio") {
        eprintln!("corpus {}", path.display());
        audio_case(dir.path(), &bytes);
    }
}

#[test]
fn image_seeds_and_corpus_hold_the_image_invariants() {
    let dir = tempfile::tempdir().unwrap();
    for (_, bytes) in image_seeds() {
        image_case(dir.path(), &bytes);
    }
    for (_, bytes) in corpus("image") {
        image_case(dir.path(), &bytes);
    }
}

#[test]
fn worker_replies_round_trip_and_the_corpus_holds() {
    let dir = tempfile::tempdir().unwrap();
    let (job, out) = worker_run(dir.path());
    let out = out.expect("the fixture run transcodes");
    // the child's own reply is accepted as exactly what it made
    let line = reply_line(&Ok(out.clone())).unwrap();
    let back = stave_media::worker::read_reply(&line, &job).expect("a reply");
    assert_eq!(back.expect("accepted"), out);
    let run = (job, out);
    reply_case(&run, line.as_bytes());
    for (_, bytes) in corpus("worker_reply") {
        reply_case(&run, &bytes);
    }
}
