"""`scripts/bench slow-clients [N]`: real clients' latency while slow clients attack every slot
(issue 35, point 9), `fencepost serve` at its defaults against nginx at Debian's default
limits (worker_processes auto, worker_connections 768, client_header_timeout and send_timeout
60 s), on the same public/current (N items, default 1000, plus a 16 MiB static file), in the
same run.

The attack, from eight loopback addresses (127.0.0.2-9), 1,600 connections: half are slow
readers (a 4 KiB receive buffer, GET the 16 MiB file, take a byte every 200 ms, reconnect when
cut), half send one real request, read it, then trickle the next head a byte every 200 ms (and
reconnect when cut). After 3 s of attack, a real client from 127.0.0.1 makes 30 requests (a
new connection each, 200 ms apart, a 10 s timeout): median and max latency, and failures.
"""
import asyncio, os, socket, statistics, subprocess, sys, time


async def small_buffer_connection(ip, port):
    """A connection from `ip` with a 4 KiB receive buffer (the server's writes are held back
    at once)."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.bind((ip, 0))
    s.setblocking(False)
    await asyncio.get_running_loop().sock_connect(s, ("127.0.0.1", port))
    return await asyncio.open_connection(sock=s)


async def read_page(r, w):
    """One real request, its page read whole."""
    w.write(b"GET /answers/1/ HTTP/1.1\r\nHost: x\r\n\r\n")
    got = b""
    while b"</html>" not in got:
        chunk = await r.read(65536)
        if not chunk:
            break
        got += chunk


async def dribble(w, stop, byte, every):
    """Writes `byte` every `every` seconds until stopped or cut."""
    while not stop.is_set():
        w.write(byte)
        await w.drain()
        await asyncio.sleep(every)


async def slow_reader(ip, port, stop):
    while not stop.is_set():
        try:
            r, w = await small_buffer_connection(ip, port)
            w.write(b"GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n")
            while not stop.is_set():
                if not await r.read(1):
                    break
                await asyncio.sleep(0.2)
            w.close()
        except OSError:
            await asyncio.sleep(0.05)


async def stalled_reader(ip, port, stop):
    """Asks for a page, then for the large file, and never reads it; reconnects when cut."""
    while not stop.is_set():
        try:
            r, w = await small_buffer_connection(ip, port)
            await read_page(r, w)
            w.write(b"GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n")
            # Never read again; a byte of a next head now and then notices a cut.
            await dribble(w, stop, b"G", 0.3)
            w.close()
        except OSError:
            await asyncio.sleep(0.05)


async def trickler(ip, port, stop):
    while not stop.is_set():
        try:
            r, w = await asyncio.open_connection("127.0.0.1", port, local_addr=(ip, 0))
            await read_page(r, w)
            w.write(b"GET / HTTP/1.1\r\nHost: x\r\n")
            await dribble(w, stop, b"X", 0.2)
            w.close()
        except OSError:
            await asyncio.sleep(0.05)


def real_client(port, n=30):
    import http.client
    times, failed, slow = [], 0, []
    for i in range(n):
        t = time.monotonic()
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            c.request("GET", "/answers/1/")
            ok = c.getresponse().status == 200
            c.close()
        except OSError:
            ok = False
        took = time.monotonic() - t
        if ok:
            times.append(took)
            if took > 1:
                slow.append(f"#{i + 1}: {took:.1f} s")
        else:
            failed += 1
        time.sleep(0.2)
    return times, failed, slow


async def attacked(port, many=False):
    stop = asyncio.Event()
    tasks = []
    if many:
        for i in range(150):
            ip = f"127.0.1.{1 + i}"
            tasks.append(asyncio.create_task(stalled_reader(ip, port, stop)))
    else:
        for i in range(8):
            ip = f"127.0.0.{2 + i}"
            for _ in range(100):
                tasks.append(asyncio.create_task(slow_reader(ip, port, stop)))
                tasks.append(asyncio.create_task(trickler(ip, port, stop)))
    await asyncio.sleep(3)
    times, failed, slow = await asyncio.to_thread(real_client, port)
    stop.set()
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return times, failed, slow


def bench_slow(b, n):
    import resource
    # 1,600 client sockets, and servers with up to a thousand each: the soft limit of open
    # files goes to the hard one, for this process and the servers it starts.
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    b.build_fencepost()
    b.ensure_tool("nginx", "nginx")
    c = b.corpus(b.TMPFS, n)
    site = os.path.join(b.TMPFS, f"slow-{n}")
    b.new_site(site, c)
    os.makedirs(os.path.join(site, "static"), exist_ok=True)
    with open(os.path.join(site, "static", "big.bin"), "wb") as f:
        f.write(b"\x07" * (16 << 20))
    subprocess.run([b.FP, "--site", site, "publish", "--build", "--now", b.NOW], check=True, stdout=subprocess.DEVNULL)
    rows = []
    env = dict(os.environ, FENCEPOST_LOG="error")
    toml = os.path.join(site, "fencepost.toml")
    plain = open(toml).read()
    for name, many, extra in [
        ("fencepost serve (defaults)", False, ""),
        ("fencepost serve (max_connections = 128)", True, "\n[serve]\nmax_connections = 128\n"),
    ]:
        open(toml, "w").write(plain + extra)
        port = b.free_port()
        fp = subprocess.Popen([b.FP, "--site", site, "serve", "--bind", f"127.0.0.1:{port}"], env=env, stdout=subprocess.DEVNULL)
        try:
            b.wait_http(f"http://127.0.0.1:{port}/answers/1/")
            rows.append((name, many) + asyncio.run(attacked(port, many)))
        finally:
            fp.terminate()
            fp.wait()
    open(toml, "w").write(plain)
    nport = b.free_port()
    conf = os.path.join(b.TMPFS, "nginx-slow.conf")
    open(conf, "w").write(f"""worker_processes auto;
daemon off;
pid {b.TMPFS}/nginx-slow.pid;
error_log {b.TMPFS}/nginx-slow-error.log;
events {{ worker_connections 768; }}
http {{
    access_log off;
    sendfile on;
    include /etc/nginx/mime.types;
    server {{ listen 127.0.0.1:{nport}; root {site}/public/current; }}
}}
""")
    ng = subprocess.Popen(["nginx", "-c", conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        b.wait_http(f"http://127.0.0.1:{nport}/answers/1/")
        for many in (False, True):
            rows.append(("nginx (Debian's default limits)", many) + asyncio.run(attacked(nport, many)))
    finally:
        ng.terminate()
        ng.wait()
    print(f"\nreal-client latency under slow-client attacks, N={n:,}, 2 cores\n")
    print("| attack | server | median | p90 | max | failed of 30 | over 1 s |")
    print("|---|---|---|---|---|---|---|")
    rows.sort(key=lambda r: r[1])
    for name, many, times, failed, slow in rows:
        attack = "150 stalled readers, 150 addresses" if many else "1,600 connections, 8 addresses"
        ms = lambda v: f"{v * 1000:.0f} ms"
        med = ms(statistics.median(times)) if times else "-"
        p90 = ms(sorted(times)[int(len(times) * 0.9) - 1]) if len(times) >= 10 else "-"
        top = ms(max(times)) if times else "-"
        print(f"| {attack} | {name} | {med} | {p90} | {top} | {failed} | {', '.join(slow) or 'none'} |")
