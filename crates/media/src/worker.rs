//! The transcode worker: untrusted audio is decoded in a child process,
//! `stave transcode-worker`, never in the node.
//!
//! The child first lowers its own resource limits (address space, CPU
//! seconds, file size), then transcodes and prints one JSON line: the
//! result, or the refusal with its [`MediaError::code`]. The parent waits
//! at most a wall-clock budget. A child that crashes, is killed by a limit,
//! overruns the budget or prints nothing usable is a `DECODER` failure: the
//! node itself is untouched. The limits contain crashes and resource use
//! only; the child is not a sandbox (same user, same files), so it decodes
//! with the node's privileges.
//!
//! The parent does not take the reply on trust: it hashes the FLAC itself
//! and compares the cid and length, and a refusal code it does not know
//! becomes `DECODER`.

use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use rustix::process::{
    getrlimit, set_parent_process_death_signal, setrlimit, Resource, Rlimit, Signal,
};
use serde::{Deserialize, Serialize};

use super::cid::{raw_cid_of_file, RawCid};
use super::flac::check_format;
use super::image::{normalise_to_png, ImageLimits, NormalisedImage};
use super::transcode::Timings;
use super::{transcode_to_flac, AudioFacts, Limits, MediaError, Transcoded};

/// The child's resource limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkerLimits {
    /// RLIMIT_AS, bytes of address space.
    pub address_space: u64,
    /// RLIMIT_CPU, seconds of CPU time.
    pub cpu_secs: u64,
    /// RLIMIT_FSIZE, bytes of the largest file the child may write.
    pub file_size: u64,
    /// Wall-clock time the parent waits before it kills the child.
    pub wall: Duration,
}

impl Default for WorkerLimits {
    fn default() -> Self {
        WorkerLimits {
            address_space: 1 << 30,
            cpu_secs: 300,
            file_size: 4 << 30,
            wall: Duration::from_secs(600),
        }
    }
}

/// Why a worker run produced no FLAC.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    /// The input was refused (a [`super::MediaError`] code and its message).
    #[error("{code}: {message}")]
    Refused { code: String, message: String },
    /// The child crashed, hit a limit, overran its time or answered
    /// nonsense.
    #[error("DECODER: the transcode worker failed: {0}")]
    Decoder(String),
}

impl WorkerError {
    /// The stable code: the refusal's, or `DECODER`.
    pub fn code(&self) -> &str {
        match self {
            WorkerError::Refused { code, .. } => code,
            WorkerError::Decoder(_) => "DECODER",
        }
    }
}

/// The child's one line of output.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Reply {
    Done {
        facts: AudioFacts,
        flac_cid: String,
        flac_bytes: u64,
        pcm_sha256: String,
        #[serde(default)]
        timings: Timings,
        #[serde(default)]
        images: Vec<ImageReply>,
    },
    Refused {
        code: String,
        message: String,
    },
}

/// One normalised image in the reply.
#[derive(Debug, Serialize, Deserialize)]
struct ImageReply {
    cid: String,
    bytes: u64,
    width: u32,
    height: u32,
    source_format: String,
}

impl From<&NormalisedImage> for ImageReply {
    fn from(i: &NormalisedImage) -> Self {
        ImageReply {
            cid: hex::encode(i.cid),
            bytes: i.bytes,
            width: i.width,
            height: i.height,
            source_format: i.source_format.clone(),
        }
    }
}

/// What one worker run made: the FLAC and the PNGs, in the order asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerOutput {
    pub audio: Transcoded,
    pub images: Vec<NormalisedImage>,
}

/// One worker run: the audio, and each image with where its PNG goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerJob {
    pub input: PathBuf,
    pub flac: PathBuf,
    pub images: Vec<(PathBuf, PathBuf)>,
    pub limits: Limits,
    pub image_limits: ImageLimits,
}

