//! The fuzz targets' cases (fuzz/fuzz_targets call them; so does
//! tests/fuzz_corpus_replays.rs, over the committed corpus, in CI) and
//! their seeds: small files of every kind the worker takes, and one real
//! worker run whose reply the `worker_reply` target starts from.

use std::path::Path;

use image::ImageFormat;

use super::art_samples::{cover, encode, jpeg_with_exif, png_bomb};
use super::cid::raw_cid_of_file;
use super::flac::max_flac_bytes;
use super::image::{normalise_to_png, ImageLimits};
use super::transcode::part_path;
use super::wav::{music_like, wav_bytes};
use super::worker::{process, read_reply, WorkerError, WorkerJob, WorkerOutput};
use super::{transcode_to_flac, Limits, MediaError};

/// Seeds for the `audio` target: short WAVs (16-bit stereo, 24-bit mono,
/// 8-bit), and the FLAC the pipeline makes of the first.
pub fn audio_seeds(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut seeds = vec![
        (
            "s16-stereo.wav".into(),
            wav_bytes(44_100, 2, 16, &music_like(44_100, 2, 16, 2_000)),
        ),
        (
            "s24-mono.wav".into(),
            wav_bytes(48_000, 1, 24, &music_like(48_000, 1, 24, 1_500)),
        ),
        (
            "u8-stereo.wav".into(),
            wav_bytes(8_000, 2, 8, &music_like(8_000, 2, 8, 800)),
        ),
    ];
    // the other containers' signatures, so the search starts inside them
    let heads: [(&str, &[u8]); 6] = [
        ("id3.mp3", b"ID3\x04\x00\x00\x00\x00\x00\x00"),
        ("frame.mp3", b"\xff\xfb\x90\x64"),
        ("adts.aac", b"\xff\xf1\x50\x80"),
        ("ftyp.m4a", b"\x00\x00\x00\x18ftypM4A \x00\x00\x00\x00"),
        ("vorbis.ogg", b"OggS\x00\x02"),
        ("comm.aiff", b"FORM\x00\x00\x10\x00AIFFCOMM"),
    ];
    seeds.extend(
        heads
            .iter()
            .map(|(n, h)| (n.to_string(), [h, &[0u8; 64][..]].concat())),
    );
    let (wav, flac) = (dir.join("seed.wav"), dir.join("seed.flac"));
    if std::fs::write(&wav, &seeds[0].1).is_ok()
        && super::transcode_to_flac(&wav, &flac, &Limits::default()).is_ok()
    {
        if let Ok(bytes) = std::fs::read(&flac) {
            seeds.push(("s16-stereo.flac".into(), bytes));
        }
    }
    let _ = std::fs::remove_file(&wav);
    let _ = std::fs::remove_file(&flac);
    seeds
}

/// Seeds for the `image` target: a small cover as PNG, JPEG (with and
/// without EXIF) and WebP, and a small decompression bomb.
pub fn image_seeds() -> Vec<(String, Vec<u8>)> {
    let img = cover(24, 16, 3);
    let jpeg = encode(&img, ImageFormat::Jpeg);
    vec![
        ("cover.png".into(), encode(&img, ImageFormat::Png)),
        (
            "cover-exif.jpg".into(),
            jpeg_with_exif(&jpeg, b"Stave fuzz seed"),
        ),
        ("cover.jpg".into(), jpeg),
        ("cover.webp".into(), encode(&img, ImageFormat::WebP)),
        ("bomb.png".into(), png_bomb(2_048)),
    ]
}

/// One real worker run in `dir` (a short WAV and a small PNG cover): the
/// job, and what the child would reply.
pub fn worker_run(dir: &Path) -> (WorkerJob, Result<WorkerOutput, MediaError>) {
    let job = WorkerJob {
        input: dir.join("reply-in.wav"),
        flac: dir.join("reply.flac"),
        images: vec![(dir.join("reply-art.png"), dir.join("reply.png"))],
        limits: Limits::default(),
        image_limits: ImageLimits::default(),
    };
    let wav = wav_bytes(22_050, 1, 16, &music_like(22_050, 1, 16, 1_000));
    let art = encode(&cover(8, 8, 1), ImageFormat::Png);
    let written = std::fs::write(&job.input, wav)
        .and_then(|()| std::fs::write(&job.images[0].0, art))
        .map_err(|e| MediaError::io(dir, e));
    let out = written.and_then(|()| process(&job));
    (job, out)
}

