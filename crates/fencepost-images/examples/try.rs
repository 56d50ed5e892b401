use fencepost_images::*;
use std::sync::Arc;
use std::time::Instant;
fn main() {
    let (w, h) = (4000u32, 3000u32);
    let mut img = image::RgbImage::new(w, h);
    let mut s: u32 = 1;
    for (x, y, p) in img.enumerate_pixels_mut() {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        let n = (s % 24) as f32;
        let v = |a: f32| ((a.sin() * 0.5 + 0.5) * 200.0 + n) as u8;
        *p = image::Rgb([
            v(x as f32 / 97.0 + y as f32 / 53.0),
            v(y as f32 / 41.0),
            v((x * y) as f32 / 90000.0),
        ]);
    }
    let mut jpg = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpg, 90)
        .encode_image(&img)
        .unwrap();
    println!("jpeg {} bytes", jpg.len());
    let src = Source::new("p.jpg", Arc::new(jpg.clone()));
    let t = Instant::now();
    let full = image::load_from_memory(&jpg).unwrap();
    println!(
        "image full decode {:?} {}x{}",
        t.elapsed(),
        full.width(),
        full.height()
    );
    let dir = tempfile::tempdir().unwrap();
    let imgs = Images::new(dir.path(), MAX_PIXELS);
    let meta = imgs.meta(&src).unwrap();
    for fmt in ["webp", "avif", "jpg"] {
        let q = Some(80);
        let outs: Vec<Output> = [480, 960, 1600]
            .iter()
            .map(|&wd| {
                imgs.plan(
                    &src,
                    &meta,
                    Operation::FitWidth(wd),
                    Format::from_args(
                        fmt,
                        true,
                        q,
                        Some(
                            std::env::args()
                                .nth(1)
                                .map(|s| s.parse().unwrap())
                                .unwrap_or(5),
                        ),
                    )
                    .unwrap(),
                )
            })
            .collect();
        let t = Instant::now();
        let m = imgs.make(&src, &meta, &outs).unwrap();
        println!("{fmt} 3 widths {:?} {:?}", t.elapsed(), m);
        for o in &outs {
            println!(
                "  {} {}x{} {} bytes",
                o.name,
                o.width,
                o.height,
                std::fs::metadata(imgs.cached(&o.name)).unwrap().len()
            );
        }
    }
}
