"""`scripts/bench tlog [N ...]`: what the transparency log costs (issue 50).

The generated corpus at each N (default 10000 100000) as two fencepost sites that differ only
in `[transparency] log = true` (and `commit_before_reveal = true` on the one collection, the
default collection written out). Both publish every item first. Measured in the same run,
rounds interleaved (without, with, without, ...), median of 3:

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


def make_site(b, site, c, logged):
    b.new_site(site, c)
    with open(os.path.join(site, "fencepost.toml"), "a") as f:
        f.write(COLLECTION % ("commit_before_reveal = true" if logged else ""))
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
        sites = {logged: os.path.join(b.TMPFS, f"tlog-{'on' if logged else 'off'}-{n}") for logged in (False, True)}
        for logged, site in sites.items():
            make_site(b, site, c, logged)
        first, _, _ = b.run([b.FP, "--site", sites[True], "build", "--json"])
        cold = {False: [], True: []}
        for _ in range(runs):
            for logged, site in sites.items():
                shutil.rmtree(os.path.join(site, "public"), ignore_errors=True)
                dt, _, _ = b.run([b.FP, "--site", site, "build", "--json"])
                cold[logged].append(dt)
        inc = {False: [], True: []}
        tiles = []
        for k in range(runs):
            new_id = 10_000_000 + k
            time.sleep(2.1)  # let the stat cache trust the unchanged tree
            for logged, site in sites.items():
                with open(os.path.join(site, "content", "answers", f"{new_id}.md"), "w") as f:
                    f.write(b.NEW_ITEM_FP.format(id=new_id))
                dt, _, _ = b.run([b.FP, "--site", site, "publish", "--build", "--now", b.LATER, "--json"])
                inc[logged].append(dt)
                if logged:
                    tiles.append(log_files_written(site))
        row = {
            "n": n, "first_build_with_log_s": first,
            "cold_without_s": med(cold[False]), "cold_with_s": med(cold[True]),
            "inc_without_s": med(inc[False]), "inc_with_s": med(inc[True]),
            "log_files_written": [t[0] for t in tiles], "log_size": tiles[-1][1],
        }
        b.log(json.dumps(row))
        rows.append(row)
        for site in sites.values():
            shutil.rmtree(site, ignore_errors=True)
    print("\nthe transparency log's cost, median of 3 (seconds), rounds interleaved")
    print("| N | log entries | cold build without / with (ratio) | one new item, publish --build, without / with (ratio) | log files written per new revision | the log site's first build |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['n']:,} | {r['log_size']:,} | {r['cold_without_s']:.2f} / {r['cold_with_s']:.2f} ({r['cold_with_s'] / r['cold_without_s']:.2f}x) | "
              f"{r['inc_without_s']:.3f} / {r['inc_with_s']:.3f} ({r['inc_with_s'] / r['inc_without_s']:.2f}x) | "
              f"{', '.join(str(t) for t in r['log_files_written'])} | {r['first_build_with_log_s']:.2f} |")
