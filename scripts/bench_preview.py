"""`scripts/bench preview [N ...]`: what a preview deploy costs (issue 80).

At each N (default 10000): the generated corpus published, built and deployed to an S3 server
(moto on 127.0.0.1, object PUTs and their bytes counted at a proxy). Then one item scheduled
for the end of the year is added to the checkout, and, in the same run, measured one after
the other:

- `preview deploy pr-1 --as-of next` (the pull-request workflow's command): its build of the
  site as of that instant and its upload to the bucket's private area — PUTs, bytes, wall time;
- a second `preview deploy pr-1` of the same checkout (a re-run of the workflow);
- the public deploy of the same change at its instant (`publish --build`, then `deploy`):
  PUTs, bytes, wall time — the floor a preview cannot beat, since it uploads the same new
  pages plus its own root and pointer;
- for scale, the first full deploy of the site: what a preview that uploaded everything (a
  deploy preview on a static host) would cost.

Wall times include the process start and, for the preview, its build. Median of 3 rounds for
the times (each round a fresh preview name); PUTs and bytes do not vary.
"""
import json, os, shutil, statistics, subprocess, time, urllib.request

KEY = "7f3a9c0e5b2d4f6a8c1e3b5d7f9a0c2e4b6d8f1a3c5e7b9d0f2a4c6e8b1d3f5a"
SCHEDULED = '+++\nid = {id}\nday = 2026-12-31\ntitle = "Puzzle {id} answer: Scheduled"\nprice = 3.50\n+++\n\nThe answer is **LATER**.\n'
AT = "2027-01-02T12:00:00Z"


def bench_preview(b, sizes):
    b.build_fencepost()
    moto, moto_port = b.moto_server()
    proxy = b.CountingProxy(moto_port)
    endpoint = f"http://127.0.0.1:{proxy.port}"
    env = dict(os.environ, AWS_ENDPOINT_URL=endpoint, AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench",
               AWS_REGION="us-east-1", FENCEPOST_PREVIEW_KEY=KEY, FENCEPOST_ALLOW_FUTURE_NOW="1")
    rows = []
    try:
        for n in sizes:
            rows.append(one_size(b, n, moto_port, proxy, env))
            b.log(json.dumps(rows[-1]))
    finally:
        moto.kill()
    print("\npreview deploy after one scheduled item, to moto on 127.0.0.1 (PUTs and bytes counted at a proxy); "
          "median of 3 for times\n")
    print("| N | preview deploy: PUTs | bytes | wall s | again: PUTs, s | public deploy of the same change: PUTs | bytes | "
          "publish --build + deploy s | full deploy: PUTs, bytes |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['n']:,} | {r['preview_puts']} | {r['preview_bytes']:,} | {r['preview_s']:.2f} | "
              f"{r['again_puts']}, {r['again_s']:.2f} | {r['public_puts']} | {r['public_bytes']:,} | {r['public_s']:.2f} | "
              f"{r['full_puts']:,}, {r['full_bytes']:,} |")


def one_size(b, n, moto_port, proxy, env):
    c = b.corpus(b.TMPFS, n)
    bucket = f"preview-{n}"
    urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{moto_port}/{bucket}", method="PUT")).read()
    to = f"s3://{bucket}/www"
    site = os.path.join(b.TMPFS, f"preview-fp-{n}")
    b.new_site(site, c)
    fp = lambda *args: subprocess.run([b.FP, "--site", site, *args], check=True, capture_output=True, text=True, env=env).stdout
    fp("publish", "--build", "--now", b.NOW)
    proxy.reset()
    fp("deploy", "--to", to, "--now", b.NOW)
    full_puts, full_bytes = proxy.reset()
    new_id = 10_000_001
    with open(os.path.join(site, "content", "answers", f"{new_id}.md"), "w") as f:
        f.write(SCHEDULED.format(id=new_id))
    times, again = [], []
    for i in range(3):
        name = f"pr-{i + 1}"
        t0 = time.monotonic()
        out = json.loads(fp("preview", "deploy", name, "--to", to, "--as-of", "next", "--json"))
        times.append(time.monotonic() - t0)
        puts, put_bytes = proxy.reset()
        if i == 0:
            first, preview_puts, preview_bytes = out, puts, put_bytes
        t0 = time.monotonic()
        fp("preview", "deploy", name, "--to", to, "--as-of", "next", "--json")
        again.append(time.monotonic() - t0)
        again_puts, _ = proxy.reset()
    t0 = time.monotonic()
    fp("publish", "--build", "--now", AT)
    fp("deploy", "--to", to, "--now", AT)
    public_s = time.monotonic() - t0
    public_puts, public_bytes = proxy.reset()
    shutil.rmtree(site, ignore_errors=True)
    return {"n": n, "files": first["files"], "preview_puts": preview_puts, "preview_bytes": preview_bytes,
            "uploaded_objects": first["uploaded_objects"], "reused_public": first["reused_public"],
            "preview_s": statistics.median(times), "again_puts": again_puts, "again_s": statistics.median(again),
            "public_puts": public_puts, "public_bytes": public_bytes, "public_s": public_s,
            "full_puts": full_puts, "full_bytes": full_bytes}
