"""`scripts/bench ledger-bucket [N ...]`: the ledger kept in a bucket against a local SQLite
ledger and PostgreSQL, in the same run (issue 37).

For each N (default 1000 10000) a site with N published items is made on SQLite, then copied
(`ledger copy`) into PostgreSQL (a throw-away cluster on 127.0.0.1) and into a bucket on moto
(on 127.0.0.1, behind a proxy that counts requests and bytes). Then, three times each, median:
  - first read: a fresh runner (a checkout with no `.fencepost/`) runs `status`;
  - one-item publish: a fresh runner with one new item runs `publish` (requests, bytes read
    and written at the proxy for the bucket);
  - one-item publish --build: the same with the build (a fresh runner builds every page).
SQLite has no fresh runner (the ledger is the runner's file): its rows are the same commands in
the site that holds it, with `public/` removed before a build, for comparison.
Then 4 fresh runners race `publish` of 1,000 due items on an empty bucket ledger: wall time,
each item published once.

With OLD_FP set to another fencepost binary (the previous main, built in release), its bucket
rows and its race are measured in the same run, each binary on a site and ledger copy of its
own (a newer binary migrates a ledger the older one then refuses): the before/after for a
change to the bucket engine (issue 46: the checks it added must cost no regression).
"""
import json, os, shutil, statistics, subprocess, sys, time, urllib.request


def checkout(b, site, dst):
    """A fresh runner's checkout of `site`: its files without `.fencepost/` and `public/`."""
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(site, dst, ignore=shutil.ignore_patterns(".fencepost", "public"))
    return dst


def timed(b, args, env):
    t0 = time.monotonic()
    p = subprocess.run([b.FP] + args, capture_output=True, text=True, env=env)
    dt = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit(f"{args} failed:\n{p.stderr[-3000:]}")
    return dt, p.stdout


def new_item(b, site, new_id):
    with open(os.path.join(site, "content", "answers", f"{new_id}.md"), "w") as f:
        f.write(b.NEW_ITEM_FP.format(id=new_id))


def measure(b, label, repo, env, fresh, proxy, next_id):
    """Three rounds of (first read, one-item publish, one-item publish --build); medians.
    New items are written into `repo` (this engine's copy of the site, as a git repository
    would hold them); a fresh runner is a checkout of it made after."""
    rows = {"read": [], "publish": [], "publish_build": [], "requests": [], "read_bytes": [], "written_bytes": []}
    run_dir = repo + "-run"

    def runner():
        return checkout(b, repo, run_dir) if fresh else repo

    for _ in range(3):
        where = runner()
        proxy.stats()
        dt, _ = timed(b, ["--site", where, "status", "--json"], env)
        rows["read"].append(dt)
        item = next_id()
        new_item(b, repo, item)
        where = runner()
        proxy.stats()
        dt, out = timed(b, ["--site", where, "publish", "--json", "--now", b.LATER], env)
        assert json.loads(out)["published"] == [item], out[:500]
        s = proxy.stats()
        rows["publish"].append(dt)
        rows["requests"].append(s["requests"])
        rows["read_bytes"].append(s["get_bytes"])
        rows["written_bytes"].append(s["put_bytes"])
        new_item(b, repo, next_id())
        where = runner()
        shutil.rmtree(os.path.join(where, "public"), ignore_errors=True)
        dt, out = timed(b, ["--site", where, "publish", "--build", "--json", "--now", b.LATER], env)
        rows["publish_build"].append(dt)
    med = {k: statistics.median(v) for k, v in rows.items()}
    b.log(f"{label}: {json.dumps(med)}")
    return med


def race(b, c, env, base):
    """4 fresh runners publish 1,000 due items on an empty bucket ledger."""
    site = os.path.join(b.TMPFS, "lb-race")
    b.new_site(site, c)
    runners = [checkout(b, site, os.path.join(b.TMPFS, f"lb-race-{i}")) for i in range(4)]
    env = dict(env, FENCEPOST_LEDGER=f"{base}/race")
    return race_sites(b, runners, env)


def race_sites(b, sites, env):
    """`publish` in each of `sites` at once (separate processes): (seconds, distinct items
    published, items per runner), each item checked published once and `verify` intact."""
    t0 = time.monotonic()
    procs = [subprocess.Popen([b.FP, "--site", r, "publish", "--json", "--now", b.NOW], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=env) for r in sites]
    outs = [p.communicate() for p in procs]
    dt = time.monotonic() - t0
    for p, (o, e) in zip(procs, outs):
        if p.returncode != 0:
            sys.exit(f"racing runner failed:\n{e.decode()[-3000:]}")
    ids = [i for o, _ in outs for i in json.loads(o)["published"]]
    _, out = timed(b, ["--site", sites[0], "status", "--json"], env)
    status = json.loads(out)
    assert len(ids) == len(set(ids)) == status["revision"], (len(ids), len(set(ids)), status["revision"])
    subprocess.run([b.FP, "--site", sites[0], "verify"], check=True, stdout=subprocess.DEVNULL, env=env)
    return dt, len(set(ids)), [len(json.loads(o)["published"]) for o, _ in outs]


