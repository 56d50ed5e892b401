"""`scripts/bench edge [N]`: the edge Worker under miniflare against `serve --from` on the same
bucket and machine (issue 23).

An N-item site (default 10000) is built and deployed to a folder; the Worker (workerd, through
edge/cloudflare/dev.mjs, its R2 bucket copied from that folder) and `serve --from file://` on
the same folder are each warmed (every page requested once), then measured with wrk (-t1 -c32,
a random item page per request, 10 s), three rounds interleaved: requests/s and p99, medians.
In the same rounds, a hello-world Worker under the same miniflare: the simulator's own floor,
so what is the Worker's and what is miniflare's can be told apart. With `--stats` the Worker
counts its own R2 reads: the reads per 1,000 requests of each warm run, by kind (target: the
pointer only, at most one per POINTER_TTL_MS per isolate), and its Cache API hits.

2 cores are shared by wrk, the origin and (for the Worker) node + workerd: ratios in one run
are what to read, not absolute figures.
"""
import json, os, statistics, subprocess, sys, time, urllib.request


def edge_dir(b):
    return os.path.join(b.HERE, "edge", "cloudflare")


def ensure_miniflare(b):
    if not os.path.isdir(os.path.join(edge_dir(b), "node_modules", "miniflare")):
        b.log("installing miniflare into edge/cloudflare (npm ci)")
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=edge_dir(b), check=True)


def start_edge(b, bucket, ttl_ms):
    p = subprocess.Popen(["node", os.path.join(edge_dir(b), "dev.mjs"), "--bucket", f"file://{bucket}",
                          "--port", "0", "--pointer-ttl-ms", str(ttl_ms), "--stats"],
                         stdout=subprocess.PIPE, text=True, start_new_session=True)
    for line in p.stdout:
        v = json.loads(line)
        if "listening" in v:
            # Keep reading its sync lines so its stdout never fills.
            import threading
            threading.Thread(target=lambda: [None for _ in p.stdout], daemon=True).start()
            return p, v["listening"]
    sys.exit("the edge Worker did not start")


def stop(p):
    import signal
    try:
        os.killpg(p.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()


FLOOR = """
import { Miniflare } from "miniflare";
const body = "x".repeat(4000);
const mf = new Miniflare({ modules: true, compatibilityDate: "2024-09-23", host: "127.0.0.1", port: 0,
  script: `export default { fetch() { return new Response(${JSON.stringify(body)}, { headers: { "content-type": "text/html" } }); } }` });
const url = await mf.ready;
console.log(JSON.stringify({ listening: `${url.hostname}:${url.port}` }));
process.on("SIGTERM", async () => { await mf.dispose(); process.exit(0); });
"""


def start_floor(b):
    p = subprocess.Popen(["node", "--input-type=module", "-e", FLOOR], cwd=edge_dir(b), stdout=subprocess.PIPE,
                         text=True, start_new_session=True)
    return p, json.loads(p.stdout.readline())["listening"]


def warm_every_page(addr, n):
    """Every page requested once (8 at a time), so the measured runs are not first fetches."""
    from concurrent.futures import ThreadPoolExecutor

    def get(i):
        with urllib.request.urlopen(f"http://{addr}/answers/{i}/", timeout=60) as r:
            r.read()
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(get, range(1, n + 1)))


def stats(addr):
    with urllib.request.urlopen(f"http://{addr}/__fencepost/edge-stats", timeout=10) as r:
        return json.load(r)


