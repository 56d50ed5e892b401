#!/usr/bin/env node
// The edge Worker on this machine, offline: miniflare (npm) runs it in workerd, the runtime
// Cloudflare runs it in, on 127.0.0.1, with its R2 bucket filled from a folder that
// `fencepost deploy --to file:///ABS/DIR` wrote — and kept in step with it while it runs
// (later deploys, rollbacks, gc), the pointer always last, as a deploy writes a bucket.
//
//   node edge/cloudflare/dev.mjs --bucket file:///ABS/DIR [--prefix P] --port N
//        [--pointer-ttl-ms MS] [--pointer-hot-ms MS] [--bucket-timeout-ms MS]
//        [--bucket-delay-ms MS] [--stats] [--ledger-d1 DIR]
//
// --port 0 takes a free port. Prints one JSON line {"listening":"127.0.0.1:N"} on stdout once
// the bucket is filled and the Worker answers, then one {"synced":…} line per change it
// copies (the keys and the sha256 of what it copied, when a few), and serves until killed.
// --stats sets EDGE_STATS = "1": GET /__fencepost/edge-stats answers the isolate's R2 reads.
// --bucket-timeout-ms sets BUCKET_TIMEOUT_MS. --bucket-delay-ms (tests) makes the Worker's R2
// binding slow: every read answers that much later (a small module wraps the binding; the
// Worker is run unchanged).
// --ledger-d1 DIR binds, as LEDGER, the local D1 that `d1-dev.mjs --persist DIR` keeps (a D1
// ledger's database): the Worker then reads the ledger's publication revision with the pointer.

import { Miniflare } from "miniflare";
import { createHash } from "node:crypto";
import { promises as fs, watch } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));

function usage(why) {
  process.stderr.write(
    `dev.mjs: ${why}\nusage: node edge/cloudflare/dev.mjs --bucket file:///ABS/DIR [--prefix P] --port N ` +
      `[--pointer-ttl-ms MS] [--pointer-hot-ms MS] [--bucket-timeout-ms MS] [--bucket-delay-ms MS] [--shard-memory-bytes N] [--stats] [--ledger-d1 DIR]\n`,
  );
  process.exit(2);
}

function parseArgs(argv) {
  const o = { bucket: null, prefix: "", port: null, ttl: null, hot: null, timeout: null, delay: 0, shards: null, stats: false, ledgerD1: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      return argv[++i];
    };
    if (a === "--bucket") o.bucket = value();
    else if (a === "--prefix") o.prefix = value();
    else if (a === "--port") o.port = value();
    else if (a === "--pointer-ttl-ms") o.ttl = value();
    else if (a === "--pointer-hot-ms") o.hot = value();
    else if (a === "--bucket-timeout-ms") o.timeout = value();
    else if (a === "--bucket-delay-ms") o.delay = Number(value());
    else if (a === "--shard-memory-bytes") o.shards = value();
    else if (a === "--stats") o.stats = true;
    else if (a === "--ledger-d1") o.ledgerD1 = path.resolve(value());
    else usage(`unknown argument ${a}`);
  }
  if (!o.bucket) usage("--bucket is required");
  if (o.port === null || !/^\d+$/.test(o.port) || Number(o.port) > 65535) usage("--port N is required");
  if (!o.bucket.startsWith("file://")) usage("--bucket takes a file:/// URL of a folder `fencepost deploy` wrote");
  o.dir = fileURLToPath(o.bucket);
  o.prefix = o.prefix.replace(/^\/+|\/+$/g, "");
  if (o.prefix.split("/").some((s) => s === "." || s === "..")) usage("--prefix may not contain . or .. segments");
  return o;
}

/**
 * The keys the Worker reads; nothing else in the folder (lock files, temporaries) is copied. A
 * ledger's log entries are copied too: the Worker looks for them to refuse a ledger's prefix.
 */
const LAYOUT = /^(current|objects\/[0-9a-f]{64}|manifests\/[0-9a-f]{64}\.json|manifests\/shards\/[0-9a-f]{64}\.json|log\/[0-9]{20})$/;
/** A preview's objects (`fencepost preview deploy`): its pointer, root, shards and blobs. */
const PREVIEW_LAYOUT = /^previews\/[a-z0-9][a-z0-9._-]{0,63}\/(preview\.json|objects\/[0-9a-f]{64}|manifests\/[0-9a-f]{64}\.json|manifests\/shards\/[0-9a-f]{64}\.json)$/;

