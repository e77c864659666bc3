//! The transcode worker (issue 21): untrusted audio is decoded by the real
//! `stave transcode-worker` child process under resource limits. A refusal
//! comes back with its code; a child that dies (here: an address-space
//! limit too small to start, a file-size limit it passes, or a wall-clock
//! budget overrun) is a `DECODER` failure that leaves no output, and the
//! caller carries on.

use std::path::{Path, PathBuf};
use std::time::Duration;

use stave::media::wav::{music_like, wav_bytes};
use stave::media::worker::{run_worker, WorkerLimits};
use stave::media::{transcode_to_flac, Limits};

fn exe() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_stave"))
}

/// A music-like WAV at `dir/in.wav`.
fn music_wav(dir: &Path, rate: u32, ch: u16, bits: u16, frames: u64) -> PathBuf {
    let input = dir.join("in.wav");
    let samples = music_like(rate, ch, bits, frames);
    std::fs::write(&input, wav_bytes(rate, ch, bits, &samples)).unwrap();
    input
}

#[test]
fn the_worker_transcodes_like_the_library_and_refuses_with_codes() {
    let dir = tempfile::tempdir().unwrap();
    let input = music_wav(dir.path(), 44_100, 2, 16, 50_000);
    let (limits, wl) = (Limits::default(), WorkerLimits::default());
    let mut got = run_worker(exe(), &input, &dir.path().join("w.flac"), &limits, &wl).unwrap();
    let mut want = transcode_to_flac(&input, &dir.path().join("l.flac"), &limits).unwrap();
    // only the timings may differ
    (got.timings, want.timings) = Default::default();
    assert_eq!(got, want);
    assert_eq!(
        std::fs::read(dir.path().join("w.flac")).unwrap(),
        std::fs::read(dir.path().join("l.flac")).unwrap()
    );

    for (bytes, code) in [
        (&b"no audio here, only text"[..], "NOT_AUDIO"),
        (&b"RIFF\x10\0\0\0WAVEjunkjunkjunk"[..], "CORRUPT"),
        (&b""[..], "EMPTY"),
    ] {
        let junk = dir.path().join("junk.wav");
        std::fs::write(&junk, bytes).unwrap();
        let err = run_worker(exe(), &junk, &dir.path().join("j.flac"), &limits, &wl).unwrap_err();
        assert_eq!(err.code(), code, "{err}");
        assert!(!dir.path().join("j.flac").exists());
    }
}

#[test]
fn a_worker_that_dies_or_overruns_is_a_decoder_failure() {
    let dir = tempfile::tempdir().unwrap();
    let input = music_wav(dir.path(), 48_000, 2, 24, 400_000);
    let out = dir.path().join("out.flac");
    let starved = WorkerLimits {
        address_space: 16 << 20,
        ..WorkerLimits::default()
    };
    let err = run_worker(exe(), &input, &out, &Limits::default(), &starved).unwrap_err();
    assert_eq!(err.code(), "DECODER", "{err}");
    assert!(!out.exists());

    let small_files = WorkerLimits {
        file_size: 4096,
        ..WorkerLimits::default()
    };
    let err = run_worker(exe(), &input, &out, &Limits::default(), &small_files).unwrap_err();
    assert_eq!(err.code(), "DECODER", "{err}");
    assert!(!out.exists());
    assert!(!dir.path().join("out.flac.part").exists());

    let hurried = WorkerLimits {
        wall: Duration::from_millis(1),
        ..WorkerLimits::default()
    };
    let err = run_worker(exe(), &input, &out, &Limits::default(), &hurried).unwrap_err();
    assert_eq!(err.code(), "DECODER", "{err}");
    assert!(!out.exists());
    assert!(!dir.path().join("out.flac.part").exists());
}

/// Artwork through the real child: each image becomes the PNG the library
/// makes, at as many threads as the machine has; a decompression bomb is
/// refused with its code and leaves no FLAC and no PNG; the default limits
/// hold with the most encoder threads a worker runs.
#[test]
fn the_worker_normalises_artwork_and_refuses_a_bomb() {
    use image::ImageFormat;
    use stave::media::art_samples::{cover, encode, png_bomb};
    use stave::media::image::{normalise_to_png, ImageLimits};
    use stave::media::worker::{run_job, WorkerJob};
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let input = music_wav(d, 44_100, 2, 16, 60_000);
    std::fs::write(
        d.join("a.in"),
        encode(&cover(200, 120, 4), ImageFormat::Png),
    )
    .unwrap();
    std::fs::write(d.join("b.in"), encode(&cover(90, 90, 6), ImageFormat::Jpeg)).unwrap();
    let job = |images: Vec<(PathBuf, PathBuf)>, threads: usize| WorkerJob {
        input: input.clone(),
        flac: d.join("w.flac"),
        images,
        limits: Limits {
            threads,
            ..Limits::default()
        },
        image_limits: ImageLimits::default(),
    };
    let pair = |n: &str| (d.join(format!("{n}.in")), d.join(format!("{n}.png")));
    let most = stave::media::transcode::MAX_THREADS;
    let out = run_job(
        exe(),
        &job(vec![pair("a"), pair("b")], most),
        &WorkerLimits::default(),
    )
    .unwrap();
    assert_eq!(out.images.len(), 2);
    for (img, n) in out.images.iter().zip(["a", "b"]) {
        let want = normalise_to_png(
            &d.join(format!("{n}.in")),
            &d.join("lib.png"),
            &ImageLimits::default(),
        )
        .unwrap();
        assert_eq!(*img, want, "{n}");
        assert_eq!(
            std::fs::read(d.join(format!("{n}.png"))).unwrap(),
            std::fs::read(d.join("lib.png")).unwrap()
        );
    }
    let one = run_worker(
        exe(),
        &input,
        &d.join("one.flac"),
        &Limits {
            threads: 1,
            ..Limits::default()
        },
        &WorkerLimits::default(),
    )
    .unwrap();
    assert_eq!(
        one.flac_cid, out.audio.flac_cid,
        "the same FLAC at 1 and 16 threads"
    );

    std::fs::write(d.join("bomb.in"), png_bomb(60_000)).unwrap();
    std::fs::remove_file(d.join("w.flac")).unwrap();
    let err = run_job(
        exe(),
        &job(vec![pair("a"), pair("bomb")], 2),
        &WorkerLimits::default(),
    )
    .unwrap_err();
    assert_eq!(err.code(), "IMAGE_TOO_LARGE", "{err}");
    for left in ["w.flac", "a.png", "bomb.png"] {
        assert!(!d.join(left).exists(), "{left} left behind");
    }
}
