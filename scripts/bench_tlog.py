"""`scripts/bench tlog [N ...]`: what the transparency log costs (issue 50).

The generated corpus at each N (default 10000 100000) as three fencepost sites that differ
only in the log: none; `[transparency] log = true` (revision entries: the log vouches for each
revision's manifest); and that with `commit_before_reveal = true` on the one collection (the
default collection written out), so every item is committed, revealed and served as JSON.
Each publishes every item first. Measured in the same run, rounds interleaved, median of 3:

(a) cold build: `public/` removed, `build` (the log site's first build, which appends the
    whole log, is timed apart: it happens once in a site's life);
(b) one new item, then `publish --build` in one process: seconds, and for the log site the
    log files the new revision wrote (not linked from the previous one) and the log's size.

Prints a table of the ratios: with / without.
"""
import json, os, shutil, subprocess, time

COLLECTION = """
[collections.answers]
dir = "answers"
url = "/answers/{id}/"
template = "answer.html"
list_url = "/answers/"
list_template = "list.html"
title = "All answers"
page_title = "Answers, page {number}"
id = "integer"
due = "end_of_day"
%s

[collections.answers.fields]
price = { type = "decimal", required = true, scale = 2, prefix = "$", min = 0 }
"""


KINDS = ("without", "log", "log+commit")


def make_site(b, site, c, kind):
    logged = kind != "without"
    b.new_site(site, c)
    with open(os.path.join(site, "fencepost.toml"), "a") as f:
        f.write(COLLECTION % ("commit_before_reveal = true" if kind == "log+commit" else ""))
        if logged:
            f.write('\n[transparency]\nlog = true\nskey_file = ".tlog-skey"\n')
    if logged:
        keys = json.loads(subprocess.run([b.FP, "tlog", "keygen", "bench.example/log", "--json"],
                                         check=True, capture_output=True, text=True).stdout)
        with open(os.path.join(site, ".tlog-skey"), "w") as f:
            f.write(keys["skey"] + "\n")
    subprocess.run([b.FP, "--site", site, "publish", "--now", b.NOW], check=True, stdout=subprocess.DEVNULL)


def log_files_written(site):
    """(log files of the live revision not hard-linked from another, the log's size)."""
    log = os.path.join(site, "public", "current", ".well-known", "fencepost", "log")
    written = 0
    for root, _, files in os.walk(log):
        for name in files:
            if os.stat(os.path.join(root, name)).st_nlink == 1:
                written += 1
    with open(os.path.join(log, "checkpoint")) as f:
        size = int(f.read().splitlines()[1])
    return written, size


def bench_tlog(b, sizes, runs=3):
    b.build_fencepost()
    rows = []
    med = lambda xs: sorted(xs)[len(xs) // 2]
    for n in sizes:
        c = b.corpus(b.TMPFS, n)
        sites = {k: os.path.join(b.TMPFS, f"tlog-{k.replace('+', '-')}-{n}") for k in KINDS}
        first = {}
        for kind, site in sites.items():
            make_site(b, site, c, kind)
            first[kind], _, _ = b.run([b.FP, "--site", site, "build", "--json"])
        cold = {k: [] for k in KINDS}
        for _ in range(runs):
            for kind, site in sites.items():
                shutil.rmtree(os.path.join(site, "public"), ignore_errors=True)
                dt, _, _ = b.run([b.FP, "--site", site, "build", "--json"])
                cold[kind].append(dt)
        inc = {k: [] for k in KINDS}
        tiles = {k: [] for k in KINDS[1:]}
        for r in range(runs):
            new_id = 10_000_000 + r
            time.sleep(2.1)  # let the stat cache trust the unchanged tree
            for kind, site in sites.items():
                with open(os.path.join(site, "content", "answers", f"{new_id}.md"), "w") as f:
                    f.write(b.NEW_ITEM_FP.format(id=new_id))
                dt, _, _ = b.run([b.FP, "--site", site, "publish", "--build", "--now", b.LATER, "--json"])
                inc[kind].append(dt)
                if kind in tiles:
                    tiles[kind].append(log_files_written(site))
                # Old revisions go, as `run` would remove them (a 100,000-page revision is
                # 100,000 folders: tmpfs runs out of inodes otherwise).
                subprocess.run([b.FP, "--site", site, "gc", "--keep", "1", "--grace-secs", "0"],
                               check=True, stdout=subprocess.DEVNULL)
        row = {"n": n, "first": first}
        for kind in KINDS:
            row[kind] = {"cold_s": med(cold[kind]), "inc_s": med(inc[kind])}
            if kind in tiles:
                row[kind]["log_files_written"] = [t[0] for t in tiles[kind]]
                row[kind]["log_size"] = tiles[kind][-1][1]
        b.log(json.dumps(row))
        rows.append(row)
        for site in sites.values():
            shutil.rmtree(site, ignore_errors=True)
    print("\nthe transparency log's cost, median of 3 (seconds), rounds interleaved; ratios against the site without a log")
    print("| N | site | log entries | cold build (ratio) | one new item, publish --build (ratio) | log files written per new revision | first build |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        base = r["without"]
        for kind in KINDS:
            x = r[kind]
            written = ", ".join(str(t) for t in x.get("log_files_written", [])) or "-"
            print(f"| {r['n']:,} | {kind} | {x.get('log_size', 0):,} | {x['cold_s']:.2f} ({x['cold_s'] / base['cold_s']:.2f}x) | "
                  f"{x['inc_s']:.3f} ({x['inc_s'] / base['inc_s']:.2f}x) | {written} | {r['first'][kind]:.2f} |")