async function walk(dir, rel = "", out = new Map()) {
  let names;
  try {
    names = await fs.readdir(path.join(dir, rel), { withFileTypes: true });
  } catch (e) {
    if (e.code === "ENOENT") return out;
    throw e;
  }
  for (const d of names) {
    const r = rel ? `${rel}/${d.name}` : d.name;
    if (d.isDirectory()) await walk(dir, r, out);
    else if (d.isFile() && (LAYOUT.test(r) || PREVIEW_LAYOUT.test(r))) {
      try {
        const st = await fs.stat(path.join(dir, r));
        out.set(r, `${st.mtimeMs}:${st.size}:${st.ino}`);
      } catch (e) {
        if (e.code !== "ENOENT") throw e;
      }
    }
  }
  return out;
}

/** Copies what changed in the folder into the bucket: objects first, the pointer last. */
class Sync {
  constructor(dir, prefix, bucket) {
    this.dir = dir;
    this.prefix = prefix;
    this.bucket = bucket;
    /** @type {Map<string, string>} key → stat signature copied */
    this.copied = new Map();
    this.running = null;
    this.again = false;
    /** sha256 of the pointer copied (null: none) */
    this.pointerSha = null;
  }

  key(rel) {
    return this.prefix ? `${this.prefix}/${rel}` : rel;
  }

  /** Runs a pass; a request for one while one runs makes one more afterwards. */
  run() {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          await this.pass();
        } while (this.again);
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  /**
   * One pass. The pointer is read first: everything it names was written before it (a deploy
   * writes the pointer last), so the walk that follows finds all of it, and the pointer is
   * put after it all.
   */
  async pass() {
    let pointer = null;
    try {
      pointer = await fs.readFile(path.join(this.dir, "current"));
    } catch (e) {
      if (e.code !== "ENOENT") throw e;
    }
    const seen = await walk(this.dir);
    seen.delete("current");
    // A preview's pointer goes after every other object of the pass (it names them).
    const isPointer = (/** @type {string} */ rel) => rel.endsWith("/preview.json");
    const changed = [...seen].filter(([rel, sig]) => this.copied.get(rel) !== sig).map(([rel]) => rel);

    const shas = {};
    // Sixteen copies at a time (each is a round trip into workerd); previews' pointers after.
    const copyAll = async (/** @type {string[]} */ list) => {
      let next = 0;
      const copyOne = async () => {
        while (next < list.length) {
          const rel = list[next++];
          let bytes;
          try {
            bytes = await fs.readFile(path.join(this.dir, rel));
          } catch (e) {
            if (e.code === "ENOENT") continue;
            throw e;
          }
          await this.put(rel, bytes);
          this.copied.set(rel, seen.get(rel));
          shas[rel] = createHash("sha256").update(bytes).digest("hex");
        }
      };
      await Promise.all(Array.from({ length: 16 }, copyOne));
    };
    await copyAll(changed.filter((r) => !isPointer(r)));
    await copyAll(changed.filter(isPointer));
    const pointerSha = pointer && createHash("sha256").update(pointer).digest("hex");
    let removed = 0;
    if (pointerSha !== this.pointerSha) {
      if (pointer) await this.put("current", pointer);
      else await this.bucket.delete(this.key("current"));
      this.pointerSha = pointerSha;
      shas.current = pointerSha ?? "";
      removed += pointer ? 0 : 1;
    }
    // Gone from the folder (gc): gone from the bucket, after the pointer.
    for (const rel of [...this.copied.keys()].filter((r) => !seen.has(r))) {
      await this.bucket.delete(this.key(rel));
      this.copied.delete(rel);
      shas[rel] = ""; // removed
      removed += 1;
    }
    const count = Object.keys(shas).length - removed;
    if (count || removed) {
      const line = { synced: count, removed };
      line.keys = count + removed <= 64 ? shas : "current" in shas ? { current: shas.current } : {};
      process.stdout.write(`${JSON.stringify(line)}\n`);
    }
  }

  async put(rel, bytes) {
    // miniflare's proxy takes an ArrayBuffer of its own (not a pooled Buffer's view).
    const own = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    await this.bucket.put(this.key(rel), own);
  }
}