impl From<&WorkerOutput> for Reply {
    fn from(o: &WorkerOutput) -> Self {
        let t = &o.audio;
        Reply::Done {
            facts: t.facts.clone(),
            flac_cid: hex::encode(t.flac_cid),
            flac_bytes: t.flac_bytes,
            pcm_sha256: hex::encode(t.pcm_sha256),
            timings: t.timings,
            images: o.images.iter().map(ImageReply::from).collect(),
        }
    }
}

fn hex_array<const N: usize>(s: &str) -> Option<[u8; N]> {
    hex::decode(s).ok()?.try_into().ok()
}

impl Reply {
    fn into_result(self) -> Result<WorkerOutput, WorkerError> {
        match self {
            Reply::Refused { code, message } if MediaError::CODES.contains(&code.as_str()) => {
                Err(WorkerError::Refused { code, message })
            }
            Reply::Refused { code, message } => Err(WorkerError::Decoder(format!(
                "unknown refusal code {code:?}: {message:?}"
            ))),
            Reply::Done {
                facts,
                flac_cid,
                flac_bytes,
                pcm_sha256,
                timings,
                images,
            } => {
                let bad = || WorkerError::Decoder("a malformed digest in the reply".into());
                let flac_cid: RawCid = hex_array(&flac_cid).ok_or_else(bad)?;
                let pcm_sha256 = hex_array(&pcm_sha256).ok_or_else(bad)?;
                let images = images
                    .into_iter()
                    .map(|i| {
                        Ok(NormalisedImage {
                            cid: hex_array(&i.cid).ok_or_else(bad)?,
                            bytes: i.bytes,
                            width: i.width,
                            height: i.height,
                            source_format: i.source_format,
                        })
                    })
                    .collect::<Result<Vec<_>, WorkerError>>()?;
                let audio = Transcoded {
                    facts,
                    flac_cid,
                    flac_bytes,
                    pcm_sha256,
                    timings,
                };
                Ok(WorkerOutput { audio, images })
            }
        }
    }
}

/// Lowers a limit to `value`, or to the hard limit already in force if that
/// is lower (raising it would need privileges).
fn limit(resource: Resource, value: u64) -> Result<(), String> {
    let value = getrlimit(resource)
        .maximum
        .map_or(value, |hard| hard.min(value));
    let l = Rlimit {
        current: Some(value),
        maximum: Some(value),
    };
    setrlimit(resource, l).map_err(|e| format!("setrlimit {resource:?} {value}: {e}"))
}

/// The child's nice value (the node runs at 0).
pub const WORKER_NICE: i32 = 10;

/// The child's first step: lowers its own priority and its limits, then replaces itself with
/// `exe` and the same arguments plus `--limited`, which start under them.
/// Returns only on failure.
pub fn reexec_limited(wl: &WorkerLimits) -> ExitCode {
    // Below the node in the scheduler: transcoding never starves consensus.
    let _ = rustix::process::setpriority_process(None, WORKER_NICE);
    // No core dumps: they would hold the uploader's audio.
    let applied = limit(Resource::Core, 0)
        .and_then(|()| limit(Resource::As, wl.address_space))
        .and_then(|()| limit(Resource::Cpu, wl.cpu_secs))
        .and_then(|()| limit(Resource::Fsize, wl.file_size))
        .and_then(|()| {
            // Dies with the node rather than running on.
            set_parent_process_death_signal(Some(Signal::KILL))
                .map_err(|e| format!("PR_SET_PDEATHSIG: {e}"))
        });
    if let Err(e) = applied {
        eprintln!("transcode-worker: {e}");
        return ExitCode::FAILURE;
    }
    // The running image itself, even if its file was replaced since.
    let err = std::os::unix::process::CommandExt::exec(
        Command::new("/proc/self/exe")
            .args(std::env::args_os().skip(1))
            .arg("--limited"),
    );
    eprintln!("transcode-worker: exec under limits: {err}");
    ExitCode::FAILURE
}

/// The child's reply line for a run's result (what [`read_reply`] reads).
pub fn reply_line(result: &Result<WorkerOutput, MediaError>) -> serde_json::Result<String> {
    let reply = match result {
        Ok(t) => Reply::from(t),
        Err(e) => Reply::Refused {
            code: e.code().to_string(),
            message: e.to_string(),
        },
    };
    serde_json::to_string(&reply)
}

