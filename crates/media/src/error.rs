//! `MediaError`: why an input was refused, with a stable code per reason.

/// Why media processing refused or failed an input.
#[derive(Debug, thiserror::Error)]
pub enum MediaError {
    #[error("the input is empty (0 bytes)")]
    Empty,
    #[error("the input is {size} bytes, over the cap of {cap}")]
    TooLarge { size: u64, cap: u64 },
    #[error("the input is {frames} frames at {sample_rate} Hz, over the cap of {cap} frames")]
    TooLong {
        frames: u64,
        sample_rate: u32,
        cap: u64,
    },
    #[error("not a recognised audio file: {0}")]
    NotAudio(String),
    #[error("not an image Stave takes: {0}")]
    NotImage(String),
    #[error("the image is over the limits: {0}")]
    ImageTooLarge(String),
    #[error("corrupt or truncated input: {0}")]
    Corrupt(String),
    #[error("unsupported audio: {0}")]
    Unsupported(String),
    #[error("the audio holds no samples")]
    NoSamples,
    #[error("the FLAC produced does not decode to the input: {0}")]
    Mismatch(String),
    #[error("FLAC encoder: {0}")]
    Encode(String),
    #[error("i/o on {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

impl MediaError {
    /// Every code [`MediaError::code`] gives; a worker's reply naming any
    /// other is not taken as a refusal.
    pub const CODES: &'static [&'static str] = &[
        "EMPTY",
        "TOO_LARGE",
        "TOO_LONG",
        "NOT_AUDIO",
        "NOT_IMAGE",
        "IMAGE_TOO_LARGE",
        "CORRUPT",
        "UNSUPPORTED",
        "NO_SAMPLES",
        "MISMATCH",
        "ENCODE",
        "IO",
    ];

    /// A stable name for the reason, for job records, logs and metrics.
    pub fn code(&self) -> &'static str {
        match self {
            MediaError::Empty => "EMPTY",
            MediaError::TooLarge { .. } => "TOO_LARGE",
            MediaError::TooLong { .. } => "TOO_LONG",
            MediaError::NotAudio(_) => "NOT_AUDIO",
            MediaError::NotImage(_) => "NOT_IMAGE",
            MediaError::ImageTooLarge(_) => "IMAGE_TOO_LARGE",
            MediaError::Corrupt(_) => "CORRUPT",
            MediaError::Unsupported(_) => "UNSUPPORTED",
            MediaError::NoSamples => "NO_SAMPLES",
            MediaError::Mismatch(_) => "MISMATCH",
            MediaError::Encode(_) => "ENCODE",
            MediaError::Io { .. } => "IO",
        }
    }

    /// An i/o error on `path`.
    pub fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        MediaError::Io {
            path: path.display().to_string(),
            source,
        }
    }
}
