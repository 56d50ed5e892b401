//! Images as sites use them: a source image resized by one of Zola's operations and encoded
//! as JPEG, PNG, WebP or AVIF — each output computed once, ever.
//!
//! An output is named by what goes into it: the SHA-256 of the source's *bytes* (not its
//! path: a renamed photo is the same photo), the operation and the format with its settings
//! ([`Output::name`]). Outputs are kept in a cache folder (`.fencepost/images/` of a site)
//! across builds, so a rebuild, a publish of one new post or a live preview's save encodes
//! only what was never encoded; the build hard-links each into its revision, where the name
//! never changes its bytes (deploy uploads it once). [`Images::make`] takes every output
//! wanted of one source together: the source is decoded once, at the smallest scale that
//! covers them all (`pixels.rs`), and one image is worked on per thread, so memory stays at
//! one decoded image per core.
//!
//! **The adversary**: a file of the site, in the hands of whoever can commit one — a
//! decompression bomb (a few KB that claim 50,000 × 50,000 pixels), a truncated or hostile
//! file. Each is refused from its header by [`Images::max_pixels`] before a pixel is
//! allocated, and decoders run within the same limit; a refusal names the file and why, and
//! holds only what uses it (the build's business).
//!
//! Steps: [`Meta::read`] (header) → [`Images::plan`] (sizes and names, no pixels) →
//! [`Images::make`] (cache, or decode → resize → encode → cache).

mod encode;
pub mod op;
mod pixels;
pub mod source;

pub use op::{Format, Instructions, Operation};
pub use source::{Kind, Meta, Source};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Bumped when the same source, operation and format would make other bytes (a new encoder
/// or filter): every name changes with it.
const PIPELINE: &str = "fencepost-images 1";

/// The folder, under a revision, that outputs are written to (Zola's).
pub const OUTPUT_DIR: &str = "processed_images";

/// The pixel budget when a site sets none: 120 megapixels, larger than any camera's photo.
pub const MAX_PIXELS: u64 = 120_000_000;

#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    #[error("{0}")]
    Argument(String),
    #[error("{name} cannot be read as an image: {why}")]
    Decode { name: String, why: String },
    #[error("{name} is {width} × {height} pixels, more than [images] max_pixels ({max_pixels}): it is refused before it is decoded (shrink it, or raise the limit)")]
    TooLarge {
        name: String,
        width: u64,
        height: u64,
        max_pixels: u64,
    },
    #[error("{name} is an image kind that is read for its size only (AVIF, HEIF, SVG, …): convert it to JPEG, PNG or WebP to resize it")]
    Unsupported { name: String },
    #[error("encoding {0}")]
    Encode(String),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// One output wanted of a source: its instructions, format and name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// `<stem>.<16 hex digits>.<ext>`: the file's name under [`OUTPUT_DIR`].
    pub name: String,
    pub width: u32,
    pub height: u32,
    pub instructions: Instructions,
    pub format: Format,
}

/// What [`Images::make`] did for one source.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Made {
    /// Outputs encoded now.
    pub encoded: u64,
    /// Outputs found in the cache.
    pub cached: u64,
}

/// The cache folder and the pixel budget; counts what was encoded and what was found.
#[derive(Debug)]
pub struct Images {
    dir: PathBuf,
    pub max_pixels: u64,
    encoded: AtomicU64,
    cached: AtomicU64,
}

impl Images {
    /// Outputs kept in `dir` (made when first written to), sources up to `max_pixels`.
    pub fn new(dir: &Path, max_pixels: u64) -> Images {
        Images {
            dir: dir.to_path_buf(),
            max_pixels,
            encoded: AtomicU64::new(0),
            cached: AtomicU64::new(0),
        }
    }

    /// The header of `source`, within the budget.
    pub fn meta(&self, source: &Source) -> Result<Meta, ImageError> {
        Meta::read(source, self.max_pixels)
    }

    /// The output `op` in `format` makes of `source` (of `meta`): its size and name, no
    /// pixel touched.
    pub fn plan(&self, source: &Source, meta: &Meta, op: Operation, format: Format) -> Output {
        use sha2::Digest;
        let instructions = Instructions::new(op, (meta.width, meta.height));
        let (width, height) = instructions.size((meta.width, meta.height));
        let key = format!(
            "{PIPELINE}\n{}\n{}\n{}\n",
            source.sha256,
            op.spelled(),
            format.spelled()
        );
        let hash = hex::encode(&sha2::Sha256::digest(key.as_bytes())[..8]);
        Output {
            name: format!("{}.{hash}.{}", source.stem(), format.extension()),
            width,
            height,
            instructions,
            format,
        }
    }

