#!/usr/bin/env node
// The ledger proxy (ledger-proxy.js) on this machine, offline: miniflare (npm) runs it in
// workerd with a local D1 database — workerd's own SQLite, with D1's statement rules and
// limits — kept in DIR across restarts.
//
//   node edge/cloudflare/d1-dev.mjs --port P --persist DIR [--token T]
//        [--crash-before-batch N] [--crash-after-batch N] [--drop-answer-batch N] [--drop-answers K] [--watch-stdin]
//
// Prints one JSON line {"listening": "http://127.0.0.1:P", "token": "…"} once the proxy
// answers; point fencepost at it with ledger.url = "d1+http://127.0.0.1:P" and
// FENCEPOST_D1_TOKEN = the token. The token is --token, else the one kept in DIR/token, else a
// new random one (then kept there). --port 0 takes a free port.
//
// GET /__fencepost/d1-stats answers {"batches", "statements", "bytes"} received so far (the
// benchmark counts requests per publish with it).
//
// --watch-stdin: stop when stdin closes (the tests' handle, so a test process that dies
// leaves no server behind).
//
// Tests only: --crash-before-batch N kills this process group (node and workerd) when the
// N-th batch that writes the log arrives, before D1 sees it; --crash-after-batch N lets D1
// run it, then kills the group before the answer leaves — "a proxy killed mid-request";
// --drop-answer-batch N lets D1 run the N-th, then closes the connection without an answer and
// goes on serving — "a lost response"; with --drop-answers K, the answers of the K log-writing
// batches from the N-th on are lost (a writer's retries of the same batch among them) — "lost
// past the retries" — while every other request is answered.

import { Miniflare } from "miniflare";
import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));

function usage(why) {
  process.stderr.write(
    `d1-dev.mjs: ${why}\nusage: node edge/cloudflare/d1-dev.mjs --port P --persist DIR [--token T] [--crash-before-batch N] [--crash-after-batch N] [--drop-answer-batch N] [--drop-answers K] [--watch-stdin]\n`,
  );
  process.exit(2);
}

function parseArgs(argv) {
  const o = { port: null, persist: null, token: null, crashBefore: 0, crashAfter: 0, dropAnswer: 0, dropAnswers: 1, watchStdin: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      return argv[++i];
    };
    if (a === "--port") o.port = value();
    else if (a === "--persist") o.persist = value();
    else if (a === "--token") o.token = value();
    else if (a === "--crash-before-batch") o.crashBefore = Number(value());
    else if (a === "--crash-after-batch") o.crashAfter = Number(value());
    else if (a === "--drop-answer-batch") o.dropAnswer = Number(value());
    else if (a === "--drop-answers") o.dropAnswers = Number(value());
    else if (a === "--watch-stdin") o.watchStdin = true;
    else usage(`unknown argument ${a}`);
  }
  if (o.port === null || !/^\d+$/.test(o.port) || Number(o.port) > 65535) usage("--port P is required");
  if (!o.persist) usage("--persist DIR is required");
  o.persist = path.resolve(o.persist);
  return o;
}

async function tokenFor(o) {
  if (o.token) return o.token;
  const file = path.join(o.persist, "token");
  try {
    const kept = (await fs.readFile(file, "utf8")).trim();
    if (kept) return kept;
  } catch {}
  const made = randomBytes(32).toString("hex");
  await fs.writeFile(file, made + "\n", { mode: 0o600 });
  return made;
}

/** Whether a request's body is a commit: a batch that moves the log's head. */
function writesLog(body) {
  return body.includes("UPDATE fp_head SET seq");
}

function crash() {
  // The whole group: node and the workerd miniflare started.
  process.kill(-process.pid, "SIGKILL");
  process.kill(process.pid, "SIGKILL");
}

const o = parseArgs(process.argv.slice(2));
await fs.mkdir(o.persist, { recursive: true });
const token = await tokenFor(o);
const mf = new Miniflare({
  modules: true,
  scriptPath: path.join(here, "ledger-proxy.js"),
  // Module paths are named from here, not from the caller's directory.
  modulesRoot: here,
  compatibilityDate: "2025-06-01",
  d1Databases: { DB: "fencepost-ledger" },
  d1Persist: path.join(o.persist, "d1"),
  bindings: { LEDGER_TOKEN: token },
});
await mf.ready;

const stats = { batches: 0, statements: 0, bytes: 0 };
let writes = 0;

const server = http.createServer(async (req, res) => {
  try {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = Buffer.concat(chunks);
    if (req.method === "GET" && req.url === "/__fencepost/d1-stats") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(stats));
      return;
    }
    const text = body.toString("utf8");
    let commit = false;
    if (req.method === "POST") {
      stats.batches += 1;
      stats.bytes += body.length;
      stats.statements += (text.match(/"sql":/g) ?? []).length;
      if (writesLog(text)) {
        writes += 1;
        commit = true;
        if (writes === o.crashBefore) crash();
      }
    }
    const headers = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers[k] = v;
    const answer = await mf.dispatchFetch(`http://127.0.0.1${req.url}`, {
      method: req.method,
      headers,
      body: req.method === "POST" ? body : undefined,
    });
    const out = Buffer.from(await answer.arrayBuffer());
    if (commit && writes === o.crashAfter) crash();
    if (commit && o.dropAnswer > 0 && writes >= o.dropAnswer && writes < o.dropAnswer + o.dropAnswers) {
      req.socket.destroy();
      return;
    }
    res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/json" });
    res.end(out);
  } catch (e) {
    res.writeHead(500, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: `d1-dev: ${e?.message ?? e}` }));
  }
});

server.listen(Number(o.port), "127.0.0.1", () => {
  const { port } = server.address();
  process.stdout.write(JSON.stringify({ listening: `http://127.0.0.1:${port}`, token }) + "\n");
});

async function stop() {
  server.close();
  await mf.dispose();
  process.exit(0);
}
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, stop);
if (o.watchStdin) {
  process.stdin.on("end", stop);
  process.stdin.on("close", stop);
  process.stdin.resume();
}