/// Each image (quick, so a bad one is refused before the audio's long
/// transcode), then the audio; the first refusal ends the run.
pub(crate) fn process(job: &WorkerJob) -> Result<WorkerOutput, MediaError> {
    let images = job
        .images
        .iter()
        .map(|(input, png)| normalise_to_png(input, png, &job.image_limits))
        .collect::<Result<Vec<_>, _>>()?;
    let audio = transcode_to_flac(&job.input, &job.flac, &job.limits)?;
    Ok(WorkerOutput { audio, images })
}

/// The child under its limits: transcodes and prints the reply. Exits 0
/// for a result or a refusal; any other exit is a failure of the worker.
pub fn worker_main(job: &WorkerJob) -> ExitCode {
    match reply_line(&process(job)) {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("transcode-worker: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `--name=<value>`, keeping a path's bytes as they are and never taken
/// for a flag.
fn flag(name: &str, value: impl AsRef<OsStr>) -> OsString {
    let mut s = OsString::from(format!("--{name}="));
    s.push(value);
    s
}

/// The arguments of `stave transcode-worker` for one run.
pub fn worker_args(job: &WorkerJob, wl: &WorkerLimits) -> Vec<OsString> {
    let (limits, il) = (&job.limits, &job.image_limits);
    let mut args = vec![
        "transcode-worker".into(),
        flag("input", &job.input),
        flag("flac", &job.flac),
        flag("max-input-bytes", limits.max_input_bytes.to_string()),
        flag("max-frames", limits.max_frames.to_string()),
        flag("threads", limits.threads.to_string()),
        flag("max-image-input-bytes", il.max_input_bytes.to_string()),
        flag("max-image-side", il.max_side.to_string()),
        flag("max-image-bytes", il.max_output_bytes.to_string()),
        flag("address-space", wl.address_space.to_string()),
        flag("cpu-secs", wl.cpu_secs.to_string()),
        flag("file-size", wl.file_size.to_string()),
    ];
    for (input, png) in &job.images {
        args.push(flag("image", input));
        args.push(flag("png", png));
    }
    args
}

/// [`run_job`] for audio alone.
pub fn run_worker(
    exe: &Path,
    input: &Path,
    output: &Path,
    limits: &Limits,
    wl: &WorkerLimits,
) -> Result<Transcoded, WorkerError> {
    let job = WorkerJob {
        input: input.into(),
        flac: output.into(),
        images: Vec::new(),
        limits: *limits,
        image_limits: ImageLimits::default(),
    };
    run_job(exe, &job, wl).map(|o| o.audio)
}

/// The parent's side: runs `exe transcode-worker` on the job and waits for
/// its reply. Blocking; call it off the async runtime.
pub fn run_job(
    exe: &Path,
    job: &WorkerJob,
    wl: &WorkerLimits,
) -> Result<WorkerOutput, WorkerError> {
    let spawn = Command::new(exe)
        .args(worker_args(job, wl))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child =
        spawn.map_err(|e| WorkerError::Decoder(format!("spawn {}: {e}", exe.display())))?;
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let deadline = Instant::now() + wl.wall;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                remove_outputs(job);
                return Err(WorkerError::Decoder(format!(
                    "no answer within {} s",
                    wl.wall.as_secs()
                )));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                remove_outputs(job);
                return Err(WorkerError::Decoder(format!("wait: {e}")));
            }
        }
    };
    let out = stdout.join().unwrap_or_default();
    let err = stderr.join().unwrap_or_default();
    let checked = if status.success() {
        read_reply(&out, job)
    } else {
        None
    };
    // a refusal (an image after the audio, say) leaves no output either
    if let Some(Err(_)) = &checked {
        remove_outputs(job);
    }
    match checked {
        Some(r) => r,
        None => {
            remove_outputs(job);
            let tail: String = err
                .chars()
                .rev()
                .take(400)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            Err(WorkerError::Decoder(format!("{status}: {:?}", tail.trim())))
        }
    }
}