    /// Where output `name` is kept (by its hash and extension: the stem is not part of what
    /// makes the bytes).
    pub fn cached(&self, name: &str) -> PathBuf {
        let mut parts = name.rsplitn(3, '.');
        let (ext, hash) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        self.dir
            .join(&hash[..2.min(hash.len())])
            .join(format!("{hash}.{ext}"))
    }

    /// Every one of `wanted` (outputs of `source`) in the cache: those missing made from
    /// one decode of the source.
    pub fn make(
        &self,
        source: &Source,
        meta: &Meta,
        wanted: &[Output],
    ) -> Result<Made, ImageError> {
        let missing: Vec<&Output> = wanted
            .iter()
            .filter(|o| !self.cached(&o.name).is_file())
            .collect();
        let mut made = Made {
            cached: (wanted.len() - missing.len()) as u64,
            encoded: 0,
        };
        if !missing.is_empty() {
            let instructions: Vec<Instructions> = missing.iter().map(|o| o.instructions).collect();
            let need = pixels::needed(meta, &instructions);
            let img = pixels::decode(source, meta, need, self.max_pixels)?;
            let icc = pixels::icc(source, meta);
            for o in &missing {
                let resized = pixels::resize(&img, (meta.width, meta.height), &o.instructions)?;
                let bytes = encode::encode(&resized, o.format, icc.as_deref())?;
                self.keep(&o.name, &bytes)?;
                made.encoded += 1;
            }
        }
        self.encoded.fetch_add(made.encoded, Ordering::Relaxed);
        self.cached.fetch_add(made.cached, Ordering::Relaxed);
        Ok(made)
    }

    /// Outputs encoded and found in the cache so far.
    pub fn counts(&self) -> Made {
        Made {
            encoded: self.encoded.load(Ordering::Relaxed),
            cached: self.cached.load(Ordering::Relaxed),
        }
    }

    /// `bytes` kept as output `name`: written beside, then renamed (a reader never sees half
    /// a file; two builds making the same output write the same bytes).
    fn keep(&self, name: &str, bytes: &[u8]) -> Result<(), ImageError> {
        let path = self.cached(name);
        let dir = path.parent().expect("a cached output is in a folder");
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| ImageError::Io { path, source }
        };
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let tmp = dir.join(format!(
            ".{}.{}-{}.tmp",
            path.file_name().and_then(|n| n.to_str()).unwrap_or("out"),
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::write(&tmp, bytes).map_err(io(&tmp))?;
        std::fs::rename(&tmp, &path).map_err(io(&path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::{ImageDecoder, ImageEncoder};
    use std::sync::Arc;

    fn icc_of(bytes: &[u8]) -> Option<Vec<u8>> {
        let r = image::ImageReader::new(std::io::Cursor::new(bytes))
            .with_guessed_format()
            .unwrap();
        r.into_decoder().unwrap().icc_profile().unwrap()
    }

    /// Guards: a photo's colour profile (a Display P3 phone photo's) goes with its JPEG and
    /// PNG versions, as under Zola; every version is the size planned; the same source and
    /// operation found in the cache the second time.
    #[test]
    fn a_colour_profile_goes_with_jpeg_and_png_versions() {
        let img = image::RgbImage::from_fn(320, 200, |x, y| image::Rgb([x as u8, y as u8, 90]));
        let profile = b"a colour profile's bytes, as a camera wrote them".to_vec();
        let mut jpg = Vec::new();
        let mut e = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpg, 90);
        e.set_icc_profile(profile.clone()).unwrap();
        e.write_image(img.as_raw(), 320, 200, image::ExtendedColorType::Rgb8)
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let images = Images::new(dir.path(), MAX_PIXELS);
        let source = Source::new("static/p3.jpg", Arc::new(jpg));
        let meta = images.meta(&source).unwrap();
        let outs: Vec<Output> = ["jpg", "png", "webp"]
            .iter()
            .map(|f| {
                let format = Format::from_args(f, true, Some(80), None).unwrap();
                images.plan(&source, &meta, Operation::FitWidth(100), format)
            })
            .collect();
        let made = images.make(&source, &meta, &outs).unwrap();
        assert_eq!(
            made,
            Made {
                encoded: 3,
                cached: 0
            }
        );
        for o in &outs {
            let bytes = std::fs::read(images.cached(&o.name)).unwrap();
            let (w, h) = imagesize::blob_size(&bytes)
                .map(|s| (s.width, s.height))
                .unwrap();
            assert_eq!((w as u32, h as u32), (o.width, o.height), "{}", o.name);
            let kept = icc_of(&bytes);
            match o.format {
                Format::WebP { .. } => assert_eq!(kept, None),
                _ => assert_eq!(kept.as_deref(), Some(&profile[..]), "{}", o.name),
            }
        }
        assert_eq!(images.make(&source, &meta, &outs).unwrap().cached, 3);
    }
}
