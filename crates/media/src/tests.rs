use std::path::{Path, PathBuf};

use proptest::prelude::*;

use super::cid::{cid_string, is_raw_cid, parse_cid, raw_cid, RAW_CID_PREFIX};
use super::decode::PcmSource;
use super::wav::{music_like, wav_bytes};
use super::*;

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn decode_all(path: &Path) -> (PcmSource, Vec<i32>) {
    let mut src = PcmSource::open(path, true).unwrap();
    let (mut all, mut buf) = (Vec::new(), Vec::new());
    while src.next_chunk(&mut buf).unwrap() {
        all.extend_from_slice(&buf);
    }
    (src, all)
}

fn refusal(bytes: &[u8], limits: &Limits) -> &'static str {
    let dir = tempfile::tempdir().unwrap();
    let input = write(dir.path(), "in.wav", bytes);
    let out = dir.path().join("out.flac");
    let err = transcode_to_flac(&input, &out, limits).unwrap_err();
    assert!(!out.exists(), "{err}: output left behind");
    assert!(
        !dir.path().join("out.flac.part").exists(),
        "{err}: .part left behind"
    );
    err.code()
}

#[test]
fn cids_match_published_vectors() {
    // cid 0.11.3, tests/lib.rs and README.md: CIDv1, raw, sha2-256.
    for (input, want) in [
        (
            &b"foo"[..],
            "bafkreibme22gw2h7y2h7tg2fhqotaqjucnbc24deqo72b6mkl2egezxhvy",
        ),
        (
            &b"beep boop"[..],
            "bafkreieq5jui4j25lacwomsqgjeswwl3y5zcdrresptwgmfylxo2depppq",
        ),
    ] {
        let raw = raw_cid(input);
        assert_eq!(raw[..4], RAW_CID_PREFIX);
        assert!(is_raw_cid(&raw));
        assert_eq!(cid_string(&raw), want);
        assert_eq!(parse_cid(want).unwrap(), raw);
        let c = ::cid::Cid::try_from(want).unwrap();
        assert_eq!(c.to_bytes(), raw.to_vec());
    }
}

#[test]
fn only_the_canonical_raw_sha256_form_parses() {
    let raw = raw_cid(b"foo");
    let mh = ::cid::multihash::Multihash::<64>::wrap(0x12, &raw[4..]).unwrap();
    let dag_pb = ::cid::Cid::new_v1(0x70, mh).to_string();
    let upper = cid_string(&raw).to_uppercase();
    let base58 = ::cid::Cid::new_v1(0x55, mh)
        .to_string_of_base(multibase_base58())
        .unwrap();
    for bad in [dag_pb.as_str(), upper.as_str(), base58.as_str(), "bafk", ""] {
        assert!(parse_cid(bad).is_err(), "{bad} parsed");
    }
    assert!(!is_raw_cid(&raw[..35]));
    let mut other = raw;
    other[1] = 0x70;
    assert!(!is_raw_cid(&other));
}

fn multibase_base58() -> ::cid::multibase::Base {
    ::cid::multibase::Base::Base58Btc
}

fn round_trip(rate: u32, channels: u16, bits: u16, samples: &[i32]) {
    let dir = tempfile::tempdir().unwrap();
    let input = write(
        dir.path(),
        "in.wav",
        &wav_bytes(rate, channels, bits, samples),
    );
    let out = dir.path().join("out.flac");
    let t = transcode_to_flac(&input, &out, &Limits::default()).unwrap();
    assert_eq!(t.facts.sample_rate, rate);
    assert_eq!(t.facts.channels, u32::from(channels));
    assert_eq!(t.facts.bits_per_sample, u32::from(bits));
    assert_eq!(
        t.facts.frames,
        (samples.len() / usize::from(channels)) as u64
    );
    assert!(t.facts.lossless_source);
    let (mut src, pcm) = decode_all(&out);
    assert_eq!(src.codec, "flac");
    assert_eq!(pcm, samples, "{rate} Hz, {channels} ch, {bits} bits");
    assert_eq!(src.finish(), Some(true));
    assert_eq!(t.flac_cid, raw_cid(&std::fs::read(&out).unwrap()));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn flac_round_trip_is_lossless(
        rate in prop::sample::select(vec![8_000u32, 11_025, 22_050, 44_100, 48_000, 88_200, 96_000]),
        channels in 1u16..=2,
        bits in prop::sample::select(vec![8u16, 16, 24]),
        frames in 1usize..10_000,
        seed in any::<u64>(),
    ) {
        let max = 1i64 << (bits - 1);
        let mut x = seed | 1;
        let samples: Vec<i32> = (0..frames * usize::from(channels))
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                ((x % (2 * max as u64)) as i64 - max) as i32
            })
            .collect();
        round_trip(rate, channels, bits, &samples);
    }
}

