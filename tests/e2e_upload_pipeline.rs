//! End-to-end on the real 4-validator localnet (real `stave` and `cometbft`
//! binaries, gRPC over 127.0.0.1): a generated WAV is uploaded with
//! `stave content upload` to node 0, which transcodes it in its worker
//! child, encrypts it, and registers the manifest the CLI checked and
//! signed. Then:
//! - every node's upload record has the cids the job computed;
//! - every member of the replication set holds the blob, hash-verified;
//!   the recovery DEK (unwrapped with the uploader's derived recovery key)
//!   matches `dek_commitment` and decrypts the blob to the FLAC that
//!   `flac_cid` names;
//! - every DEK holder's wrapped DEK unwraps with its own X25519 key to the
//!   same DEK;
//! - the job is `COMPLETE` and no file under node 0's home holds the raw
//!   DEK;
//! - the PNG and JPEG covers are normalised to PNGs whose cids and sizes
//!   every node's record has, and every replica holds them;
//! - a replayed intent, a non-audio file, a decompression bomb as the
//!   cover and a stalled stream are refused with their codes;
//! - a second upload has node 0's `stave` killed as soon as its job is
//!   `ENCRYPTING`; after the supervisor restarts it, `stave content upload
//!   --resume JOB` signs the manifest and the upload is registered, with
//!   its WebP cover stored as the PNG of the same pixels.
//!
//! Binaries and CI behaviour as in `e2e_localnet.rs`. Base port 23000.

mod common;

use std::path::Path;
use std::time::Duration;

use common::localnet::{binaries, Localnet, LocalnetConfig, Proc};
use common::upload::{admit_group, write_wav};
use ed25519_dalek::SigningKey;
use serde_json::Value;
use sha2::{Digest, Sha256};
use stave::client::StaveClient;
use stave::content::client::{recovery_secret, Plan};
use stave::crypto::{stream, wrap, Dek};
use stave::keyfile;
use stave::local::deks::{wrapped_of, DeksExt};
use stave::local::LocalStore;
use stave::proto::content as cpb;
use stave::proto::rights as pb;

const WAIT: Duration = Duration::from_secs(120);
const GROUP: &str = "e2e-label";

async fn group(net: &Localnet, member: &SigningKey) {
    admit_group(net, GROUP, member).await;
}

fn x25519(net: &Localnet, i: usize) -> x25519_dalek::StaticSecret {
    keyfile::load_x25519(&net.stave_home(i).join("config/x25519_key.json")).expect("x25519 key")
}

fn operator(net: &Localnet, i: usize) -> [u8; 32] {
    keyfile::load_ed25519(&net.stave_home(i).join("config/operator_key.json"))
        .expect("operator key")
        .verifying_key()
        .to_bytes()
}

fn hex_field(net: &Localnet, j: &Value, f: &str) -> Vec<u8> {
    j[f].as_str()
        .and_then(|s| hex::decode(s).ok())
        .unwrap_or_else(|| net.fail(&format!("no hex {f} in {j}")))
}

/// The DEK, from the recovery copy on chain, checked against the
/// commitment.
fn recovery_dek(net: &Localnet, u: &pb::Upload, m_rec: &pb::WrappedDek, key: &SigningKey) -> Dek {
    let w = wrap::WrappedDek {
        ephemeral_pubkey: m_rec.ephemeral_pubkey.as_slice().try_into().expect("32"),
        ciphertext: m_rec.wrapped_dek.clone(),
    };
    let dek = wrap::unwrap_dek(&recovery_secret(key), &w, &u.flac_cid)
        .unwrap_or_else(|e| net.fail(&format!("recovery DEK: {e}")));
    assert_eq!(
        stave::crypto::dek_commitment(&dek, &u.encrypted_cid).to_vec(),
        u.dek_commitment,
        "the recovery DEK is the committed one"
    );
    dek
}

