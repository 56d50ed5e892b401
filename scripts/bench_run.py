"""`scripts/bench run [N ...]`: embargo lag of `fencepost run`, from an item's due instant to the
first successful GET of its page, at N items already published (default 10000 100000).

Three setups in the same run, on the same site:
  - `run --serve` (the local origin in the same process);
  - `run --deploy` to moto on 127.0.0.1, read through `serve --from` (pointer TTL 1 s);
  - the usual scheduler setup, `* * * * * fencepost publish --build`: its lag is the wait to
    the next minute plus the work. The work is measured (one new due item, `publish --build`,
    median of 5); the wait is computed (an instant uniformly placed in the minute waits 30 s
    at the median, 59.4 s at p99, 60 s at most) and said to be computed.

For each of the first two, ITEMS (default 50) new items are written at once, due at instants
apart by more than one cycle takes (locally 0.5 s at 10,000 and 3 s at 100,000; through the
bucket 1 s and 5 s), so each instant is its own cycle, as on a real schedule; BENCH_RUN_SPACING
(seconds) sets one spacing for both, e.g. to see what instants closer than a cycle cost;
the items start a few seconds later. One thread polls (keep-alive, 127.0.0.1), every 10 ms,
the URL of each item due within 0.2 s and not live yet, and records its first 200: its load
does not grow when items are late (a thread per item did, and slowed the builds it timed). The run's own JSON lines give the
split: commit lag (`lags[].lag_ms`) and the rest (build, deploy, the origin seeing the pointer).
"""
import datetime, http.client, json, os, shutil, statistics, subprocess, sys, threading, time, urllib.request

ITEMS = int(os.environ.get("BENCH_RUN_ITEMS", "50"))

ITEM = '+++\nid = {id}\nday = 2026-11-29\ntitle = "Puzzle {id} answer: Scheduled"\nprice = 3.50\npublish_at = {at}\n+++\n\nThe answer is **SCHEDULED**.\n'