def bench_edge(b, n, ttl_ms=1000, rounds=3):
    b.build_fencepost()
    b.ensure_tool("wrk", "wrk")
    ensure_miniflare(b)
    c = b.corpus(b.TMPFS, n)
    site = os.path.join(b.TMPFS, f"edge-{n}")
    b.new_site(site, c)
    b.log(f"building {n:,} items")
    subprocess.run([b.FP, "--site", site, "publish", "--build", "--now", b.NOW], check=True, stdout=subprocess.DEVNULL)
    bucket = os.path.join(site, "bucket")
    subprocess.run([b.FP, "--site", site, "deploy", "--to", f"file://{bucket}", "--now", b.NOW], check=True,
                   stdout=subprocess.DEVNULL)
    script = os.path.join(b.TMPFS, "random-page.lua")
    open(script, "w").write(b.WRK_RANDOM_PAGE.format(n=n))
    every = os.path.join(b.TMPFS, "every-page.lua")
    open(every, "w").write(b.WRK_EVERY_PAGE.format(n=n))

    b.log("starting the Worker under miniflare (copying the bucket into its R2)")
    t0 = time.monotonic()
    edge, edge_addr = start_edge(b, bucket, ttl_ms)
    copy_s = time.monotonic() - t0
    port = b.free_port()
    env = dict(os.environ, FENCEPOST_LOG="warn")
    with open(os.path.join(site, "fencepost.toml"), "a") as f:
        f.write(f"\n[serve]\npointer_ttl_ms = {ttl_ms}\n")
    srv = subprocess.Popen([b.FP, "--site", site, "serve", "--bind", f"127.0.0.1:{port}", "--from", f"file://{bucket}"],
                           env=env, stdout=subprocess.DEVNULL)
    from_addr = f"127.0.0.1:{port}"
    floor, floor_addr = start_floor(b)
    rows = {"edge": [], "from": [], "floor": []}
    reads = []
    try:
        b.wait_http(f"http://{from_addr}/answers/1/")
        b.wait_http(f"http://{edge_addr}/answers/1/")
        b.log("warming both (every page once)")
        warm_every_page(edge_addr, n)
        warm_every_page(from_addr, n)
        for r in range(rounds):
            b.log(f"round {r + 1}/{rounds}")
            before = stats(edge_addr)
            t = time.monotonic()
            rows["edge"].append(b.wrk_script(f"http://{edge_addr}", script, 10))
            secs = time.monotonic() - t
            after = stats(edge_addr)
            requests = after["requests"] - before["requests"] - 1
            delta = {k: after["reads"][k] - before["reads"][k] for k in after["reads"]}
            hits = after["cache_hits"] - before["cache_hits"]
            reads.append((requests, delta, secs, hits))
            rows["from"].append(b.wrk_script(f"http://{from_addr}", script, 10))
            rows["floor"].append(b.wrk_script(f"http://{floor_addr}", script, 10))
    finally:
        stop(edge)
        stop(floor)
        srv.terminate()
        srv.wait()

    def ms(p99):
        return float(p99[:-2]) if p99.endswith("ms") else float(p99[:-2]) / 1000 if p99.endswith("us") else float(p99[:-1]) * 1000

    med = {k: (statistics.median(r[0] for r in v), statistics.median(ms(r[1]) for r in v),
               sum(r[3] for r in v)) for k, v in rows.items()}
    print(f"\nwrk -t1 -c32, a random item page per request, N={n:,}, 10 s x {rounds} rounds interleaved, "
          f"every page fetched once before; pointer TTL {ttl_ms} ms on both; 2 cores shared with wrk "
          f"(and node + workerd for the Worker). The Worker's bucket was copied into its R2 in {copy_s:.1f} s.\n")
    print("| origin | requests/s (median) | p99 (median) | non-2xx (all rounds) | vs `serve --from` |")
    print("|---|---|---|---|---|")
    f_rps = med["from"][0]
    for k, name in (("edge", "edge Worker (workerd via miniflare, R2 + Cache API)"), ("from", "`serve --from file://`"),
                    ("floor", "floor: a hello-world Worker under the same miniflare (4 KB body, no I/O)")):
        rps, p99, bad = med[k]
        print(f"| {name} | {rps:,.0f} | {p99:.2f} ms | {bad} | {rps / f_rps:.2f}x |")
    print("\nThe Worker's R2 reads with a warm cache, per 1,000 requests (each round):\n")
    print("| round | requests | seconds | pointer | root | shard | blob | R2 reads per 1,000 requests | pointer reads allowed (1 per TTL) | Cache API hits |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for i, (req, d, secs, hits) in enumerate(reads):
        total = sum(d.values())
        print(f"| {i + 1} | {req:,} | {secs:.1f} | {d['pointer']} | {d['root']} | {d['shard']} | {d['blob']} | "
              f"{total * 1000 / max(req, 1):.3f} | {int(secs * 1000 / ttl_ms) + 1} | {hits} |")
