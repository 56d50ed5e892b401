//! What a resize asks for: Zola's operations (`scale`, `fit_width`, `fit_height`, `fit`,
//! `fill`) and formats (`auto`, `jpg`, `png`, `webp`, `avif`) with Zola's defaults, and the
//! crop and size each makes of an image — Zola's arithmetic, so a theme's images come out at
//! the sizes they do under Zola (`components/imageproc/src/ops.rs` and `format.rs`).

use super::ImageError;

/// A resize operation, as `resize_image(op=…)` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    /// Exactly `width` × `height`, the aspect ratio not kept.
    Scale(u32, u32),
    /// `width` wide, the height keeping the aspect ratio.
    FitWidth(u32),
    /// `height` high, the width keeping the aspect ratio.
    FitHeight(u32),
    /// Within `width` × `height`, the aspect ratio kept; never enlarged.
    Fit(u32, u32),
    /// Exactly `width` × `height`: the centre part of that aspect ratio, resized.
    Fill(u32, u32),
}

impl Operation {
    /// The operation `op` (Zola's default: `fill`) with its arguments, or why not.
    pub fn from_args(
        op: &str,
        width: Option<u32>,
        height: Option<u32>,
    ) -> Result<Self, ImageError> {
        let need = |what: &str| ImageError::Argument(format!("op=\"{op}\" needs {what}"));
        let both = || match (width, height) {
            (Some(w), Some(h)) => Ok((w, h)),
            _ => Err(need("a width and a height")),
        };
        let positive = |n: u32| match n {
            0 => Err(ImageError::Argument(format!(
                "op=\"{op}\": a width or height of 0"
            ))),
            n => Ok(n),
        };
        Ok(match op {
            "scale" => both().map(|(w, h)| Operation::Scale(w, h))?,
            "fit_width" => Operation::FitWidth(positive(width.ok_or_else(|| need("a width"))?)?),
            "fit_height" => {
                Operation::FitHeight(positive(height.ok_or_else(|| need("a height"))?)?)
            }
            "fit" => both().map(|(w, h)| Operation::Fit(w, h))?,
            "fill" => both().map(|(w, h)| Operation::Fill(w, h))?,
            other => {
                return Err(ImageError::Argument(format!(
                    "op {other:?} is none of scale, fit_width, fit_height, fit, fill"
                )))
            }
        })
        .and_then(|o| match o {
            Operation::Scale(w, h) | Operation::Fit(w, h) | Operation::Fill(w, h) => {
                positive(w)?;
                positive(h)?;
                Ok(o)
            }
            o => Ok(o),
        })
    }

    /// Its name and numbers, as the cache key spells it.
    pub fn spelled(&self) -> String {
        match self {
            Operation::Scale(w, h) => format!("scale {w}x{h}"),
            Operation::FitWidth(w) => format!("fit_width {w}"),
            Operation::FitHeight(h) => format!("fit_height {h}"),
            Operation::Fit(w, h) => format!("fit {w}x{h}"),
            Operation::Fill(w, h) => format!("fill {w}x{h}"),
        }
    }
}

/// What an operation does to an image of a given size: a crop (x, y, width, height) first,
/// then a resize to (width, height); either may be absent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Instructions {
    pub crop: Option<(u32, u32, u32, u32)>,
    pub resize: Option<(u32, u32)>,
}

impl Instructions {
    /// Zola's `ResizeInstructions::new`, number for number.
    pub fn new(op: Operation, (w0, h0): (u32, u32)) -> Instructions {
        let none = Instructions::default();
        let resize = |w: u32, h: u32| Instructions {
            crop: None,
            resize: Some((w.max(1), h.max(1))),
        };
        match op {
            Operation::Scale(w, h) => resize(w, h),
            Operation::FitWidth(w) => resize(w, (h0 as u64 * w as u64 / w0 as u64) as u32),
            Operation::FitHeight(h) => resize((w0 as u64 * h as u64 / h0 as u64) as u32, h),
            Operation::Fit(w, h) => {
                if w0 <= w && h0 <= h {
                    return none;
                }
                match w0 as u64 * h as u64 > h0 as u64 * w as u64 {
                    true => Instructions::new(Operation::FitWidth(w), (w0, h0)),
                    false => Instructions::new(Operation::FitHeight(h), (w0, h0)),
                }
            }
            Operation::Fill(w, h) => {
                let (fw, fh) = (w0 as f32 / w as f32, h0 as f32 / h as f32);
                if (fw - fh).abs() <= 0.1 {
                    return resize(w, h);
                }
                let (cw, ch) = match fw < fh {
                    true => (w0, ((fw * h as f32).round() as u32).min(h0)),
                    false => (((fh * w as f32).round() as u32).min(w0), h0),
                };
                Instructions {
                    crop: Some(((w0 - cw) / 2, (h0 - ch) / 2, cw, ch)),
                    resize: Some((w, h)),
                }
            }
        }
    }