/// Node `i`'s upload record of `flac_cid`, once it has one.
async fn upload_on(net: &Localnet, i: usize, flac_cid: &[u8]) -> pb::Upload {
    let c = net.client(i).await;
    net.wait_for(&format!("node{i} to have the upload"), WAIT, || {
        let mut c = c.clone();
        let cid = flac_cid.to_vec();
        async move {
            let r = c
                .rights
                .get_upload(pb::CidRequest {
                    cid,
                    ..Default::default()
                })
                .await
                .map_err(|e| e.to_string())?
                .into_inner();
            r.upload
                .filter(|_| r.found)
                .ok_or_else(|| "not yet".to_string())
        }
    })
    .await
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// Every regular file under `dir`, recursively.
fn files_under(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => files_under(&p, out),
            Ok(t) if t.is_file() => out.push(p),
            _ => {}
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wav_uploaded_through_the_cli_is_transcoded_encrypted_replicated_and_registered() {
    let Some(bins) = binaries("e2e_upload_pipeline") else {
        return;
    };
    let net = Localnet::new(&bins, LocalnetConfig::new(4, 23000));
    net.up();
    for i in 0..net.nodes {
        net.wait_stave_height(i, 1, WAIT).await;
    }
    let keyring = tempfile::tempdir().expect("keyring dir");
    let keyring_dir = keyring.path().to_str().expect("utf-8").to_string();
    let uploader = keyfile::create_ed25519(&keyring.path().join("label.json")).expect("key");
    group(&net, &uploader).await;
    let wav = keyring.path().join("track.wav");
    write_wav(&wav, 8);
    let wav_s = wav.to_str().expect("utf-8");
    // a PNG and a JPEG cover
    use stave::media::art_samples::{cover, encode};
    let png = keyring.path().join("front.png");
    let jpg = keyring.path().join("back.jpg");
    std::fs::write(&png, encode(&cover(600, 600, 1), image::ImageFormat::Png)).expect("png");
    std::fs::write(&jpg, encode(&cover(500, 400, 2), image::ImageFormat::Jpeg)).expect("jpg");
    let (png_s, jpg_s) = (png.to_str().expect("utf-8"), jpg.to_str().expect("utf-8"));

    let url0 = net.grpc_url(0);
    let args = [
        "--output",
        "json",
        "content",
        "upload",
        wav_s,
        "--from",
        "label",
        "--keyring-dir",
        &keyring_dir,
        "--node",
        &url0,
        "--copies",
        "3",
        "--group",
        GROUP,
        "--art",
        png_s,
        "--art",
        jpg_s,
    ];
    let out = net.stave_cmd(&args);
    net.expect_success("stave content upload", &out);
    let j = net.json_of("stave content upload", &out);
    eprintln!("upload: {j}");
    assert!(
        matches!(j["status"].as_str(), Some("SEEDING" | "COMPLETE")),
        "{j}"
    );
    assert_eq!(j["audio"]["sample_rate"], 44_100, "{j}");
    assert_eq!(j["audio"]["channels"], 2, "{j}");
    assert_eq!(j["audio"]["source_codec"], "pcm_s16le", "{j}");
    assert_eq!(j["audio"]["lossless_source"], true, "{j}");
    let flac_cid = hex_field(&net, &j, "flac_cid");
    let enc_cid = hex_field(&net, &j, "encrypted_cid");
    assert_eq!(flac_cid.len(), 36, "a raw CIDv1");
    assert!(stave::media::cid::is_raw_cid(&flac_cid));
    assert!(stave::media::cid::is_raw_cid(&enc_cid));
    let images: Vec<(Vec<u8>, u64)> = j["images"]
        .as_array()
        .unwrap_or_else(|| net.fail(&format!("no images in {j}")))
        .iter()
        .map(|i| {
            (
                hex_field(&net, i, "cid"),
                i["bytes"].as_u64().expect("bytes"),
            )
        })
        .collect();
    assert_eq!(images.len(), 2, "{j}");
    // the PNG cover is lossless: the normalised PNG has its pixels
    let png_cid = stave::media::cid::raw_cid(&{
        let mut b = std::io::Cursor::new(Vec::new());
        image::DynamicImage::ImageRgb8(image::open(&png).expect("png").to_rgb8())
            .write_with_encoder(image::codecs::png::PngEncoder::new_with_quality(
                &mut b,
                image::codecs::png::CompressionType::Default,
                image::codecs::png::FilterType::Adaptive,
            ))
            .expect("encode");
        b.into_inner()
    });
    assert_eq!(images[0].0, png_cid.to_vec(), "the PNG's normalised cid");
    // the node's cids are a function of the input: a fresh run here (one
    // thread, not the node's worker child) makes the same ones
    let fresh = fresh_cids(&wav, &[png.as_path(), jpg.as_path()]);
    let cids: Vec<Vec<u8>> = images.iter().map(|(c, _)| c.clone()).collect();
    assert_eq!(
        (flac_cid.clone(), cids),
        fresh,
        "the same cids from a fresh run"
    );

    // every node has the record
    let mut record = None;
    for i in 0..net.nodes {
        let u = upload_on(&net, i, &flac_cid).await;
        assert_eq!(u.encrypted_cid, enc_cid, "node{i}");
        let on_chain: Vec<(Vec<u8>, u64)> = u
            .image_cids
            .iter()
            .cloned()
            .zip(u.image_sizes.iter().copied())
            .collect();
        assert_eq!(on_chain, images, "node{i} images");
        let facts = u.facts.clone().expect("facts");
        assert_eq!(
            (
                facts.sample_rate,
                facts.channels,
                facts.bits_per_sample,
                facts.frames
            ),
            (44_100, 2, 16, 8 * 44_100),
            "node{i}"
        );
        assert_eq!(facts.source_codec, "pcm_s16le");
        assert_eq!(
            u.uploader_pubkey,
            uploader.verifying_key().to_bytes(),
            "node{i}"
        );
        assert_eq!(u.processing_validator, operator(&net, 0), "node{i}");
        record = Some(u);
    }
    let u = record.expect("a record");
    assert_eq!(u.replication_set.len(), 3);
    assert_eq!(
        u.replication_set[0],
        operator(&net, 0),
        "the processing validator first"
    );

    // the recovery copy and the commitment
    let mut c0 = net.client(0).await;
    let rec = c0
        .rights
        .get_dek(pb::CidRequest {
            cid: flac_cid.clone(),
            ..Default::default()
        })
        .await
        .expect("GetDek")
        .into_inner()
        .dek
        .expect("recovery dek");
    let dek = recovery_dek(&net, &u, &rec, &uploader);

    // replicas hold the blob; it decrypts to the FLAC flac_cid names
    let digest = |cid: &[u8]| cid[4..].to_vec();
    for i in 0..net.nodes {
        let op = operator(&net, i).to_vec();
        if !u.replication_set.contains(&op) {
            continue;
        }
        let path = net
            .stave_home(i)
            .join("content")
            .join(hex::encode(&enc_cid));
        let blob = net
            .wait_for(&format!("node{i} to hold the blob"), WAIT, || {
                let path = path.clone();
                async move { std::fs::read(&path).map_err(|e| e.to_string()) }
            })
            .await;
        assert_eq!(
            Sha256::digest(&blob).to_vec(),
            digest(&enc_cid),
            "node{i} blob"
        );
        let mut flac = Vec::new();
        stream::decrypt(&dek, &blob[..], &mut flac).expect("decrypts");
        assert_eq!(
            Sha256::digest(&flac).to_vec(),
            digest(&flac_cid),
            "node{i} flac"
        );
        assert_eq!(&flac[..4], b"fLaC");
        for (cid, size) in &images {
            let path = net.stave_home(i).join("content").join(hex::encode(cid));
            let img = net
                .wait_for(&format!("node{i} to hold an image"), WAIT, || {
                    let path = path.clone();
                    async move { std::fs::read(&path).map_err(|e| e.to_string()) }
                })
                .await;
            assert_eq!(img.len() as u64, *size, "node{i} image size");
            assert_eq!(Sha256::digest(&img).to_vec(), digest(cid), "node{i} image");
            assert!(img.starts_with(b"\x89PNG"), "node{i}: a PNG");
        }
    }

    // holders' own wrapped DEKs unwrap to the same DEK
    for i in 0..net.nodes {
        let op = operator(&net, i).to_vec();
        if !u.dek_holder_set.contains(&op) {
            continue;
        }
        let local = net.stave_home(i).join("data/local");
        let held = net
            .wait_for(&format!("node{i} to hold its DEK"), WAIT, || {
                let local = local.clone();
                let cid = flac_cid.clone();
                async move {
                    let s = LocalStore::open_read_only(&local).map_err(|e| e.to_string())?;
                    s.dek(&cid)
                        .map_err(|e| e.to_string())?
                        .ok_or_else(|| "not yet".to_string())
                }
            })
            .await;
        let w = wrapped_of(&held).expect("well-formed");
        let mine = wrap::unwrap_dek(&x25519(&net, i), &w, &flac_cid).expect("unwraps");
        assert_eq!(*mine, *dek, "node{i} holds the same DEK");
    }

    // the job completes; nothing under node 0's home holds the raw DEK
    let job = j["job_id"].as_str().expect("job id").to_string();
    let out = net.stave_cmd(&[
        "--output", "json", "content", "status", &job, "--node", &url0,
    ]);
    net.expect_success("stave content status", &out);
    let s = net.json_of("stave content status", &out);
    assert_eq!(s["status"], "COMPLETE", "{s}");
    assert_eq!(s["error_code"], "", "every replica confirmed: {s}");
    for p in [
        "receive",
        "transcode",
        "verify",
        "hash",
        "encrypt",
        "sign",
        "commit",
        "replicate",
    ] {
        assert!(s["phases_ms"][p].is_u64(), "phase {p} in {s}");
    }
    let mut files = Vec::new();
    files_under(&net.stave_home(0), &mut files);
    assert!(files.len() > 10, "node 0's home has files");
    for f in files {
        if let Ok(bytes) = std::fs::read(&f) {
            assert!(!contains(&bytes, &dek[..]), "raw DEK in {}", f.display());
        }
    }

    refusals(&net, &uploader, &wav).await;
    killed_while_encrypting(&net, &uploader, &keyring_dir).await;
}

/// Node 0's `stave` is killed when the job reaches ENCRYPTING; the job
/// resumes after the restart and `--resume` completes it.
async fn killed_while_encrypting(net: &Localnet, key: &SigningKey, keyring_dir: &str) {
    let wav = Path::new(keyring_dir).join("long.wav");
    write_wav(&wav, 240);
    let mut c = StaveClient::connect(&net.grpc_url(0))
        .await
        .expect("connect");
    let me = operator(net, 0);
    let active: Vec<[u8; 32]> = (0..net.nodes).map(|i| operator(net, i)).collect();
    let set = stave::content::client::default_set(&me, &active, &key.verifying_key().to_bytes(), 3);
    let plan = Plan {
        processing_validator: me,
        replication_set: set.clone(),
        dek_holder_set: set,
        group_id: GROUP.into(),
    };
    let art = Path::new(keyring_dir).join("single.webp");
    let img = stave::media::art_samples::cover(320, 320, 9);
    std::fs::write(
        &art,
        stave::media::art_samples::encode(&img, image::ImageFormat::WebP),
    )
    .expect("webp");
    let r =
        stave::content::client::send(&mut c, key, &plan, &wav, std::slice::from_ref(&art), |_| {})
            .await
            .expect("received");
    let old = (net.pid(0, Proc::Stave), net.pid(0, Proc::Cometbft));
    let s = stave::content::client::follow(&mut c, &r.job_id, |_| {}, |s| s.status == "ENCRYPTING")
        .await
        .expect("status");
    assert_eq!(s.status, "ENCRYPTING", "{s:?}");
    net.kill(0, Proc::Stave);
    eprintln!(
        "killed node 0's stave in ENCRYPTING (manifest ready: {})",
        s.manifest.is_some()
    );
    net.wait_pair_restarted(0, old, WAIT).await;
    net.wait_stave_height(0, 1, WAIT).await;
    let job = hex::encode(&r.job_id);
    let url0 = net.grpc_url(0);
    let out = net.stave_cmd(&[
        "--output",
        "json",
        "content",
        "upload",
        "--resume",
        &job,
        "--from",
        "label",
        "--keyring-dir",
        keyring_dir,
        "--node",
        &url0,
    ]);
    net.expect_success("stave content upload --resume", &out);
    let j = net.json_of("stave content upload --resume", &out);
    assert!(
        matches!(j["status"].as_str(), Some("SEEDING" | "COMPLETE")),
        "{j}"
    );
    let flac_cid = hex_field(net, &j, "flac_cid");
    let u = upload_on(net, 1, &flac_cid).await;
    assert_eq!(u.encrypted_cid, hex_field(net, &j, "encrypted_cid"));
    let blob = net
        .stave_home(0)
        .join("content")
        .join(hex::encode(&u.encrypted_cid));
    assert!(blob.exists(), "node 0 holds the registered blob");
    // the WebP cover, normalised to the PNG of its (lossless) pixels
    assert_eq!(u.image_cids.len(), 1, "{u:?}");
    let png = net
        .stave_home(0)
        .join("content")
        .join(hex::encode(&u.image_cids[0]));
    let got = image::ImageReader::open(&png)
        .and_then(|r| r.with_guessed_format())
        .expect("the stored PNG")
        .decode()
        .expect("decodes")
        .to_rgb8();
    assert_eq!(got, img, "the cover's pixels");
    // the resumed job's cids are what a fresh run of the worker's code makes
    let fresh = fresh_cids(&wav, &[art.as_path()]);
    assert_eq!((flac_cid, u.image_cids), fresh, "the resumed job's cids");
}

/// The flac cid and image cids that a fresh run of the worker's code (in
/// this process, one encoder thread) makes of these inputs.
fn fresh_cids(wav: &Path, art: &[&Path]) -> (Vec<u8>, Vec<Vec<u8>>) {
    let dir = tempfile::tempdir().expect("dir");
    let limits = stave::media::Limits {
        threads: 1,
        ..Default::default()
    };
    let t = stave::media::transcode_to_flac(wav, &dir.path().join("t.flac"), &limits)
        .expect("transcode");
    let images = art
        .iter()
        .map(|a| {
            let out = dir.path().join("a.png");
            let _ = std::fs::remove_file(&out);
            let limits = stave::media::image::ImageLimits::default();
            let n = stave::media::image::normalise_to_png(a, &out, &limits).expect("normalise");
            n.cid.to_vec()
        })
        .collect();
    (t.flac_cid.to_vec(), images)
}

/// A replayed intent, a file that is not audio, a decompression bomb as
/// the cover, and a stalled stream.
async fn refusals(net: &Localnet, key: &SigningKey, wav: &Path) {
    let mut c = StaveClient::connect(&net.grpc_url(0))
        .await
        .expect("connect");
    let me = operator(net, 0);
    let plan = Plan {
        processing_validator: me,
        replication_set: vec![me],
        dek_holder_set: vec![me],
        group_id: GROUP.into(),
    };
    let node = c
        .content
        .node(cpb::NodeRequest {})
        .await
        .expect("Node")
        .into_inner();
    let bytes = std::fs::read(wav).expect("wav");
    let intent = cpb::UploadIntent {
        chain_id: node.chain_id,
        timestamp_ms: stave::content::now_ms(),
        nonce: vec![7; 16],
        processing_validator: me.to_vec(),
        replication_set: vec![me.to_vec()],
        dek_holder_set: vec![me.to_vec()],
        recovery_x25519: x25519_dalek::PublicKey::from(&recovery_secret(key))
            .to_bytes()
            .to_vec(),
        audio_bytes: bytes.len() as u64,
        group_id: GROUP.into(),
        ..Default::default()
    };
    // an ungrouped upload is refused by default
    let mut ungrouped = intent.clone();
    ungrouped.group_id.clear();
    let e = c
        .content
        .upload(tokio_stream::iter(vec![cpb::UploadRequest {
            part: Some(cpb::upload_request::Part::Intent(
                stave::content::sign_intent(key, ungrouped),
            )),
        }]))
        .await
        .expect_err("ungrouped");
    assert!(e.message().starts_with("GROUP_REQUIRED:"), "{e:?}");
    let signed = stave::content::sign_intent(key, intent);
    let msgs = |audio: Vec<u8>| {
        let intent = cpb::UploadRequest {
            part: Some(cpb::upload_request::Part::Intent(signed.clone())),
        };
        let chunks = audio.chunks(256 * 1024).map(|c| cpb::UploadRequest {
            part: Some(cpb::upload_request::Part::Audio(c.to_vec())),
        });
        std::iter::once(intent).chain(chunks).collect::<Vec<_>>()
    };
    let first = c
        .content
        .upload(tokio_stream::iter(msgs(bytes.clone())))
        .await
        .expect("the first use of the intent");
    let again = c
        .content
        .upload(tokio_stream::iter(msgs(bytes.clone())))
        .await
        .expect_err("a replay");
    assert!(again.message().starts_with("REPLAYED:"), "{again:?}");

    // not audio, and a decompression bomb as the cover: accepted, then
    // FAILED with their codes and their scratch gone
    let junk = keyring_file(wav, "junk.wav", &vec![0x42u8; 50_000]);
    let bomb = keyring_file(
        wav,
        "bomb.png",
        &stave::media::art_samples::png_bomb(60_000),
    );
    for (audio, art, code) in [
        (junk.as_path(), vec![], "NOT_AUDIO"),
        (wav, vec![bomb], "IMAGE_TOO_LARGE"),
    ] {
        let r = stave::content::client::send(&mut c, key, &plan, audio, &art, |_| {})
            .await
            .expect("received");
        let s = stave::content::client::follow(&mut c, &r.job_id, |_| {}, |_| false)
            .await
            .expect("status");
        assert_eq!(
            (s.status.as_str(), s.error_code.as_str()),
            ("FAILED", code),
            "{s:?}"
        );
        let scratch = net
            .stave_home(0)
            .join("content/.processing")
            .join(hex::encode(&r.job_id));
        assert!(
            !scratch.exists(),
            "no scratch left at {}",
            scratch.display()
        );
    }

    // a stream that goes silent after the intent: IDLE (30 s default)
    let mut intent = signed.intent.clone().expect("intent");
    intent.nonce = vec![8; 16];
    let stalled = stave::content::sign_intent(key, intent);
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    tx.send(cpb::UploadRequest {
        part: Some(cpb::upload_request::Part::Intent(stalled)),
    })
    .await
    .expect("send");
    let e = c
        .content
        .upload(tokio_stream::wrappers::ReceiverStream::new(rx))
        .await
        .expect_err("idle");
    drop(tx);
    assert!(e.message().starts_with("IDLE:"), "{e:?}");
    let _ = first;

    // refused at the intent, before anything is stored
    let base = signed.intent.clone().expect("intent");
    let stranger = SigningKey::generate(&mut rand::rngs::OsRng);
    let other = operator(net, 1).to_vec();
    type Edit = Box<dyn Fn(&mut cpb::UploadIntent)>;
    let cases: Vec<(&str, &SigningKey, Edit)> = vec![
        ("NOT_MEMBER", &stranger, Box::new(|_| {})),
        ("TOO_LARGE", key, Box::new(|i| i.audio_bytes = 3 << 30)),
        ("TOO_LARGE", key, Box::new(|i| i.art_bytes = vec![64 << 20])),
        ("EMPTY", key, Box::new(|i| i.art_bytes = vec![0])),
        (
            "NOT_PROCESSOR",
            key,
            Box::new(move |i| i.processing_validator = other.clone()),
        ),
        (
            "INACTIVE_MEMBER",
            key,
            Box::new(|i| i.replication_set.push(vec![9; 32])),
        ),
        (
            "STALE_INTENT",
            key,
            Box::new(|i| i.timestamp_ms -= 3_600_000),
        ),
    ];
    for (n, (code, signer, edit)) in cases.into_iter().enumerate() {
        let mut i = base.clone();
        i.nonce = vec![20 + n as u8; 16];
        edit(&mut i);
        let one = cpb::UploadRequest {
            part: Some(cpb::upload_request::Part::Intent(
                stave::content::sign_intent(signer, i),
            )),
        };
        let e = c
            .content
            .upload(tokio_stream::iter(vec![one]))
            .await
            .expect_err(code);
        assert!(
            e.message().starts_with(&format!("{code}:")),
            "{code}: {e:?}"
        );
    }

    // fewer bytes than declared, and artwork before the audio is complete
    for (n, (code, parts)) in [
        (
            "SIZE_MISMATCH",
            vec![cpb::upload_request::Part::Audio(vec![1; 100])],
        ),
        (
            "PROTOCOL",
            vec![cpb::upload_request::Part::Art(vec![1; 100])],
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let mut i = base.clone();
        i.nonce = vec![40 + n as u8; 16];
        i.art_bytes = vec![100];
        let first = cpb::upload_request::Part::Intent(stave::content::sign_intent(key, i));
        let msgs = std::iter::once(first)
            .chain(parts)
            .map(|p| cpb::UploadRequest { part: Some(p) })
            .collect::<Vec<_>>();
        let e = c
            .content
            .upload(tokio_stream::iter(msgs))
            .await
            .expect_err(code);
        assert!(
            e.message().starts_with(&format!("{code}:")),
            "{code}: {e:?}"
        );
    }
}

fn keyring_file(beside: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let p = beside.with_file_name(name);
    std::fs::write(&p, bytes).expect("write");
    p
}
