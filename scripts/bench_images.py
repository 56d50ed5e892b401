"""`scripts/bench images [N]`: image processing against Zola and Hugo (issue 81).

N photos (default 1000), each a distinct 4000 x 3000 JPEG (quality 90, ~1.1 MB; generated once
with Pillow into BENCH_DIR/images-N, two processes), each in its own page bundle, and the
same work asked of all three: every photo at widths 480, 960 and 1600, WebP quality 80,
Lanczos3 —

- fencepost: `[images] widths = [480, 960, 1600]`, `formats = ["webp"]`, `quality = 80`, the
  photo in the post's Markdown (its `<picture>` gets the three versions);
- Zola: the page template calls `resize_image(path=…, width=W, op="fit_width",
  format="webp", quality=80)` for each width (Zola's filter is Lanczos3);
- Hugo: the single template calls `.Resize "Wx webp q80 Lanczos"` on the bundle's photo.

Measured, in the same run: (a) cold — every version made, no cache (fencepost: `build` after
`publish`, `.fencepost/images/processed` removed; Zola: `static/processed_images` removed;
Hugo: `resources/_gen` removed); (b) one new photo's post, then fencepost `publish --build`,
`zola build`, `hugo` (each with its cache): wall time, versions encoded (fencepost's report;
for the others, new files in their cache folder). Peak RSS of each (`/usr/bin/time`). Median
of BENCH_ROUNDS (default 3) rounds for (b); (a) is run once (minutes at N = 1000).
"""
import json, os, shutil, statistics, subprocess, sys, time
from multiprocessing import Pool

WIDTHS = [480, 960, 1600]


def make_photo(args):
    """Photo `i` of `n` at `path`: a smooth, photo-like field with noise, shifted and marked so
    no two are alike (a cache keyed by content cannot share them)."""
    i, path = args
    from PIL import Image, ImageChops, ImageDraw, ImageFilter
    base = _base()
    img = ImageChops.offset(base, (i * 37) % 4000, (i * 53) % 3000)
    d = ImageDraw.Draw(img)
    d.rectangle([i % 3500, i % 2500, i % 3500 + 400, i % 2500 + 300], fill=((i * 7) % 256, (i * 13) % 256, (i * 29) % 256))
    img.save(path, "JPEG", quality=90)


_BASE = None


def _base():
    global _BASE
    if _BASE is None:
        from PIL import Image, ImageFilter
        noise = [Image.effect_noise((4000, 3000), 60 + 10 * k).filter(ImageFilter.GaussianBlur(2 + k)) for k in range(3)]
        grad = Image.linear_gradient("L").resize((4000, 3000))
        r = Image.blend(noise[0], grad, 0.5)
        g = Image.blend(noise[1], grad.rotate(90).resize((4000, 3000)), 0.4)
        b = Image.blend(noise[2], Image.radial_gradient("L").resize((4000, 3000)), 0.5)
        _BASE = Image.merge("RGB", (r, g, b))
    return _BASE


def pillow(b):
    venv = os.path.join(b.TMPFS, "venv")
    py = os.path.join(venv, "bin", "python")
    if not os.path.exists(py):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    if subprocess.run([py, "-c", "import PIL"], capture_output=True).returncode != 0:
        b.log("installing Pillow from PyPI into", venv)
        subprocess.run([os.path.join(venv, "bin", "pip"), "install", "--quiet", "Pillow"], check=True)
    return py


def photos(b, n):
    d = os.path.join(b.TMPFS, f"images-{n}")
    done = os.path.join(d, "done")
    if not os.path.exists(done):
        os.makedirs(d, exist_ok=True)
        b.log(f"generating {n} photos of 4000 x 3000 into {d} (once)")
        py = pillow(b)
        code = ("import sys; sys.path.insert(0, %r); import bench_images as m; from multiprocessing import Pool; "
                "Pool(2).map(m.make_photo, [(i, %r + f'/p{i:05d}.jpg') for i in range(1, %d)])" % (os.path.dirname(os.path.abspath(__file__)), d, n + 7))
        subprocess.run([py, "-c", code], check=True)
        open(done, "w").close()
    return d


def post_md(i):
    day = f"2026-{1 + (i // 28) % 11:02d}-{1 + i % 28:02d}"
    return day, f"+++\ntitle = \"Photo {i}\"\nday = {day}\n+++\n\nPhoto {i}.\n\n![photo {i}](photo.jpg)\n"


def fencepost_site(b, root, src, n):
    shutil.rmtree(root, ignore_errors=True)
    subprocess.run([b.FP, "init", "--starter", "posts", root, "--now", b.NOW], check=True, capture_output=True)
    shutil.rmtree(os.path.join(root, "content", "posts"))
    with open(os.path.join(root, "fencepost.toml"), "a") as f:
        f.write(f"\n[images]\nwidths = {WIDTHS}\nformats = [\"webp\"]\nquality = 80\n")
    for i in range(1, n + 1):
        add_fencepost_post(root, src, i)