def bucket_only(b, fp, n, c, s3, proxy, counter):
    """The bucket rows for binary `fp`: its own SQLite site of N items, copied into a bucket
    prefix of its own, then measured like the others."""
    was = b.FP
    b.FP = fp
    try:
        site = os.path.join(b.TMPFS, f"lb-old-{n}")
        b.new_site(site, c)
        subprocess.run([fp, "--site", site, "publish", "--now", b.NOW], check=True, stdout=subprocess.DEVNULL)
        url = f"s3://bench/ledger-old-{n}"
        subprocess.run([fp, "--site", site, "ledger", "copy", "--to", url], check=True,
                       stdout=subprocess.DEVNULL, env=s3)
        d = f"{site}-bucket"
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(site, d, symlinks=True)
        return measure(b, f"bucket (OLD_FP) N={n}", d, dict(s3, FENCEPOST_LEDGER=url), True, proxy,
                       lambda: next(counter))
    finally:
        b.FP = was


def bench_ledger(b, sizes):
    b.build_fencepost()
    old = os.environ.get("OLD_FP")
    moto, moto_port = b.moto_server()
    proxy = b.CountingProxy(moto_port)
    endpoint = f"http://127.0.0.1:{proxy.port}"
    s3 = dict(os.environ, AWS_ENDPOINT_URL=endpoint, AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench",
              AWS_REGION="us-east-1")
    urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{moto_port}/bench", method="PUT")).read()
    pg = b.Postgres()
    counter = iter(range(20_000_000, 30_000_000))
    results = []
    try:
        for n in sizes:
            c = b.corpus(b.TMPFS, n)
            site = os.path.join(b.TMPFS, f"lb-{n}")
            b.new_site(site, c)
            subprocess.run([b.FP, "--site", site, "publish", "--now", b.NOW], check=True, stdout=subprocess.DEVNULL)
            pg_url = pg.database()
            bucket_url = f"s3://bench/ledger-{n}"
            subprocess.run([b.FP, "--site", site, "ledger", "copy", "--to", pg_url], check=True, stdout=subprocess.DEVNULL)
            subprocess.run([b.FP, "--site", site, "ledger", "copy", "--to", bucket_url], check=True,
                           stdout=subprocess.DEVNULL, env=s3)
            row = {"n": n}
            def repo(engine):
                """This engine's copy of the site (SQLite's holds its ledger; the others' do not
                matter, their runners are fresh checkouts)."""
                d = f"{site}-{engine}"
                shutil.rmtree(d, ignore_errors=True)
                shutil.copytree(site, d, symlinks=True)
                return d
            row = {"n": n}
            row["sqlite"] = measure(b, f"sqlite N={n}", repo("sqlite"), dict(os.environ), False, proxy,
                                    lambda: next(counter))
            row["postgres"] = measure(b, f"postgres N={n}", repo("postgres"), dict(os.environ, FENCEPOST_LEDGER=pg_url),
                                      True, proxy, lambda: next(counter))
            row["bucket"] = measure(b, f"bucket N={n}", repo("bucket"), dict(s3, FENCEPOST_LEDGER=bucket_url), True,
                                    proxy, lambda: next(counter))
            if old:
                row["bucket (OLD_FP)"] = bucket_only(b, old, n, c, s3, proxy, counter)
            results.append(row)
        c = b.corpus(b.TMPFS, 1000)
        race_s, distinct, per = race(b, c, s3, "s3://bench")
        old_race = None
        if old:
            was, b.FP = b.FP, old
            try:
                old_race = race(b, c, s3, "s3://bench/old")
            finally:
                b.FP = was
    finally:
        pg.stop()
        moto.kill()
    print("\nthe ledger in a bucket (moto on 127.0.0.1, counted at a proxy) against SQLite and PostgreSQL, medians of 3\n")
    print("| N | engine | fresh runner's first read s | one-item publish s | requests | bytes read | bytes written | one-item publish --build s |")
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        for engine in [e for e in ["sqlite", "postgres", "bucket", "bucket (OLD_FP)"] if e in r]:
            m = r[engine]
            io = (f"{m['requests']:.0f} | {m['read_bytes']:,.0f} | {m['written_bytes']:,.0f}"
                  if engine.startswith("bucket") else "— | — | —")
            print(f"| {r['n']:,} | {engine} | {m['read']:.2f} | {m['publish']:.2f} | {io} | {m['publish_build']:.2f} |")
    print(f"\n4 fresh runners racing `publish` of 1,000 due items on an empty bucket ledger: {race_s:.1f} s, "
          f"{distinct} distinct items, per runner {per}, each published once, verify intact")
    if old_race:
        print(f"the same with OLD_FP: {old_race[0]:.1f} s, {old_race[1]} distinct items, per runner {old_race[2]}")