/// The parent's reading of what a worker that exited 0 printed: the last
/// line is the reply (anything a dependency printed before it is ignored),
/// and a `Done` reply holds only if its files are what it says. None when
/// there is no last line or it is not a reply. The child decoded untrusted input, so this
/// parses untrusted bytes too (fuzz/fuzz_targets/worker_reply.rs).
pub fn read_reply(stdout: &str, job: &WorkerJob) -> Option<Result<WorkerOutput, WorkerError>> {
    let reply = serde_json::from_str::<Reply>(stdout.lines().last()?).ok()?;
    Some(reply.into_result().and_then(|t| check_reply(t, job)))
}

/// The file at `path` is a plain file of its own (no symlink, no second
/// link: the child runs as the node's user and could point at any of the
/// node's files), starts with `magic`, and is `cid`, `bytes` long, as the
/// child said.
fn check_file(
    what: &str,
    path: &Path,
    magic: &[u8],
    cid: &RawCid,
    bytes: u64,
) -> Result<(), WorkerError> {
    use std::os::unix::fs::MetadataExt;
    let bad = |why: String| WorkerError::Decoder(format!("the reply's {what}: {why}"));
    let meta = std::fs::symlink_metadata(path).map_err(|e| bad(e.to_string()))?;
    if !meta.is_file() || meta.nlink() != 1 {
        return Err(bad("not a plain file with one link".into()));
    }
    let mut head = vec![0u8; magic.len()];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .map_err(|e| bad(e.to_string()))?;
    if head != magic {
        return Err(bad(format!("does not start with {magic:?}")));
    }
    let (got, len) = raw_cid_of_file(path).map_err(|e| bad(e.to_string()))?;
    if got != *cid || len != bytes {
        return Err(WorkerError::Decoder(format!(
            "the reply says the {what} is {} ({bytes} bytes), the file is {} ({len} bytes)",
            hex::encode(cid),
            hex::encode(got)
        )));
    }
    Ok(())
}

/// Takes a child's result only if the files it names are there and are
/// what the child says, one PNG per image asked, and its facts are a
/// format the encoder takes.
fn check_reply(o: WorkerOutput, job: &WorkerJob) -> Result<WorkerOutput, WorkerError> {
    let t = &o.audio;
    check_file("FLAC", &job.flac, b"fLaC", &t.flac_cid, t.flac_bytes)?;
    if o.images.len() != job.images.len() {
        return Err(WorkerError::Decoder(format!(
            "{} images in the reply, {} asked",
            o.images.len(),
            job.images.len()
        )));
    }
    let max_png = job.image_limits.max_output_bytes;
    for (img, (_, png)) in o.images.iter().zip(&job.images) {
        if img.bytes > max_png {
            return Err(WorkerError::Decoder(format!(
                "the reply's PNG is {} bytes, over the cap of {max_png}",
                img.bytes
            )));
        }
        check_file("PNG", png, b"\x89PNG\r\n\x1a\n", &img.cid, img.bytes)?;
    }
    let f = &t.facts;
    check_format(f.sample_rate, f.channels, f.bits_per_sample)
        .map_err(|e| WorkerError::Decoder(format!("the reply's facts: {e}")))?;
    Ok(o)
}

/// Removes whatever a failed child left: the FLAC, the PNGs and their
/// `.part` files.
fn remove_outputs(job: &WorkerJob) {
    let outputs = std::iter::once(&job.flac).chain(job.images.iter().map(|(_, png)| png));
    for out in outputs {
        let _ = std::fs::remove_file(out);
        let _ = std::fs::remove_file(super::transcode::part_path(out));
    }
}

/// Reads a pipe on its own thread, up to 1 MiB; the pipe is closed after
/// that, so a child writing more fails.
fn drain(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(p) = pipe {
            let _ = p.take(1 << 20).read_to_string(&mut s);
        }
        s
    })
}
