"""`scripts/bench ledger-d1 [N ...]`: the ledger in D1 (issue 51) against SQLite, PostgreSQL
and a bucket, in the same run, all on loopback.

D1 is the ledger proxy (edge/cloudflare/ledger-proxy.js) in workerd through miniflare with a
local D1 (edge/cloudflare/d1-dev.mjs), which counts the batches it receives; the bucket is moto
behind scripts/bench's counting proxy; PostgreSQL is a throw-away cluster.

For each N (default 1000 10000) a site with N published items is made on SQLite and copied
(`ledger copy`) into PostgreSQL, the bucket and D1; then, three rounds each, medians, by a
fresh runner (a checkout with no `.fencepost/`; SQLite's runner is the site that holds it):
  - one-item publish: wall time and requests (batches on D1, HTTP requests on the bucket);
  - one-item publish --build: wall time (a fresh runner builds every page);
  - one-item publish by a warm runner (its replica kept): requests — what `run` pays per cycle.
Then 1,000 due items on an empty ledger, published by 1 runner and by 4 racing runners (fresh
checkouts; on SQLite, 4 processes on one site): wall time, each item published once, verify.

Target (issue 51): 4 racing publishers publish 1,000 items in under 30 s on D1; a one-item
publish makes O(1) requests whatever the ledger's size.
"""
import json, os, shutil, statistics, subprocess, sys, urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_edge  # noqa: E402  (ensure_miniflare)
from bench_ledger import checkout, new_item, race_sites, timed  # noqa: E402

TOKEN = "bench-d1-token"


