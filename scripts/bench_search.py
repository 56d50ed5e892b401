#!/usr/bin/env python3
"""`scripts/bench search [N ...]` (issue 82): what a Pagefind index in every revision costs.

The generated corpus (../shared/bench/gen_corpus.py) at each N (default 10000) in a site made
by `fencepost init`, on tmpfs, with and without `[search] enabled = true`, in the same run:
(a) a cold `publish --build`, (b) one new item, then `publish --build` — median of 3 rounds,
wall time and peak RSS; the index files the second revision does not share with the first
(what a deploy uploads) counted; ROUNDS sets the rounds. With PAGEFIND set to Pagefind's CLI (the npm package's
binary), the same revision's HTML indexed by it cold, as the peer.
"""
import os, re, shutil, statistics, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FP = os.environ.get("FP", os.path.join(ROOT, "target/release/fencepost"))
GEN = os.path.join(ROOT, "..", "shared", "bench", "gen_corpus.py")
WORK = "/dev/shm/fencepost-bench/search"
NOW = "2026-12-07T00:00:00Z"


def timed(cmd, cwd):
    """Wall time and the command's own peak RSS (MiB), from wait4's rusage."""
    t = time.monotonic()
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.monotonic() - t
    if status != 0:
        raise SystemExit(f"{cmd} failed ({status})")
    return wall, usage.ru_maxrss / 1024


def site(corpus, n, search):
    d = os.path.join(WORK, f"{n}-{'search' if search else 'plain'}")
    shutil.rmtree(d, ignore_errors=True)
    subprocess.run([FP, "init", d, "--now", NOW], check=True, stdout=subprocess.DEVNULL)
    shutil.rmtree(os.path.join(d, "content/answers"))
    shutil.copytree(os.path.join(corpus, "fencepost/content/answers"), os.path.join(d, "content/answers"))
    if search:
        with open(os.path.join(d, "fencepost.toml"), "a") as f:
            f.write("\n[search]\nenabled = true\n")
    return d


def index_files(rev):
    out = {}
    top = os.path.join(rev, "pagefind")
    for dirpath, _, files in os.walk(top):
        for name in files:
            p = os.path.join(dirpath, name)
            out[os.path.relpath(p, rev)] = os.stat(p).st_ino
    return out


def one_round(corpus, n, search, k):
    d = site(corpus, n, search)
    cold, rss = timed([FP, "publish", "--build", "--now", NOW], d)
    first = os.path.realpath(os.path.join(d, "public/current"))
    src = os.path.join(d, "content/answers/1.md")
    text = open(src).read()
    new_id = n + 1 + k
    text = re.sub(r"^id = .*$", f"id = {new_id}", text, count=1, flags=re.M)
    open(os.path.join(d, f"content/answers/{new_id}.md"), "w").write(text + "\nA brand new tangerine.\n")
    one, rss1 = timed([FP, "publish", "--build", "--now", NOW], d)
    second = os.path.realpath(os.path.join(d, "public/current"))
    a, b = index_files(first), index_files(second)
    new = sum(1 for p, ino in b.items() if a.get(p) != ino)
    return cold, rss, one, rss1, new, len(b), d


def main(ns):
    os.makedirs(WORK, exist_ok=True)
    print("| N | search | cold s | cold RSS MiB | after one s | index files | new index files after one |")
    print("|---|---|---|---|---|---|---|")
    for n in ns:
        corpus = os.path.join(WORK, f"corpus-{n}")
        if not os.path.isdir(corpus):
            subprocess.run([sys.executable, GEN, str(n), corpus], check=True, stdout=subprocess.DEVNULL)
        rows = {}
        for k in range(int(os.environ.get("ROUNDS", "3"))):
            for search in (False, True):
                rows.setdefault(search, []).append(one_round(corpus, n, search, k))
        for search in (False, True):
            r = rows[search]
            med = lambda i: statistics.median(x[i] for x in r)
            print(f"| {n:,} | {'yes' if search else 'no'} | {med(0):.2f} | {med(1):.0f} | {med(2):.3f} | {r[-1][5]} | {r[-1][4]} |")
        plain, withs = rows[False], rows[True]
        c = statistics.median(x[0] for x in withs) / statistics.median(x[0] for x in plain)
        o = statistics.median(x[2] for x in withs) / statistics.median(x[2] for x in plain)
        print(f"ratios at {n:,}: cold {c:.2f}x, after one {o:.2f}x")
        pf = os.environ.get("PAGEFIND")
        if pf:
            rev = os.path.realpath(os.path.join(withs[-1][6], "public/current"))
            out = os.path.join(WORK, f"pf-{n}")
            shutil.rmtree(out, ignore_errors=True)
            wall, rss = timed([pf, "--site", rev, "--output-path", out], WORK)
            print(f"Pagefind CLI on the same revision's HTML at {n:,}: {wall:.2f} s, {rss:.0f} MiB")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [10000])