/// Writes `data` to `dir/name`, clearing `output` and its `.part`.
fn input(dir: &Path, name: &str, data: &[u8], output: &Path) -> std::path::PathBuf {
    let _ = std::fs::remove_file(output);
    let _ = std::fs::remove_file(part_path(output));
    let p = dir.join(name);
    std::fs::write(&p, data).expect("write the input");
    p
}

fn assert_nothing_left(output: &Path) {
    assert!(
        !output.exists(),
        "{} left after a refusal",
        output.display()
    );
    assert!(!part_path(output).exists(), "a .part left after a refusal");
}

/// The `audio` case: the worker's audio path on any bytes. No panic; a
/// refusal has a stable code, is never a PCM mismatch (the encoder is
/// lossless on whatever decodes) and leaves no file; a success leaves a
/// FLAC whose cid and size are the reply's, within `max_flac_bytes`.
pub fn audio_case(dir: &Path, data: &[u8]) {
    let out = dir.join("out.flac");
    let input = input(dir, "in", data, &out);
    // small caps keep each run short; the code paths are the worker's
    let limits = Limits {
        max_input_bytes: 1 << 20,
        max_frames: 48_000 * 10,
        threads: 1,
    };
    match transcode_to_flac(&input, &out, &limits) {
        Ok(t) => {
            let (cid, bytes) = raw_cid_of_file(&out).expect("the FLAC is there");
            assert_eq!((cid, bytes), (t.flac_cid, t.flac_bytes));
            assert!(t.facts.frames > 0 && t.facts.frames <= limits.max_frames);
            let f = &t.facts;
            let most = max_flac_bytes(f.frames, f.channels, f.bits_per_sample);
            assert!(
                t.flac_bytes <= most,
                "{} bytes of FLAC, over {most}",
                t.flac_bytes
            );
        }
        Err(e) => {
            assert!(MediaError::CODES.contains(&e.code()), "{e}");
            assert!(!matches!(e, MediaError::Mismatch(_)), "not lossless: {e}");
            assert_nothing_left(&out);
        }
    }
}

/// The `image` case: the worker's artwork path on any bytes. No panic; a
/// refusal has a stable code and leaves no file; a success is a PNG within
/// the side cap whose cid and size are those reported.
pub fn image_case(dir: &Path, data: &[u8]) {
    let out = dir.join("out.png");
    let input = input(dir, "in.img", data, &out);
    let limits = ImageLimits {
        max_input_bytes: 1 << 20,
        max_side: 1024,
        max_output_bytes: 8 << 20,
    };
    match normalise_to_png(&input, &out, &limits) {
        Ok(img) => {
            let (cid, bytes) = raw_cid_of_file(&out).expect("the PNG is there");
            assert_eq!((cid, bytes), (img.cid, img.bytes));
            assert!(img.width.max(img.height) <= limits.max_side);
            let png = std::fs::read(&out).expect("read the PNG");
            assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
        }
        Err(e) => {
            assert!(MediaError::CODES.contains(&e.code()), "{e}");
            assert_nothing_left(&out);
        }
    }
}

/// The `worker_reply` case: the parent's reading of any stdout, against
/// one real run's files ([`worker_run`]). No panic; a refusal names a
/// known code; an accepted reply names exactly those files' true cids and
/// sizes, whatever else it claims.
pub fn reply_case(run: &(WorkerJob, WorkerOutput), data: &[u8]) {
    let Ok(stdout) = std::str::from_utf8(data) else {
        return;
    };
    let (job, real) = run;
    match read_reply(stdout, job) {
        None | Some(Err(WorkerError::Decoder(_))) => {}
        Some(Err(WorkerError::Refused { code, .. })) => {
            assert!(MediaError::CODES.contains(&code.as_str()), "{code}");
        }
        Some(Ok(o)) => {
            let files = |w: &WorkerOutput| {
                let images = w.images.iter().map(|i| (i.cid, i.bytes));
                (
                    w.audio.flac_cid,
                    w.audio.flac_bytes,
                    images.collect::<Vec<_>>(),
                )
            };
            assert_eq!(files(&o), files(real));
        }
    }
}