class D1:
    """A d1-dev.mjs server over its own folder; `stats()` answers what it received since the
    last call, in the counting proxy's keys."""

    def __init__(self, b, folder):
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        self.p = subprocess.Popen(
            ["node", os.path.join(bench_edge.edge_dir(b), "d1-dev.mjs"), "--port", "0", "--persist", folder,
             "--token", TOKEN, "--watch-stdin"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(folder + ".log", "w"), start_new_session=True)
        line = json.loads(self.p.stdout.readline())
        self.addr = line["listening"]
        self.url = "d1+" + self.addr
        self.last = self._raw()

    def _raw(self):
        with urllib.request.urlopen(f"{self.addr}/__fencepost/d1-stats") as r:
            return json.loads(r.read())

    def stats(self):
        now = self._raw()
        d = {"requests": now["batches"] - self.last["batches"], "get_bytes": 0,
             "put_bytes": now["bytes"] - self.last["bytes"]}
        self.last = now
        return d

    def stop(self):
        try:
            os.killpg(self.p.pid, 9)
        except ProcessLookupError:
            pass
        self.p.wait()


def rounds(b, label, repo, env, fresh, counter, next_id):
    """Three rounds of (one-item publish, one-item publish --build, warm one-item publish)."""
    rows = {"publish": [], "requests": [], "publish_build": [], "warm_requests": []}
    warm = repo + "-warm"
    if fresh:
        checkout(b, repo, warm)
        timed(b, ["--site", warm, "status", "--json"], env)  # its replica, read once
    for _ in range(3):
        item = next_id()
        new_item(b, repo, item)
        where = checkout(b, repo, repo + "-run") if fresh else repo
        counter.stats()
        dt, out = timed(b, ["--site", where, "publish", "--json", "--now", b.LATER], env)
        assert json.loads(out)["published"] == [item], out[:500]
        rows["publish"].append(dt)
        requests = counter.stats()["requests"]
        if requests is not None:
            rows["requests"].append(requests)
        new_item(b, repo, next_id())
        where = checkout(b, repo, repo + "-run") if fresh else repo
        shutil.rmtree(os.path.join(where, "public"), ignore_errors=True)
        dt, _ = timed(b, ["--site", where, "publish", "--build", "--json", "--now", b.LATER], env)
        rows["publish_build"].append(dt)
        if fresh:
            # A warm runner: its replica kept from the last round, the new files copied in.
            item = next_id()
            new_item(b, repo, item)
            shutil.copytree(os.path.join(repo, "content"), os.path.join(warm, "content"), dirs_exist_ok=True)
            counter.stats()
            timed(b, ["--site", warm, "publish", "--json", "--now", b.LATER], env)
            requests = counter.stats()["requests"]
            if requests is not None:
                rows["warm_requests"].append(requests)
    med = {k: (statistics.median(v) if v else None) for k, v in rows.items()}
    b.log(f"{label}: {json.dumps(med)}")
    return med


def race(b, c, engine, env, ledger, runners):
    """`runners` processes publish 1,000 due items on an empty ledger: (seconds, distinct)."""
    site = os.path.join(b.TMPFS, f"ld1-race-{engine}-{runners}")
    b.new_site(site, c)
    if engine == "sqlite":
        sites = [site] * runners
    else:
        sites = [checkout(b, site, f"{site}-{i}") for i in range(runners)]
        env = dict(env, FENCEPOST_LEDGER=ledger)
    dt, distinct, _ = race_sites(b, sites, env)
    assert distinct == 1000, distinct
    return dt


class NoCount:
    def stats(self):
        return {"requests": None}


def bench_ledger_d1(b, sizes):
    b.build_fencepost()
    bench_edge.ensure_miniflare(b)
    moto, moto_port = b.moto_server()
    proxy = b.CountingProxy(moto_port)
    s3 = dict(os.environ, AWS_ENDPOINT_URL=f"http://127.0.0.1:{proxy.port}", AWS_ACCESS_KEY_ID="bench",
              AWS_SECRET_ACCESS_KEY="bench", AWS_REGION="us-east-1", FENCEPOST_D1_TOKEN=TOKEN)
    urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{moto_port}/bench", method="PUT")).read()
    pg = b.Postgres()
    ids = iter(range(20_000_000, 30_000_000))
    servers = []
    results, races = [], []
    try:
        for n in sizes:
            c = b.corpus(b.TMPFS, n)
            site = os.path.join(b.TMPFS, f"ld1-{n}")
            b.new_site(site, c)
            subprocess.run([b.FP, "--site", site, "publish", "--now", b.NOW], check=True, stdout=subprocess.DEVNULL)
            d1 = D1(b, os.path.join(b.TMPFS, f"ld1-d1-{n}"))
            servers.append(d1)
            urls = {"postgres": pg.database(), "bucket": f"s3://bench/ld1-{n}", "d1": d1.url}
            for engine, url in urls.items():
                subprocess.run([b.FP, "--site", site, "ledger", "copy", "--to", url], check=True,
                               stdout=subprocess.DEVNULL, env=s3)
            row = {"n": n}
            for engine in ["sqlite", "postgres", "bucket", "d1"]:
                d = f"{site}-{engine}"
                shutil.rmtree(d, ignore_errors=True)
                shutil.copytree(site, d, symlinks=True)
                env = s3 if engine == "sqlite" else dict(s3, FENCEPOST_LEDGER=urls[engine])
                counter = {"bucket": proxy, "d1": d1}.get(engine, NoCount())
                row[engine] = rounds(b, f"{engine} N={n}", d, env, engine != "sqlite", counter, lambda: next(ids))
            results.append(row)
        c = b.corpus(b.TMPFS, 1000)
        for engine in ["sqlite", "postgres", "bucket", "d1"]:
            for runners in [1, 4]:
                if engine == "d1":
                    d1 = D1(b, os.path.join(b.TMPFS, f"ld1-d1-race-{runners}"))
                    servers.append(d1)
                    ledger = d1.url
                else:
                    ledger = {"postgres": pg.database(), "bucket": f"s3://bench/race-{runners}"}.get(engine)
                dt = race(b, c, engine, s3, ledger, runners)
                b.log(f"race {engine} x{runners}: {dt:.1f} s")
                races.append((engine, runners, dt))
    finally:
        for d in servers:
            d.stop()
        pg.stop()
        moto.kill()
    print("\nthe ledger in D1 (the proxy in workerd under miniflare, local D1) against SQLite, PostgreSQL "
          "and a bucket (moto), loopback, fresh runners, medians of 3\n")
    print("| N | engine | one-item publish s | requests | one-item publish --build s | warm runner's requests |")
    print("|---|---|---|---|---|---|")
    for r in results:
        for engine in ["sqlite", "postgres", "bucket", "d1"]:
            m = r[engine]
            req = "—" if m["requests"] is None else f"{m['requests']:.0f}"
            warm = "—" if m["warm_requests"] is None else f"{m['warm_requests']:.0f}"
            print(f"| {r['n']:,} | {engine} | {m['publish']:.2f} | {req} | {m['publish_build']:.2f} | {warm} |")
    print("\n1,000 due items on an empty ledger (fresh checkouts; SQLite: processes on one site)\n")
    print("| engine | 1 publisher s | 4 racing publishers s |")
    print("|---|---|---|")
    by = {(e, r): dt for e, r, dt in races}
    for engine in ["sqlite", "postgres", "bucket", "d1"]:
        print(f"| {engine} | {by[(engine, 1)]:.1f} | {by[(engine, 4)]:.1f} |")
