//! Artwork: a received JPEG, PNG or WebP decoded under `image::Limits` and
//! written again as an 8-bit PNG. Only the pixels are kept, so EXIF, ICC
//! profiles, text chunks and anything appended to the file are gone, and
//! the same input always gives the same bytes (and cid).
//!
//! Like audio, untrusted images are decoded only in the transcode worker.

use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::Path;

use image::codecs::png::{CompressionType, FilterType, PngEncoder};
use image::{DynamicImage, ImageFormat, ImageReader};

use super::cid::{raw_cid_of_file, RawCid};
use super::transcode::part_path;
use super::MediaError;

/// Caps on one image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageLimits {
    /// Bytes of the received file.
    pub max_input_bytes: u64,
    /// Pixels of the longer side.
    pub max_side: u32,
    /// Bytes of the PNG written (`rights.max_image_bytes`).
    pub max_output_bytes: u64,
}

impl Default for ImageLimits {
    /// 32 MiB in and out, 6000 pixels a side (a 3000×3000 cover, the
    /// stores' usual ask, with room).
    fn default() -> Self {
        ImageLimits {
            max_input_bytes: 32 << 20,
            max_side: 6000,
            max_output_bytes: 32 << 20,
        }
    }
}

/// A normalised image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NormalisedImage {
    pub cid: RawCid,
    /// Bytes of the PNG.
    pub bytes: u64,
    pub width: u32,
    pub height: u32,
    /// What was received: `png`, `jpeg` or `webp`.
    pub source_format: String,
}

fn decode_limits(l: &ImageLimits) -> image::Limits {
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(l.max_side);
    limits.max_image_height = Some(l.max_side);
    // The decoded RGBA buffer plus the decoder's own working memory.
    limits.max_alloc = Some(
        u64::from(l.max_side)
            .saturating_pow(2)
            .saturating_mul(4)
            .saturating_add(64 << 20),
    );
    limits
}

fn refuse(e: image::ImageError) -> MediaError {
    use image::error::ImageError as E;
    match e {
        E::Limits(l) => MediaError::ImageTooLarge(l.to_string()),
        E::Unsupported(u) => MediaError::NotImage(u.to_string()),
        E::IoError(io) => MediaError::Corrupt(format!("image: {io}")),
        other => MediaError::Corrupt(format!("image: {other}")),
    }
}

/// The format the file's first bytes announce, if it is one we take.
fn format_of(input: &Path) -> Result<(ImageReader<BufReader<File>>, &'static str), MediaError> {
    let file = File::open(input).map_err(|e| MediaError::io(input, e))?;
    let reader = ImageReader::new(BufReader::new(file))
        .with_guessed_format()
        .map_err(|e| MediaError::io(input, e))?;
    let name = match reader.format() {
        Some(ImageFormat::Png) => "png",
        Some(ImageFormat::Jpeg) => "jpeg",
        Some(ImageFormat::WebP) => "webp",
        other => {
            return Err(MediaError::NotImage(format!(
                "not a JPEG, PNG or WebP image ({other:?})"
            )))
        }
    };
    Ok((reader, name))
}

fn check_input(input: &Path, l: &ImageLimits) -> Result<(), MediaError> {
    let size = std::fs::metadata(input)
        .map_err(|e| MediaError::io(input, e))?
        .len();
    if size == 0 {
        return Err(MediaError::Empty);
    }
    if size > l.max_input_bytes {
        return Err(MediaError::TooLarge {
            size,
            cap: l.max_input_bytes,
        });
    }
    Ok(())
}

/// Decodes `input` and writes it to `output` as PNG (8-bit RGB, or RGBA
/// when the source has alpha). On any error nothing is left at
/// `<output>.part` and `output` is not created.
pub fn normalise_to_png(
    input: &Path,
    output: &Path,
    l: &ImageLimits,
) -> Result<NormalisedImage, MediaError> {
    let part = part_path(output);
    let result = write_png(input, &part, l).and_then(|mut img| {
        let (cid, bytes) = raw_cid_of_file(&part)?;
        if bytes > l.max_output_bytes {
            return Err(MediaError::ImageTooLarge(format!(
                "the PNG is {bytes} bytes, over the cap of {}",
                l.max_output_bytes
            )));
        }
        std::fs::rename(&part, output).map_err(|e| MediaError::io(output, e))?;
        img.cid = cid;
        img.bytes = bytes;
        Ok(img)
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&part);
    }
    result
}