def add_fencepost_post(root, src, i):
    d = os.path.join(root, "content", "posts", f"p{i:05d}")
    os.makedirs(d, exist_ok=True)
    os.link(os.path.join(src, f"p{i:05d}.jpg"), os.path.join(d, "photo.jpg"))
    with open(os.path.join(d, "index.md"), "w") as f:
        f.write(post_md(i)[1])


ZOLA_PAGE = """<html><body><h1>{{ page.title }}</h1>{% for w in [480, 960, 1600] %}{% set i = resize_image(path=page.colocated_path ~ "photo.jpg", width=w, op="fit_width", format="webp", quality=80) %}<img src="{{ i.url }}" width="{{ i.width }}" height="{{ i.height }}">{% endfor %}{{ page.content | safe }}</body></html>"""
HUGO_SINGLE = """<html><body><h1>{{ .Title }}</h1>{{ $img := .Resources.GetMatch "photo.jpg" }}{{ range (slice 480 960 1600) }}{{ $r := $img.Resize (printf "%dx webp q80 Lanczos" .) }}<img src="{{ $r.RelPermalink }}" width="{{ $r.Width }}" height="{{ $r.Height }}">{{ end }}{{ .Content }}</body></html>"""


def zola_site(root, src, n):
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(os.path.join(root, "templates"))
    os.makedirs(os.path.join(root, "content", "posts"))
    with open(os.path.join(root, "config.toml"), "w") as f:
        f.write('base_url = "https://example.org"\ntitle = "Photos"\n')
    for name, text in [("page.html", ZOLA_PAGE), ("section.html", "{{ section.title }}"), ("index.html", "home")]:
        with open(os.path.join(root, "templates", name), "w") as f:
            f.write(text)
    with open(os.path.join(root, "content", "posts", "_index.md"), "w") as f:
        f.write('+++\ntitle = "Posts"\n+++\n')
    for i in range(1, n + 1):
        add_zola_post(root, src, i)


def add_zola_post(root, src, i):
    """Post `i` as Zola and Hugo both read it: a bundle with the photo, a TOML date."""
    d = os.path.join(root, "content", "posts", f"p{i:05d}")
    os.makedirs(d, exist_ok=True)
    os.link(os.path.join(src, f"p{i:05d}.jpg"), os.path.join(d, "photo.jpg"))
    day = post_md(i)[0]
    with open(os.path.join(d, "index.md"), "w") as f:
        f.write(f"+++\ntitle = \"Photo {i}\"\ndate = {day}\n+++\n\nPhoto {i}.\n")


add_hugo_post = add_zola_post


def hugo_site(root, src, n):
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(os.path.join(root, "layouts", "_default"))
    with open(os.path.join(root, "hugo.toml"), "w") as f:
        f.write('baseURL = "https://example.org/"\ntitle = "Photos"\ndisableKinds = ["taxonomy", "term", "RSS", "sitemap"]\n')
    for name, text in [("single.html", HUGO_SINGLE), ("list.html", "{{ .Title }}")]:
        with open(os.path.join(root, "layouts", "_default", name), "w") as f:
            f.write(text)
    for i in range(1, n + 1):
        add_hugo_post(root, src, i)


def count_files(d):
    return sum(len(fs) for _, _, fs in os.walk(d)) if os.path.exists(d) else 0