#[test]
fn extremes_and_silence_round_trip() {
    for bits in [8u16, 16, 24] {
        let max = (1i32 << (bits - 1)) - 1;
        let min = -(1i32 << (bits - 1));
        let samples: Vec<i32> = (0..9000).map(|i| [min, max, 0, -1][i % 4]).collect();
        round_trip(44_100, 2, bits, &samples);
        round_trip(48_000, 1, bits, &vec![0; 4096 * 3]);
    }
}

#[test]
fn music_like_signal_compresses_to_at_most_70_percent() {
    let samples = music_like(44_100, 2, 16, 44_100 * 20);
    let dir = tempfile::tempdir().unwrap();
    let input = write(dir.path(), "in.wav", &wav_bytes(44_100, 2, 16, &samples));
    let out = dir.path().join("out.flac");
    let t = transcode_to_flac(&input, &out, &Limits::default()).unwrap();
    let pcm_bytes = samples.len() as u64 * 2;
    assert!(
        t.flac_bytes * 100 <= pcm_bytes * 70,
        "{} of {pcm_bytes} PCM bytes",
        t.flac_bytes
    );
}

#[test]
fn the_same_input_gives_the_same_flac_cid() {
    let samples = music_like(48_000, 2, 24, 30_000);
    let dir = tempfile::tempdir().unwrap();
    let input = write(dir.path(), "in.wav", &wav_bytes(48_000, 2, 24, &samples));
    let mut a = transcode_to_flac(&input, &dir.path().join("a.flac"), &Limits::default()).unwrap();
    let mut b = transcode_to_flac(&input, &dir.path().join("b.flac"), &Limits::default()).unwrap();
    // only the timings may differ
    (a.timings, b.timings) = Default::default();
    assert_eq!(a, b);
    // A FLAC source transcodes to the same PCM, and says it came from FLAC.
    let c = transcode_to_flac(
        &dir.path().join("a.flac"),
        &dir.path().join("c.flac"),
        &Limits::default(),
    )
    .unwrap();
    assert_eq!(c.pcm_sha256, a.pcm_sha256);
    assert_eq!(c.facts.source_codec, "flac");
}

/// The FLAC of `input` made with `threads` encoder threads, and its facts.
fn flac_with_threads(input: &Path, threads: usize) -> (Vec<u8>, Transcoded) {
    let out = input.with_extension(format!("t{threads}.flac"));
    let limits = Limits {
        threads,
        ..Limits::default()
    };
    let t = transcode_to_flac(input, &out, &limits).unwrap();
    (std::fs::read(&out).unwrap(), t)
}

#[test]
fn the_flac_is_the_same_for_any_thread_count() {
    let samples = music_like(44_100, 2, 16, 100_000);
    let dir = tempfile::tempdir().unwrap();
    let input = write(dir.path(), "in.wav", &wav_bytes(44_100, 2, 16, &samples));
    let one = flac_with_threads(&input, 1).0;
    for n in [2, 3, 7] {
        assert!(flac_with_threads(&input, n).0 == one, "{n} threads");
    }
}

#[test]
fn the_flac_passes_the_reference_decoder() {
    let Some(flac) = reference_flac() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for (rate, ch, bits, frames) in [
        (44_100u32, 2u16, 16u16, 100_000u64),
        (96_000, 1, 24, 5_000),
        (8_000, 2, 8, 4_097),
        (48_000, 2, 16, 1),
        (48_000, 1, 24, 100),
    ] {
        let samples = music_like(rate, ch, bits, frames);
        let input = write(dir.path(), "in.wav", &wav_bytes(rate, ch, bits, &samples));
        let out = dir.path().join("out.flac");
        transcode_to_flac(&input, &out, &Limits::default()).unwrap();
        let o = std::process::Command::new(&flac)
            .arg("-t")
            .arg("-s")
            .arg(&out)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "flac -t: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        std::fs::remove_file(&out).unwrap();
    }
}

/// Debian's `flac`, or `None` outside CI when it is missing.
fn reference_flac() -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("flac"))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        assert!(
            std::env::var("CI").is_err(),
            "`flac` is not installed (apt-get install flac)"
        );
        eprintln!("skipping: `flac` is not installed");
    }
    found
}