const o = parseArgs(process.argv.slice(2));
try {
  await fs.access(o.dir);
} catch {
  usage(`${o.dir} is not a folder this process can read`);
}
const bindings = { PREFIX: o.prefix };
if (o.ttl !== null) bindings.POINTER_TTL_MS = String(o.ttl);
if (o.hot !== null) bindings.POINTER_HOT_MS = String(o.hot);
if (o.timeout !== null) bindings.BUCKET_TIMEOUT_MS = String(o.timeout);
if (o.shards !== null) bindings.SHARD_MEMORY_BYTES = String(o.shards);
if (o.stats) bindings.EDGE_STATS = "1";
// The preview key, as `wrangler secret put FENCEPOST_PREVIEW_KEY` gives it to the Worker.
if (process.env.FENCEPOST_PREVIEW_KEY) bindings.FENCEPOST_PREVIEW_KEY = process.env.FENCEPOST_PREVIEW_KEY;
if (!Number.isFinite(o.delay) || o.delay < 0) usage("--bucket-delay-ms takes a number of milliseconds");
// With a delay, a small entry module hands the Worker an R2 binding whose reads answer late.
const slowBucket = `import worker from "./worker.js";
const delay = ${o.delay};
const slow = (site) => ({
  get: async (k, opts) => { await new Promise((r) => setTimeout(r, delay)); return site.get(k, opts); },
  head: async (k) => { await new Promise((r) => setTimeout(r, delay)); return site.head(k); },
  list: async (opts) => { await new Promise((r) => setTimeout(r, delay)); return site.list(opts); },
});
export default { fetch: (req, env, ctx) => worker.fetch(req, { ...env, SITE: slow(env.SITE) }, ctx) };
`;
const script =
  o.delay > 0
    ? {
        modules: [
          { type: "ESModule", path: path.join(here, "slow-bucket.mjs"), contents: slowBucket },
          { type: "ESModule", path: path.join(here, "worker.js"), contents: await fs.readFile(path.join(here, "worker.js"), "utf8") },
          { type: "ESModule", path: path.join(here, "preview.js"), contents: await fs.readFile(path.join(here, "preview.js"), "utf8") },
          { type: "ESModule", path: path.join(here, "common.js"), contents: await fs.readFile(path.join(here, "common.js"), "utf8") },
        ],
      }
    : {
        modules: true,
        scriptPath: path.join(here, "worker.js"),
        // worker.js imports preview.js: an ES module, as wrangler bundles it.
        modulesRules: [{ type: "ESModule", include: ["**/*.js"] }],
      };
// Module paths are named from here, not from the caller's directory (which may be anywhere).
script.modulesRoot = here;
const mf = new Miniflare({
  ...script,
  // As wrangler.toml has it: the runtime's behaviour, moved forward on purpose.
  compatibilityDate: "2025-06-01",
  r2Buckets: ["SITE"],
  // The same database id and folder as d1-dev.mjs: the D1 ledger's own database.
  ...(o.ledgerD1 ? { d1Databases: { LEDGER: "fencepost-ledger" }, d1Persist: path.join(o.ledgerD1, "d1") } : {}),
  bindings,
  host: "127.0.0.1",
  port: Number(o.port),
});
const url = await mf.ready;
const sync = new Sync(o.dir, o.prefix, await mf.getR2Bucket("SITE"));
await sync.run();

// Changes are noticed three ways: a watch on the folder, the pointer's own stat every 20 ms
// (a deploy's last step), and a full pass every 10 s (a watch can miss events).
/** The pointer file's stat signature (null: none), to notice a deploy's last step. */
const pointerSignature = async () => {
  try {
    const st = await fs.stat(path.join(o.dir, "current"));
    return `${st.mtimeMs}:${st.size}:${st.ino}`;
  } catch {
    return null;
  }
};
let pointerSig = await pointerSignature();
try {
  watch(o.dir, { recursive: true }, () => {
    sync.run().catch((e) => process.stderr.write(`dev.mjs: sync failed: ${e}\n`));
  });
} catch (e) {
  process.stderr.write(`dev.mjs: no folder watch (${e}); polling only\n`);
}
setInterval(async () => {
  const sig = await pointerSignature();
  if (sig !== pointerSig) {
    pointerSig = sig;
    sync.run().catch((e) => process.stderr.write(`dev.mjs: sync failed: ${e}\n`));
  }
}, 20);
setInterval(() => sync.run().catch((e) => process.stderr.write(`dev.mjs: sync failed: ${e}\n`)), 10_000);

process.stdout.write(`${JSON.stringify({ listening: `${url.hostname}:${url.port}` })}\n`);
const stop = async () => {
  await mf.dispose().catch(() => {});
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