    /// The size the image comes out at.
    pub fn size(&self, orig: (u32, u32)) -> (u32, u32) {
        match (self.resize, self.crop) {
            (Some(s), _) => s,
            (None, Some((_, _, w, h))) => (w, h),
            (None, None) => orig,
        }
    }
}

/// An output format with its settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    Jpeg {
        quality: u8,
    },
    Png,
    /// `None`: lossless (Zola's WebP default).
    WebP {
        quality: Option<u8>,
    },
    Avif {
        quality: u8,
        speed: u8,
    },
}

/// Zola's defaults.
pub const JPEG_QUALITY: u8 = 75;
pub const AVIF_QUALITY: u8 = 80;
pub const AVIF_SPEED: u8 = 5;

impl Format {
    /// The format `name` (`auto`: JPEG for a lossy source, PNG for a lossless one) with
    /// `quality` and `speed` where it takes them, checked against Zola's ranges.
    pub fn from_args(
        name: &str,
        lossy_source: bool,
        quality: Option<u8>,
        speed: Option<u8>,
    ) -> Result<Format, ImageError> {
        let name = match (name, lossy_source) {
            ("auto", true) => "jpg",
            ("auto", false) => "png",
            (n, _) => n,
        };
        let range = |what: &str, v: u8, lo: u8, hi: u8| match (lo..=hi).contains(&v) {
            true => Ok(v),
            false => Err(ImageError::Argument(format!(
                "{what} is {lo} to {hi}, not {v}"
            ))),
        };
        Ok(match name {
            "jpg" | "jpeg" => Format::Jpeg {
                quality: range("JPEG quality", quality.unwrap_or(JPEG_QUALITY), 1, 100)?,
            },
            "png" => Format::Png,
            "webp" => Format::WebP {
                quality: quality
                    .map(|q| range("WebP quality", q, 0, 100))
                    .transpose()?,
            },
            "avif" => Format::Avif {
                quality: range("AVIF quality", quality.unwrap_or(AVIF_QUALITY), 1, 100)?,
                speed: range("AVIF speed", speed.unwrap_or(AVIF_SPEED), 1, 10)?,
            },
            other => {
                return Err(ImageError::Argument(format!(
                    "format {other:?} is none of auto, jpg, png, webp, avif"
                )))
            }
        })
    }

    pub fn extension(&self) -> &'static str {
        match self {
            Format::Jpeg { .. } => "jpg",
            Format::Png => "png",
            Format::WebP { .. } => "webp",
            Format::Avif { .. } => "avif",
        }
    }

    pub fn mime(&self) -> &'static str {
        match self {
            Format::Jpeg { .. } => "image/jpeg",
            Format::Png => "image/png",
            Format::WebP { .. } => "image/webp",
            Format::Avif { .. } => "image/avif",
        }
    }

    /// Its name and settings, as the cache key spells them.
    pub fn spelled(&self) -> String {
        match self {
            Format::Jpeg { quality } => format!("jpg q{quality}"),
            Format::Png => "png".into(),
            Format::WebP { quality: None } => "webp lossless".into(),
            Format::WebP { quality: Some(q) } => format!("webp q{q}"),
            Format::Avif { quality, speed } => format!("avif q{quality} s{speed}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(op: &str, w: Option<u32>, h: Option<u32>) -> (u32, u32) {
        let op = Operation::from_args(op, w, h).unwrap();
        Instructions::new(op, (300, 380)).size((300, 380))
    }

    /// Guards: Zola's documented examples (its image-processing page, a 300 × 380 source)
    /// come out at the sizes Zola shows.
    #[test]
    fn zolas_documented_examples() {
        assert_eq!(size("scale", Some(150), Some(150)), (150, 150));
        assert_eq!(size("fit_width", Some(100), Some(0)), (100, 126));
        assert_eq!(size("fit_height", Some(0), Some(150)), (118, 150));
        assert_eq!(size("fit", Some(5000), Some(5000)), (300, 380));
        assert_eq!(size("fit", Some(150), Some(150)), (118, 150));
        assert_eq!(size("fill", Some(150), Some(150)), (150, 150));
        let fill = Instructions::new(Operation::Fill(150, 150), (300, 380));
        assert_eq!(fill.crop, Some((0, 40, 300, 300)));
    }

    /// Guards: arguments are checked as Zola checks them, with the argument named.
    #[test]
    fn bad_arguments_are_named() {
        assert!(Operation::from_args("fit", Some(1), None).is_err());
        assert!(Operation::from_args("stretch", Some(1), Some(1)).is_err());
        assert!(Operation::from_args("fill", Some(0), Some(1)).is_err());
        assert!(Format::from_args("jpg", true, Some(0), None).is_err());
        assert!(Format::from_args("avif", true, None, Some(11)).is_err());
        assert!(Format::from_args("gif", true, None, None).is_err());
        assert_eq!(
            Format::from_args("auto", false, None, None).unwrap(),
            Format::Png
        );
        assert_eq!(
            Format::from_args("webp", true, None, None).unwrap(),
            Format::WebP { quality: None }
        );
    }
}