#[test]
fn bad_inputs_are_refused_with_their_own_code_and_leave_nothing() {
    let good = wav_bytes(44_100, 2, 16, &music_like(44_100, 2, 16, 20_000));
    let limits = Limits::default();
    assert_eq!(refusal(b"", &limits), "EMPTY");
    assert_eq!(
        refusal(b"this is not audio, just some text\n", &limits),
        "NOT_AUDIO"
    );
    // Cut in the middle of the data chunk: the header declares more.
    assert_eq!(refusal(&good[..good.len() / 2], &limits), "CORRUPT");
    // A data chunk size larger than the file.
    let mut lying = good.clone();
    lying[40..44].copy_from_slice(&(u32::MAX - 100).to_le_bytes());
    assert_eq!(refusal(&lying, &limits), "CORRUPT");
    // Only the header.
    assert_eq!(refusal(&good[..44], &limits), "CORRUPT");
    let tight = Limits {
        max_input_bytes: 1000,
        ..limits
    };
    assert_eq!(refusal(&good, &tight), "TOO_LARGE");
    let short = Limits {
        max_frames: 10_000,
        ..limits
    };
    assert_eq!(refusal(&good, &short), "TOO_LONG");
    let hi_res = wav_bytes(192_000, 2, 16, &[0; 2000]);
    assert_eq!(refusal(&hi_res, &limits), "UNSUPPORTED");
    let mut zero_frames = wav_bytes(44_100, 2, 16, &[]);
    zero_frames.truncate(44);
    assert_eq!(refusal(&zero_frames, &limits), "NO_SAMPLES");
}