def bench_images(b, n):
    b.build_fencepost()
    src = photos(b, n)
    zola, zv = b.zola_binary()
    hugo, hv = b.hugo_binary()
    base = os.path.join(b.TMPFS, f"img-sites-{n}")
    fp_root, z_root, h_root = (os.path.join(base, x) for x in ("fencepost", "zola", "hugo"))
    fencepost_site(b, fp_root, src, n)
    zola_site(z_root, src, n)
    hugo_site(h_root, src, n)
    fp = lambda *a: [b.FP, "--site", fp_root, *a]
    subprocess.run(fp("publish", "--now", b.NOW), check=True, capture_output=True)
    cold = {}
    b.log("cold: fencepost")
    shutil.rmtree(os.path.join(fp_root, ".fencepost", "images", "processed"), ignore_errors=True)
    t, rss, out = b.run(fp("build", "--json", "--now", b.NOW))
    cold["fencepost"] = (t, rss, json.loads(out)["images_encoded"])
    b.log("cold: zola", cold["fencepost"])
    shutil.rmtree(os.path.join(z_root, "static", "processed_images"), ignore_errors=True)
    t, rss, _ = b.zola_build(zola, z_root)
    cold["zola"] = (t, rss, count_files(os.path.join(z_root, "static", "processed_images")))
    b.log("cold: hugo", cold["zola"])
    shutil.rmtree(os.path.join(h_root, "resources"), ignore_errors=True)
    shutil.rmtree(os.path.join(h_root, "public"), ignore_errors=True)
    t, rss, _ = b.run([hugo, "--quiet"], cwd=h_root)
    gen = os.path.join(h_root, "resources", "_gen", "images")
    cold["hugo"] = (t, rss, sum(1 for _, _, fs in os.walk(gen) for f in fs if f.endswith(".webp")))
    b.log("cold: done", cold["hugo"])
    rounds = int(os.environ.get("BENCH_ROUNDS", "3"))
    new = {"fencepost": [], "zola": [], "hugo": []}
    for r in range(rounds):
        i = n + 1 + r
        add_fencepost_post(fp_root, src, i)
        t, rss, out = b.run(fp("publish", "--build", "--json", "--now", b.NOW))
        new["fencepost"].append((t, rss, json.loads(out)["build"]["images_encoded"]))
        add_zola_post(z_root, src, i)
        before = count_files(os.path.join(z_root, "static", "processed_images"))
        t, rss, _ = b.zola_build(zola, z_root)
        new["zola"].append((t, rss, count_files(os.path.join(z_root, "static", "processed_images")) - before))
        add_hugo_post(h_root, src, i)
        before = sum(1 for _, _, fs in os.walk(gen) for f in fs if f.endswith(".webp"))
        t, rss, _ = b.run([hugo, "--quiet"], cwd=h_root)
        new["hugo"].append((t, rss, sum(1 for _, _, fs in os.walk(gen) for f in fs if f.endswith(".webp")) - before))
        b.log(f"round {r + 1}", {k: v[-1] for k, v in new.items()})
    med = lambda xs, k: statistics.median(x[k] for x in xs)
    print(f"\n{n:,} photos of 4000 x 3000 (JPEG q90), each at widths 480, 960, 1600 in WebP q80 (Lanczos3); "
          f"Zola {zv}, Hugo {hv}, {len(os.sched_getaffinity(0))} cores; peak RSS by /usr/bin/time\n")
    print("| | cold: s | versions | peak RSS MiB | cold vs fencepost | one new photo: s (median) | versions | peak RSS MiB |")
    print("|---|---|---|---|---|---|---|---|")
    for name in ("fencepost", "zola", "hugo"):
        c = cold[name]
        print(f"| {name} | {c[0]:.1f} | {c[2]:,} | {c[1]:.0f} | {c[0] / cold['fencepost'][0]:.2f}x | "
              f"{med(new[name], 0):.2f} | {med(new[name], 2):.0f} | {med(new[name], 1):.0f} |")


def bench_avif(b, n):
    """`scripts/bench images-avif [N]` (default 10): what `[images] avif_speed` buys — the same
    N photos at widths 480, 960, 1600 in AVIF quality 80 at speeds 5 (Zola's default), 8 (ours)
    and 10, and in WebP quality 80 for scale: wall time of a cold build's images and the
    versions' bytes."""
    b.build_fencepost()
    src = photos(b, 1000)
    root = os.path.join(b.TMPFS, f"img-avif-{n}")
    fencepost_site(b, root, src, n)
    toml = os.path.join(root, "fencepost.toml")
    text = open(toml).read()
    subprocess.run([b.FP, "--site", root, "publish", "--now", b.NOW], check=True, capture_output=True)
    rows = []
    for label, fmt, speed in [("AVIF speed 5", "avif", 5), ("AVIF speed 8", "avif", 8), ("AVIF speed 10", "avif", 10), ("WebP", "webp", 8)]:
        with open(toml, "w") as f:
            f.write(text.replace('formats = ["webp"]', f'formats = ["{fmt}"]\navif_speed = {speed}'))
        shutil.rmtree(os.path.join(root, ".fencepost", "images", "processed"), ignore_errors=True)
        shutil.rmtree(os.path.join(root, "public"), ignore_errors=True)
        t, rss, out = b.run([b.FP, "--site", root, "build", "--json", "--now", b.NOW])
        made = os.path.join(root, ".fencepost", "images", "processed")
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(made) for f in fs)
        rows.append((label, t, json.loads(out)["images_encoded"], size))
        b.log(rows[-1])
    print(f"\n{n} photos of 4000 x 3000, widths 480, 960, 1600, quality 80, 2 cores\n")
    print("| format | cold build s | versions | bytes of the versions | per version s (core) |")
    print("|---|---|---|---|---|")
    for label, t, k, size in rows:
        print(f"| {label} | {t:.1f} | {k} | {size:,} | {2 * t / max(k, 1):.2f} |")