fn write_png(input: &Path, part: &Path, l: &ImageLimits) -> Result<NormalisedImage, MediaError> {
    check_input(input, l)?;
    let (mut reader, source_format) = format_of(input)?;
    reader.limits(decode_limits(l));
    let decoded = reader.decode().map_err(refuse)?;
    let (width, height) = (decoded.width(), decoded.height());
    if width == 0 || height == 0 {
        return Err(MediaError::Corrupt("the image has no pixels".into()));
    }
    // converted in place where the source is already 8-bit
    let pixels = if decoded.color().has_alpha() {
        DynamicImage::ImageRgba8(decoded.into_rgba8())
    } else {
        DynamicImage::ImageRgb8(decoded.into_rgb8())
    };
    let file = File::create(part).map_err(|e| MediaError::io(part, e))?;
    let mut w = BufWriter::new(file);
    let enc = PngEncoder::new_with_quality(&mut w, CompressionType::Default, FilterType::Adaptive);
    pixels
        .write_with_encoder(enc)
        .map_err(|e| MediaError::Encode(format!("PNG: {e}")))?;
    let file = w
        .into_inner()
        .map_err(|e| MediaError::io(part, e.into_error()))?;
    file.sync_all().map_err(|e| MediaError::io(part, e))?;
    Ok(NormalisedImage {
        cid: [0; 36],
        bytes: 0,
        width,
        height,
        source_format: source_format.into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::art_samples::{cover, encode, jpeg_with_exif, png_bomb};

    fn run(
        bytes: &[u8],
        l: &ImageLimits,
    ) -> (Result<NormalisedImage, MediaError>, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("art.in");
        std::fs::write(&input, bytes).unwrap();
        let r = normalise_to_png(&input, &dir.path().join("art.png"), l);
        (r, dir)
    }

    fn pixels(dir: &tempfile::TempDir) -> image::RgbImage {
        image::open(dir.path().join("art.png")).unwrap().to_rgb8()
    }

    #[test]
    fn png_jpeg_and_webp_become_the_same_deterministic_png() {
        let img = cover(300, 200, 7);
        let l = ImageLimits::default();
        for (format, name) in [
            (ImageFormat::Png, "png"),
            (ImageFormat::Jpeg, "jpeg"),
            (ImageFormat::WebP, "webp"),
        ] {
            let bytes = encode(&img, format);
            let (a, dir) = run(&bytes, &l);
            let a = a.unwrap();
            assert_eq!(
                (a.width, a.height, a.source_format.as_str()),
                (300, 200, name)
            );
            let png = std::fs::read(dir.path().join("art.png")).unwrap();
            assert_eq!(a.cid, crate::cid::raw_cid(&png), "{name}");
            assert_eq!(a.bytes, png.len() as u64);
            assert!(png.starts_with(b"\x89PNG"));
            // lossless sources keep every pixel
            if format != ImageFormat::Jpeg {
                assert_eq!(pixels(&dir), img, "{name}");
            }
            let (b, _d) = run(&bytes, &l);
            assert_eq!(b.unwrap(), a, "{name}: the same input, the same PNG");
        }
    }

    #[test]
    fn metadata_is_stripped() {
        let jpeg = encode(&cover(64, 64, 1), ImageFormat::Jpeg);
        let tagged = jpeg_with_exif(&jpeg, b"GPS 51.5007N 0.1246W owner@example.com");
        let (plain, _a) = run(&jpeg, &ImageLimits::default());
        let (r, dir) = run(&tagged, &ImageLimits::default());
        let png = std::fs::read(dir.path().join("art.png")).unwrap();
        assert!(!png.windows(3).any(|w| w == b"GPS"));
        assert_eq!(
            r.unwrap().cid,
            plain.unwrap().cid,
            "the EXIF changes nothing"
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// Mutated and cut PNG, JPEG and WebP files (the worker's image
        /// decoders): a PNG or a refusal, never a panic, and a refusal
        /// leaves nothing behind.
        #[test]
        fn mutated_images_never_panic(
            format in 0usize..3,
            edits in proptest::collection::vec(
                (proptest::prelude::any::<proptest::sample::Index>(), proptest::prelude::any::<u8>()),
                1..16,
            ),
            cut in proptest::prelude::any::<Option<proptest::sample::Index>>(),
        ) {
            let format = [ImageFormat::Png, ImageFormat::Jpeg, ImageFormat::WebP][format];
            let mut bytes = encode(&cover(48, 32, 5), format);
            for (at, b) in edits {
                let i = at.index(bytes.len());
                bytes[i] = b;
            }
            if let Some(c) = cut {
                bytes.truncate(c.index(bytes.len()).max(1));
            }
            let r = std::panic::catch_unwind(|| run(&bytes, &ImageLimits::default()));
            proptest::prop_assert!(r.is_ok(), "panicked");
            if let Ok((Err(_), dir)) = r {
                proptest::prop_assert!(!dir.path().join("art.png").exists());
                proptest::prop_assert!(!dir.path().join("art.png.part").exists());
            }
        }
    }

    #[test]
    fn bad_images_are_refused_with_their_own_code_and_leave_nothing() {
        let l = ImageLimits::default();
        let png = encode(&cover(40, 40, 3), ImageFormat::Png);
        let gif = {
            let mut g = b"GIF89a".to_vec();
            g.extend_from_slice(&[1, 0, 1, 0, 0, 0, 0, b';']);
            g
        };
        let cases: Vec<(&str, Vec<u8>, ImageLimits)> = vec![
            ("EMPTY", vec![], l),
            ("NOT_IMAGE", b"RIFF\0\0\0\0WAVEfmt ".to_vec(), l),
            ("NOT_IMAGE", gif, l),
            ("CORRUPT", png[..png.len() / 2].to_vec(), l),
            ("IMAGE_TOO_LARGE", png_bomb(60_000), l),
            (
                "IMAGE_TOO_LARGE",
                png.clone(),
                ImageLimits { max_side: 39, ..l },
            ),
            (
                "IMAGE_TOO_LARGE",
                png.clone(),
                ImageLimits {
                    max_output_bytes: 10,
                    ..l
                },
            ),
            (
                "TOO_LARGE",
                png.clone(),
                ImageLimits {
                    max_input_bytes: 10,
                    ..l
                },
            ),
        ];
        for (want, bytes, limits) in cases {
            let (r, dir) = run(&bytes, &limits);
            let e = r.expect_err(want);
            assert_eq!(e.code(), want, "{e}");
            let left: Vec<_> = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            assert_eq!(left, vec![std::ffi::OsString::from("art.in")], "{want}");
        }
    }
}