/// `bytes`, written to `dir/name`, transcode to a result or a refusal,
/// never a panic; a refusal leaves no FLAC and no `.part`.
fn never_panics_and_a_refusal_leaves_nothing(
    dir: &Path,
    name: &str,
    bytes: &[u8],
) -> Result<(), TestCaseError> {
    let input = write(dir, name, bytes);
    let out = dir.join("out.flac");
    let r = std::panic::catch_unwind(|| transcode_to_flac(&input, &out, &Limits::default()));
    prop_assert!(r.is_ok(), "panicked");
    if let Ok(Err(_)) = r {
        prop_assert!(!out.exists());
        prop_assert!(!dir.join("out.flac.part").exists());
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]
    /// The other decoders the worker reaches (MP3, AAC in ADTS and MP4,
    /// Ogg Vorbis, AIFF): arbitrary bytes behind each one's signature are
    /// a refusal, never a panic, and leave nothing behind.
    #[test]
    fn arbitrary_bytes_behind_each_signature_never_panic(
        magic in 0usize..7,
        body in prop::collection::vec(any::<u8>(), 0..4096),
    ) {
        let heads: [&[u8]; 7] = [
            b"ID3\x04\x00\x00\x00\x00\x00\x00",
            b"\xff\xfb\x90\x64",
            b"\xff\xf1\x50\x80",
            b"\x00\x00\x00\x18ftypM4A \x00\x00\x00\x00",
            b"OggS\x00\x02",
            b"FORM\x00\x00\x10\x00AIFFCOMM",
            b"fLaC\x00\x00\x00\x22",
        ];
        let bytes = [heads[magic], body.as_slice()].concat();
        let dir = tempfile::tempdir().unwrap();
        never_panics_and_a_refusal_leaves_nothing(dir.path(), "in", &bytes)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// Mutated WAV and FLAC files: a result or a refusal, never a panic,
    /// and a refusal leaves nothing behind.
    #[test]
    fn mutated_inputs_never_panic(
        flac_source in any::<bool>(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..12),
        cut in any::<prop::sample::Index>(),
        do_cut in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let wav = wav_bytes(22_050, 2, 16, &music_like(22_050, 2, 16, 9_000));
        let mut bytes = if flac_source {
            let input = write(dir.path(), "src.wav", &wav);
            let out = dir.path().join("src.flac");
            transcode_to_flac(&input, &out, &Limits::default()).unwrap();
            std::fs::read(&out).unwrap()
        } else {
            wav
        };
        for (at, b) in edits {
            let i = at.index(bytes.len());
            bytes[i] = b;
        }
        if do_cut {
            bytes.truncate(cut.index(bytes.len()));
        }
        let name = if flac_source { "in.flac" } else { "in.wav" };
        never_panics_and_a_refusal_leaves_nothing(dir.path(), name, &bytes)?;
    }
}

/// A WAV of 32-bit floats (format tag 3).
fn float_wav(rate: u32, channels: u16, samples: &[f32]) -> Vec<u8> {
    let data = (samples.len() * 4) as u32;
    let mut out = b"RIFF".to_vec();
    out.extend_from_slice(&(36 + data).to_le_bytes());
    out.extend_from_slice(b"WAVEfmt ");
    out.extend_from_slice(&16u32.to_le_bytes());
    out.extend_from_slice(&3u16.to_le_bytes());
    out.extend_from_slice(&channels.to_le_bytes());
    out.extend_from_slice(&rate.to_le_bytes());
    out.extend_from_slice(&(rate * 4 * u32::from(channels)).to_le_bytes());
    out.extend_from_slice(&(4 * channels).to_le_bytes());
    out.extend_from_slice(&32u16.to_le_bytes());
    out.extend_from_slice(b"data");
    out.extend_from_slice(&data.to_le_bytes());
    for s in samples {
        out.extend_from_slice(&s.to_le_bytes());
    }
    out
}

#[test]
fn float_pcm_becomes_24_bit_and_is_not_called_lossless() {
    let dir = tempfile::tempdir().unwrap();
    let floats: Vec<f32> = [0.0f32, 0.5, -0.5, 0.25].repeat(3000);
    let input = write(dir.path(), "in.wav", &float_wav(48_000, 2, &floats));
    let out = dir.path().join("out.flac");
    let t = transcode_to_flac(&input, &out, &Limits::default()).unwrap();
    assert_eq!(t.facts.bits_per_sample, 24);
    assert!(!t.facts.lossless_source);
    assert!(
        t.facts.source_codec.starts_with("pcm_f"),
        "{}",
        t.facts.source_codec
    );
    let (_, pcm) = decode_all(&out);
    let want: Vec<i32> = [0, 1 << 22, -(1 << 22), 1 << 21].repeat(3000);
    assert_eq!(pcm, want);
}

/// Found by the `audio` fuzz target: for this 4.5 KB, 24-bit WAV flacenc
/// takes a fixed-predictor coding whose Rice cost wrapped, 56 MB for 1,500
/// samples (a frame past STREAMINFO's 24-bit frame size, so the FLAC does
/// not decode back). The block is now coded verbatim: a small FLAC that
/// verifies.
#[test]
fn a_block_prediction_would_bloat_is_coded_verbatim() {
    let wav = include_bytes!("../testdata/prediction-frame-larger-than-verbatim.bin");
    let dir = tempfile::tempdir().unwrap();
    let input = write(dir.path(), "in", wav);
    let out = dir.path().join("out.flac");
    let t = transcode_to_flac(&input, &out, &Limits::default()).unwrap();
    assert_eq!((t.facts.frames, t.facts.bits_per_sample), (1_500, 24));
    // the samples verbatim (3 bytes each), a frame header and the STREAMINFO
    assert!(t.flac_bytes <= 1_500 * 3 + 64, "{} bytes", t.flac_bytes);
}

/// The fallback is per block and exact, so a stream of blocks that need
/// it (that input's samples over and over) is the same FLAC for any
/// thread count, and within its bound.
#[test]
fn blocks_coded_verbatim_are_the_same_for_any_thread_count() {
    let wav = include_bytes!("../testdata/prediction-frame-larger-than-verbatim.bin");
    let dir = tempfile::tempdir().unwrap();
    let mut src = PcmSource::open(&write(dir.path(), "one", wav), false).unwrap();
    let (mut buf, mut pcm) = (Vec::new(), Vec::new());
    while src.next_chunk(&mut buf).unwrap() {
        pcm.extend_from_slice(&buf);
    }
    let looped: Vec<i32> = pcm.iter().copied().cycle().take(3 * 4096 + 700).collect();
    let input = write(dir.path(), "in.wav", &wav_bytes(48_000, 1, 24, &looped));
    let (one, t) = flac_with_threads(&input, 1);
    assert!(t.flac_bytes <= flac::max_flac_bytes(looped.len() as u64, 1, 24));
    for n in [2, 3] {
        assert!(flac_with_threads(&input, n).0 == one, "{n} threads");
    }
}

/// Loud 24-bit PCM: mostly under 2^20, with bursts near full scale, the
/// shape that makes flacenc's Rice costs wrap.
fn loud_24_bit() -> impl Strategy<Value = Vec<i32>> {
    let sample = prop_oneof![
        2 => -(1i32 << 20)..(1i32 << 20),
        1 => prop_oneof![(1i32 << 23) - 4096..(1i32 << 23), -(1i32 << 23)..-(1i32 << 23) + 4096],
    ];
    prop::collection::vec(sample, 2..9_000)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]
    /// Whatever the samples, each frame is within `max_frame_bits` (the
    /// short last block included): the FLAC of any PCM is never much larger
    /// than the PCM, and it verifies.
    #[test]
    fn no_flac_is_larger_than_its_verbatim_bound(
        channels in 1u16..=2,
        samples in loud_24_bit(),
    ) {
        let whole = samples.len() / usize::from(channels) * usize::from(channels);
        let wav = wav_bytes(48_000, channels, 24, &samples[..whole.max(2)]);
        let dir = tempfile::tempdir().unwrap();
        let input = write(dir.path(), "in.wav", &wav);
        let out = dir.path().join("out.flac");
        let t = transcode_to_flac(&input, &out, &Limits::default()).unwrap();
        let most = flac::max_flac_bytes(t.facts.frames, channels.into(), 24);
        prop_assert!(t.flac_bytes <= most, "{} > {most}", t.flac_bytes);
    }
}