def rfc3339(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def pct(xs, p):
    xs = sorted(xs)
    k = (len(xs) - 1) * p
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def watch(port, dues, give_up=120.0):
    """One poller for every item: each round (every 10 ms) GETs /answers/<id>/ of each item
    whose instant is at most 0.2 s ahead and that is not live yet; records (first 200) - due in
    seconds, negative for a 200 before the instant (which fails the bench). One thread, so the
    load it puts on the origin and the two cores does not grow when items are late."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    seen = {}
    last = max(dues.values())
    while len(seen) < len(dues) and time.time() < last + give_up:
        now = time.time()
        for i, due in dues.items():
            if i in seen or due - 0.2 > now:
                continue
            try:
                conn.request("GET", f"/answers/{i}/")
                r = conn.getresponse()
                r.read()
                if r.status == 200:
                    seen[i] = time.time() - due
            except (OSError, http.client.HTTPException):
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        time.sleep(0.01)
    return seen


def schedule(site, port, first_id, spacing, lead):
    """Writes ITEMS items due `lead` s from now, `spacing` s apart; returns {id: lag s}."""
    start = time.time() + lead
    dues = {first_id + k: start + k * spacing for k in range(ITEMS)}
    for i, at in dues.items():
        with open(os.path.join(site, "content", "answers", f"{i}.md"), "w") as f:
            f.write(ITEM.format(id=i, at=rfc3339(at)))
    seen = watch(port, dues)
    missing = [i for i in dues if i not in seen]
    if missing:
        sys.exit(f"items never went live: {missing}")
    early = {i: v for i, v in seen.items() if v < 0}
    if early:
        sys.exit(f"items live BEFORE their instant: {early}")
    return seen


def summarize(label, lags, cycles, ids):
    ms = [v * 1000 for v in lags.values()]
    commit = [l["lag_ms"] for c in cycles for l in c.get("lags") or [] if l["item"] in ids]
    live = [l["live_lag_ms"] for c in cycles for l in c.get("lags") or [] if l["item"] in ids and l["live_lag_ms"] is not None]
    row = {"setup": label, "items": len(ms), "p50": statistics.median(ms), "p99": pct(ms, 0.99), "max": max(ms),
           "commit_p50": statistics.median(commit) if commit else None,
           "live_p50": statistics.median(live) if live else None}
    return row


def read_cycles(path):
    out = []
    with open(path) as f:
        for line in f:
            v = json.loads(line)
            if "cycle" in v:
                out.append(v)
    return out


def start_run(b, site, args, env, out_path):
    out = open(out_path, "w")
    p = subprocess.Popen([b.FP, "--site", site, "run", "--json"] + args, env=env, stdout=out, stderr=subprocess.DEVNULL)
    for _ in range(6000):
        if os.path.getsize(out_path) > 0:
            with open(out_path) as f:
                first = json.loads(f.readline())
            return p, first
        time.sleep(0.05)
    sys.exit("run never started")


def wait_cycles(out_path, n, timeout=600):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if len(read_cycles(out_path)) >= n:
            return
        time.sleep(0.1)
    sys.exit(f"run never finished {n} cycle(s)")


def cron_work(b, site, first_id, rounds=5):
    """One new due item, then `publish --build` (what a cron tick does): median wall seconds."""
    times = []
    for k in range(rounds):
        i = first_id + k
        with open(os.path.join(site, "content", "answers", f"{i}.md"), "w") as f:
            f.write(ITEM.format(id=i, at=rfc3339(time.time() - 1)))
        t0 = time.monotonic()
        subprocess.run([b.FP, "--site", site, "publish", "--build"], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        times.append(time.monotonic() - t0)
    return statistics.median(times), max(times)


def bench_run(b, sizes):
    b.build_fencepost()
    rows = []
    gc_rows = []
    st = os.statvfs(b.TMPFS)
    need = max(sizes) * (ITEMS + 20)
    if st.f_favail < need:
        sys.exit(f"{b.TMPFS} has {st.f_favail:,} free inodes; this bench needs about {need:,} (every revision "
                 f"is a tree of directories): mount -o remount,nr_inodes=12m /dev/shm")
    moto, moto_port = b.moto_server()
    env = dict(os.environ, AWS_ENDPOINT_URL=f"http://127.0.0.1:{moto_port}", AWS_ACCESS_KEY_ID="bench",
               AWS_SECRET_ACCESS_KEY="bench", AWS_REGION="us-east-1", FENCEPOST_LOG="warn")
    try:
        for n in sizes:
            forced = os.environ.get("BENCH_RUN_SPACING")
            spacing = float(forced) if forced else (0.5 if n <= 10000 else 3.0)
            deploy_spacing = float(forced) if forced else (1.0 if n <= 10000 else 5.0)
            c = b.corpus(b.TMPFS, n)
            site = os.path.join(b.TMPFS, f"run-{n}")
            b.new_site(site, c)
            bucket = f"run-{n}"
            with open(os.path.join(site, "fencepost.toml"), "a") as f:
                # A burst of 50 instants a few seconds apart: the run's gc waits for idle time
                # (run.gc_idle_secs), or until keep_revisions have piled up; 60 keeps it out of
                # the burst, and its cost per revision is timed apart, after the runs.
                f.write(f'\n[deploy]\nto = "s3://{bucket}/www"\n\n[run]\nkeep_revisions = 60\n')
            b.log(f"N={n:,}: publishing and building the corpus")
            subprocess.run([b.FP, "--site", site, "publish", "--build"], check=True, stdout=subprocess.DEVNULL)

            # 1. run --serve.
            port = b.free_port()
            out = os.path.join(b.TMPFS, f"run-{n}-serve.jsonl")
            p, _ = start_run(b, site, ["--serve", f"127.0.0.1:{port}"], env, out)
            wait_cycles(out, 1)
            b.log(f"N={n:,}: run --serve, {ITEMS} items {spacing} s apart")
            first = 20_000_000
            lags = schedule(site, port, first, spacing, lead=3.0 + spacing * 2)
            p.terminate()
            p.wait()
            rows.append((n, summarize(f"run --serve (local origin), instants {spacing:g} s apart", lags, read_cycles(out), set(lags))))

            # What the run's gc costs per revision, once the burst is over (and so that the
            # second burst has the inodes it needs).
            revs = [d for d in os.listdir(os.path.join(site, "public", "revisions")) if not d.startswith(".")]
            t0 = time.monotonic()
            g = json.loads(subprocess.run([b.FP, "--site", site, "gc", "--keep", "1", "--grace-secs", "0", "--json"],
                                          check=True, capture_output=True, text=True).stdout)
            gc_s = time.monotonic() - t0
            b.log(f"N={n:,}: gc removed {len(g['removed'])} of {len(revs)} revisions in {gc_s:.1f} s = "
                  f"{gc_s / max(1, len(g['removed'])):.2f} s per revision")
            gc_rows.append((n, len(g["removed"]), gc_s))

            # 2. run --deploy + serve --from.
            b.log(f"N={n:,}: first full deploy to moto")
            urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{moto_port}/{bucket}", method="PUT")).read()
            subprocess.run([b.FP, "--site", site, "deploy"], check=True, env=env, stdout=subprocess.DEVNULL)
            out = os.path.join(b.TMPFS, f"run-{n}-deploy.jsonl")
            p, _ = start_run(b, site, ["--deploy"], env, out)
            wait_cycles(out, 1)
            oport = b.free_port()
            origin = subprocess.Popen([b.FP, "--site", site, "serve", "--bind", f"127.0.0.1:{oport}", "--from",
                                       f"s3://{bucket}/www"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            b.wait_http(f"http://127.0.0.1:{oport}/answers/1/")
            b.log(f"N={n:,}: run --deploy + serve --from, {ITEMS} items {deploy_spacing} s apart")
            first = 21_000_000
            lags = schedule(site, oport, first, deploy_spacing, lead=3.0 + deploy_spacing * 2)
            p.terminate()
            p.wait()
            origin.terminate()
            origin.wait()
            rows.append((n, summarize(f"run --deploy + serve --from (moto, TTL 1 s, hot 100 ms), instants {deploy_spacing:g} s apart", lags, read_cycles(out), set(lags))))

            # 3. cron: the work measured, the wait computed.
            work, work_max = cron_work(b, site, 22_000_000)
            rows.append((n, {"setup": "cron `* * * * * publish --build` (wait computed + work measured)",
                             "items": 5, "p50": 30_000 + work * 1000, "p99": 59_400 + work * 1000,
                             "max": 60_000 + work_max * 1000, "commit_p50": None, "live_p50": None,
                             "work": work}))
            # The site holds some 60 revisions of n files now (the deploy burst's): gone, so a
            # tmpfs with a bounded inode count (/dev/shm) is not left full for what runs next.
            shutil.rmtree(site, ignore_errors=True)
    finally:
        moto.kill()
    print("\nEmbargo lag: due instant to the first 200 for the page (ms); 2 cores shared by the run, the origin, moto and the pollers\n")
    print("| N | setup | items | p50 | p99 | max | run's commit lag p50 | run's live lag p50 |")
    print("|---|---|---|---|---|---|---|---|")
    for n, r in rows:
        f = lambda v: "—" if v is None else f"{v:,.0f}"
        print(f"| {n:,} | {r['setup']} | {r['items']} | {f(r['p50'])} | {f(r['p99'])} | {f(r['max'])} | "
              f"{f(r['commit_p50'])} | {f(r['live_p50'])} |")
    for n, removed, secs in gc_rows:
        print(f"N={n:,}: the run's gc, after the burst: {removed} revisions removed in {secs:.1f} s "
              f"({secs / max(1, removed):.2f} s each)")
    for n, r in rows:
        if "work" in r:
            print(f"N={n:,}: a cron tick's work (one new item, publish --build) median {r['work']:.2f} s; "
                  f"the run's p50 is {r['p50'] / next(x for m, x in rows if m == n)['p50']:.0f}x lower")
