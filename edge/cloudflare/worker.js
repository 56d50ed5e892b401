// @ts-check
/**
 * fencepost's edge origin: a Cloudflare Worker that serves the bucket `fencepost deploy`
 * writes (R2, bound as `SITE`), rule for rule as `fencepost serve --from` does.
 *
 *   <PREFIX>/current                         the pointer (JSON): revision, build, manifest root
 *   <PREFIX>/manifests/<sha256>.json         a revision's root: its shards by index
 *   <PREFIX>/manifests/shards/<sha256>.json  a shard: [{path, sha256, bytes, content_type, cache}]
 *   <PREFIX>/objects/<sha256>                a file's bytes
 *
 * - The pointer is read at most once per POINTER_TTL_MS per isolate, by one request (the
 *   others keep serving the revision they know), never kept past its `next_change_at` while
 *   that instant is ahead, and re-read every POINTER_HOT_MS for 30 s after it passes (the
 *   deploy of that instant is due any moment).
 * - Everything else is content-addressed: roots, shards and blobs are kept in the isolate and
 *   in `caches.default` under a key naming their sha256, so a pointer move never serves old
 *   bytes (the new root names other shards and blobs) and an unchanged blob is fetched from R2
 *   once. Everything read from R2 is checked against its sha256 (SubtleCrypto) before it is
 *   served or cached: a blob that does not match is never served (small ones: 503; large ones,
 *   streamed, are cut off short of their length).
 * - The pointer, a root, a shard or a blob that cannot be read is a plain 503 with no-store:
 *   never a stale 200. A root built from another ledger than the pointer names is a 503.
 * - With a D1 binding `LEDGER` (the database a D1 ledger lives in: `d1+https://…`, see
 *   ledger-proxy.js), the pointer's read also reads the ledger's publication revision
 *   (`fp_site_state`), within BUCKET_TIMEOUT_MS; every answer says it in `x-ledger-revision`,
 *   and while the ledger is ahead of the pointer (a change is public and its deploy is on its
 *   way) the pointer is re-read every POINTER_HOT_MS. The pointer alone decides what is
 *   served: the ledger's revision only shortens how long the pointer is cached. A D1 that
 *   cannot be read (down, slow, holding no ledger) degrades, never blanks — the bucket's
 *   complete revision is served, without `x-ledger-revision`, and the pointer is re-read every
 *   POINTER_HOT_MS as if the ledger were ahead (the failure goes to the log).
 * - Only GET and HEAD; the request path is checked the way `serve` checks it (the runtime has
 *   already resolved `.` and `..` segments, as the URL standard says and as `serve` does).
 *
 * - Previews at `/.preview/NAME/…` (preview.js): served only to a holder of a link signed with
 *   the secret FENCEPOST_PREVIEW_KEY, never cached; every other request there is answered as
 *   any path the live revision lacks.
 *
 * Plain JavaScript, no bundler: `wrangler deploy` takes this file and preview.js as they are.
 */

import * as preview from "./preview.js";
import { encodeLocation, etagMatches, HEX64, sha256, SVG_CSP } from "./common.js";

/** Blobs up to this size are read whole, checked, and cached; larger ones are streamed. */
const SMALL_BLOB = 4 * 1024 * 1024;
/** How long after a pointer's `next_change_at` it is re-read every POINTER_HOT_MS. */
const HOT_WINDOW_MS = 30_000;
/**
 * Bytes of parsed shards kept per isolate (SHARD_MEMORY_BYTES): counted, as the blobs and the
 * path memory are, in bytes — a count of shards let a 100,000-file site pass the isolate's
 * 128 MB after a few full-rebuild deploys. A parsed entry costs about 8× its JSON (measured:
 * ~1.2 KB per site file, ~150 bytes of JSON), so a shard is charged 8× its bytes.
 */
const DEFAULT_SHARD_MEMORY = 24 * 1024 * 1024;
const PARSED_PER_JSON_BYTE = 8;
/** Roots kept per isolate. */
const KEEP_ROOTS = 8;
/** Bytes of small blobs kept per isolate (an isolate has 128 MB in all). */
const DEFAULT_BLOB_MEMORY = 32 * 1024 * 1024;

const REVALIDATE = "public, max-age=0, must-revalidate";
const IMMUTABLE = "public, max-age=31536000, immutable";
const TEXT = "text/plain; charset=utf-8";

/**
 * @typedef {{ path: string, sha256: string, bytes: number, content_type: string, cache: string }} Entry
 * @typedef {{ manifest: string, name: string, shards: Map<number, string> }} Live
 * @typedef {{ prefix: string, ttlMs: number, hotMs: number, blobMemory: number, shardMemory: number, bucketTimeoutMs: number, stats: boolean }} Settings
 */

/** Per-isolate state: the pointer as last read, and what content-addressed objects it holds. */
const isolate = {
  /** @type {{ validUntil: number, live?: Live, error?: string } | null} */
  pointer: null,
  /** @type {Promise<Live> | null} the one pointer read in flight */
  reading: null,
  /** @type {number | null} the D1 ledger's publication revision, as last read with the pointer */
  ledgerRevision: null,
  /** @type {Map<string, Live>} manifest sha256 → live revision */
  roots: new Map(),
  /** @type {Map<string, number>} path → shard index */
  shardIndex: new Map(),
  /** What `shardIndex` holds, in bytes (see KEEP_SHARD_INDEX_BYTES). */
  shardIndexBytes: 0,
  /** @type {Map<string, Map<string, Entry>>} shard sha256 → path → entry */
  shards: new Map(),
  /** @type {Map<string, number>} shard sha256 → what it is charged (see DEFAULT_SHARD_MEMORY) */
  shardCost: new Map(),
  shardBytes: 0,
  /** @type {Map<string, ArrayBuffer>} blob sha256 → bytes (oldest first) */
  blobs: new Map(),
  blobBytes: 0,
  /** @type {Map<string, Promise<any>>} one fetch per object at a time */
  flights: new Map(),
  /** R2 reads by kind, for the benchmark's "reads per 1,000 requests" (EDGE_STATS = "1"). */
  reads: { pointer: 0, root: 0, shard: 0, blob: 0, ledger: 0 },
  /** Lookups in caches.default that found the object (else it was read from R2). */
  cacheHits: 0,
  requests: 0,
};

/** @type {WeakMap<object, Settings>} */
const settingsOf = new WeakMap();

/** @type {Map<string, Promise<boolean>>} prefix → whether it holds a ledger's log */
const ledgerAt = new Map();

/**
 * Whether `s.prefix` holds a fencepost ledger's log (`log/` with an entry named by a 20-digit
 * position), once per isolate and prefix, within BUCKET_TIMEOUT_MS. A list that fails is
 * asked again by the next request (this one answers 503, as for any read that fails).
 * @param {Settings} s @param {Record<string, any>} env @returns {Promise<boolean>}
 */
function holdsLedger(s, env) {
  let known = ledgerAt.get(s.prefix);
  if (!known) {
    known = bucket(s, "listing log/", () => env.SITE.list({ prefix: key(s, "log/"), limit: 1 })).then(
      (/** @type {any} */ r) =>
        (r.objects ?? []).some((/** @type {any} */ o) => /(^|\/)log\/\d{20}$/.test(o.key)),
      (/** @type {any} */ e) => {
        ledgerAt.delete(s.prefix);
        throw e;
      },
    );
    ledgerAt.set(s.prefix, known);
  }
  return known;
}

/** The settings from `env`, read once per env object. @param {Record<string, any>} env */
function settings(env) {
  let s = settingsOf.get(env);
  if (!s) {
    s = readSettings(env);
    settingsOf.set(env, s);
  }
  return s;
}

/** @param {Record<string, any>} env @returns {Settings} */
function readSettings(env) {
  const prefix = String(env.PREFIX ?? "").replace(/^\/+|\/+$/g, "");
  if (prefix.split("/").some((s) => s === "." || s === "..")) {
    throw new Error(`PREFIX ${prefix} may not contain . or .. segments`);
  }
  const number = (/** @type {any} */ v, /** @type {number} */ d) => {
    const n = Number(v ?? d);
    return Number.isFinite(n) && n >= 0 ? n : d;
  };
  return {
    prefix,
    ttlMs: number(env.POINTER_TTL_MS, 1000),
    hotMs: number(env.POINTER_HOT_MS, 100),
    blobMemory: number(env.BLOB_MEMORY_BYTES, DEFAULT_BLOB_MEMORY),
    shardMemory: number(env.SHARD_MEMORY_BYTES, DEFAULT_SHARD_MEMORY),
    bucketTimeoutMs: number(env.BUCKET_TIMEOUT_MS, 5000) || 5000,
    stats: env.EDGE_STATS === "1",
  };
}

/** @param {Settings} s @param {string} rel */
function key(s, rel) {
  return s.prefix ? `${s.prefix}/${rel}` : rel;
}

/** Where a content-addressed object is kept in `caches.default`: a key naming its digest. */
function cacheKey(/** @type {Settings} */ s, /** @type {URL} */ url, /** @type {string} */ rel) {
  return new URL(`/__fencepost/cache/${key(s, rel)}`, url.origin).toString();
}

/**
 * Bytes of paths whose shard index an isolate remembers: a flood of made-up paths cannot grow
 * it past this, however long each path is (a count alone let 6,000 paths of 16 KB take
 * 307 MiB of an isolate's 128 MB). Past it, the index is computed on each request.
 */
const KEEP_SHARD_INDEX_BYTES = 4 * 1024 * 1024;

/** The shard a path's entry lives in (the deploy's rule: the first two bytes of its sha256). */
async function shardOf(/** @type {string} */ path) {
  const known = isolate.shardIndex.get(path);
  if (known !== undefined) return known;
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(path)));
  const i = ((d[0] << 8) | d[1]) % 1024;
  // A string's characters take two bytes each; a map entry some more.
  const cost = 2 * path.length + 64;
  if (isolate.shardIndexBytes + cost <= KEEP_SHARD_INDEX_BYTES) {
    isolate.shardIndex.set(path, i);
    isolate.shardIndexBytes += cost;
  }
  return i;
}

/**
 * `call()` — one call to the bucket, reading its answer too — raced against
 * BUCKET_TIMEOUT_MS: a bucket that does not answer is a 503 after that long, never a request
 * that hangs (the rule of `serve --from`'s serve.bucket_timeout_ms).
 * @template T @param {Settings} s @param {string} what @param {() => Promise<T>} call
 * @returns {Promise<T>}
 */
function bucket(s, what, call) {
  /** @type {any} */
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(
      () => reject(new Unavailable(`the bucket did not answer ${what} within ${s.bucketTimeoutMs} ms`)),
      s.bucketTimeoutMs,
    );
  });
  return Promise.race([call(), late]).finally(() => clearTimeout(timer));
}

/**
 * One fetch per key at a time: everyone who wants the key meanwhile shares its promise.
 * @template T @param {string} k @param {() => Promise<T>} fetch @returns {Promise<T>}
 */
function single(k, fetch) {
  const running = isolate.flights.get(k);
  if (running) return running;
  const p = fetch().finally(() => isolate.flights.delete(k));
  isolate.flights.set(k, p);
  return p;
}

/** An Error whose message goes to the log, never to the public (who get a plain 503). */
class Unavailable extends Error {}

/**
 * A content-addressed object's bytes, checked against its name: from the cache, else from R2
 * (then put in the cache, checked).
 * @param {Settings} s @param {Record<string, any>} env @param {ExecutionContext} ctx
 * @param {string} rel @param {string} sha @param {"root" | "shard" | "blob"} kind @param {URL} url
 */
async function addressed(s, env, ctx, rel, sha, kind, url) {
  // Keys are made from digests only: nothing a manifest says can name another key.
  if (!HEX64.test(sha)) throw new Unavailable(`${kind} ${sha} is not a sha256`);
  const k = cacheKey(s, url, rel);
  const cache = /** @type {any} */ (caches).default;
  const hit = await cache.match(k);
  if (hit) {
    isolate.cacheHits += 1;
    return hit.arrayBuffer();
  }
  isolate.reads[kind] += 1;
  const bytes = await bucket(s, `reading ${rel}`, async () => {
    const obj = await env.SITE.get(key(s, rel));
    if (obj === null) throw new Unavailable(`${rel} is missing from the bucket`);
    return obj.arrayBuffer();
  });
  if ((await sha256(bytes)) !== sha) {
    console.error(`${rel}: the bucket returned bytes that do not hash to ${sha}; refused`);
    throw new Unavailable(`${rel} does not hash to its name; refused`);
  }
  ctx.waitUntil(
    cache
      .put(k, new Response(bytes, { headers: { "cache-control": IMMUTABLE } }))
      .catch(() => {}),
  );
  return bytes;
}

/**
 * How long a pointer read stays valid (the rule of `serve --from`).
 * @param {Settings} s @param {number | null} nextChangeAt @param {number} now
 */
export function ttl(s, nextChangeAt, now) {
  let ms = s.ttlMs;
  if (nextChangeAt !== null && Number.isFinite(nextChangeAt)) {
    const left = nextChangeAt - now;
    if (left > 0) ms = Math.min(ms, left);
    else if (left >= -HOT_WINDOW_MS) ms = Math.min(ms, s.hotMs);
  }
  return ms;
}

/**
 * The live revision: the known one while its read is valid; else one request re-reads the
 * pointer while the others keep serving the revision they know (or, with none yet, wait).
 * @param {Settings} s @param {Record<string, any>} env @param {ExecutionContext} ctx @param {URL} url
 * @returns {Promise<Live>}
 */
async function current(s, env, ctx, url) {
  const known = isolate.pointer;
  if (known && Date.now() < known.validUntil) {
    if (known.live) return known.live;
    throw new Unavailable(known.error);
  }
  if (isolate.reading) {
    if (known?.live) return known.live;
    return isolate.reading;
  }
  const readAt = Date.now();
  const reading = readPointer(s, env, ctx, url)
    .then(
      ({ live, nextChangeAt, behind, ledgerRevision }) => {
        // Behind the ledger, or the ledger unknown (`undefined`): re-read soon.
        const valid = ttl(s, nextChangeAt, Date.now());
        isolate.pointer = { validUntil: readAt + (behind ? Math.min(valid, s.hotMs) : valid), live };
        isolate.ledgerRevision = ledgerRevision ?? null;
        return live;
      },
      (e) => {
        // A failure counts from when it was learned: the requests that waited take its answer.
        const error = e instanceof Error ? e.message : String(e);
        isolate.pointer = { validUntil: Date.now() + ttl(s, null, Date.now()), error };
        throw new Unavailable(error);
      },
    )
    // Cleared by the read itself, not by the request that started it: a request the client
    // cancelled never runs its own `finally`, and the isolate would keep a finished read as
    // "in flight" for ever, never reading the pointer again.
    .finally(() => {
      if (isolate.reading === reading) isolate.reading = null;
    });
  isolate.reading = reading;
  return reading;
}

/**
 * Reads the pointer, then (when it names a root not yet known) the root.
 * @param {Settings} s @param {Record<string, any>} env @param {ExecutionContext} ctx @param {URL} url
 */
async function readPointer(s, env, ctx, url) {
  isolate.reads.pointer += 1;
  const [body, ledgerRevision] = await Promise.all([
    bucket(s, "reading the pointer", async () => {
      const obj = await env.SITE.get(key(s, "current"));
      if (obj === null) {
        throw new Unavailable("no revision to serve: the bucket has no pointer yet; run `fencepost deploy`");
      }
      return obj.text();
    }),
    readLedgerRevision(s, env),
  ]);
  let p;
  try {
    p = JSON.parse(body);
  } catch (e) {
    throw new Unavailable(`the pointer is not a fencepost pointer: ${e}`);
  }
  if (!p || typeof p.manifest !== "string" || !HEX64.test(p.manifest)) {
    throw new Unavailable("the pointer is not a fencepost pointer: no manifest");
  }
  const nextChangeAt = typeof p.next_change_at === "string" ? Date.parse(p.next_change_at) : null;
  const live = await root(s, env, ctx, url, p.manifest, p.ledger_id ?? null);
  const behind =
    ledgerRevision === undefined || (ledgerRevision !== null && Number(p.revision) < ledgerRevision);
  return { live, nextChangeAt, behind, ledgerRevision };
}

/**
 * The D1 ledger's publication revision (`null` without a `LEDGER` binding; `undefined` when
 * it cannot be read): what the seed's Worker reads on its request path, under the rules of an
 * R2 read. A failure is logged and degrades (see the header): the pointer alone decides.
 * @param {Settings} s @param {Record<string, any>} env @returns {Promise<number | null | undefined>}
 */
async function readLedgerRevision(s, env) {
  if (!env.LEDGER) return null;
  isolate.reads.ledger += 1;
  try {
    const row = await bucket(s, "reading the ledger's publication revision from D1", async () => {
      try {
        return await env.LEDGER.prepare("SELECT publication_revision FROM fp_site_state WHERE id = 1").first();
      } catch (e) {
        throw new Unavailable(`the D1 ledger could not be read: ${e instanceof Error ? e.message : e}`);
      }
    });
    const r = row ? Number(row.publication_revision) : NaN;
    if (!Number.isSafeInteger(r)) {
      throw new Unavailable("the D1 bound as LEDGER holds no fencepost ledger (no fp_site_state row): bind the database ledger.url names, or remove the binding");
    }
    return r;
  } catch (e) {
    console.warn(`serving by the pointer alone, re-read every POINTER_HOT_MS: ${e instanceof Error ? e.message : e}`);
    return undefined;
  }
}

/**
 * A manifest root, read once per isolate (and once per data centre through the cache).
 * @param {Settings} s @param {Record<string, any>} env @param {ExecutionContext} ctx @param {URL} url
 * @param {string} manifest @param {string | null} owner
 * @returns {Promise<Live>}
 */
async function root(s, env, ctx, url, manifest, owner) {
  const known = isolate.roots.get(manifest);
  if (known) return known;
  return single(`root:${manifest}`, async () => {
    const unreadable = (/** @type {string} */ why) =>
      new Unavailable(`the live manifest ${manifest} cannot be read: ${why}`);
    let r;
    try {
      const bytes = await addressed(s, env, ctx, `manifests/${manifest}.json`, manifest, "root", url);
      r = JSON.parse(new TextDecoder().decode(bytes));
    } catch (e) {
      throw unreadable(e instanceof Error ? e.message : String(e));
    }
    // The pointer names the ledger that owns the bucket: a root built from another ledger is
    // never served, whoever wrote the pointer.
    if (owner && r.ledger_id && owner !== r.ledger_id) {
      throw unreadable(`it was built from ledger ${r.ledger_id}, but the bucket belongs to ledger ${owner}`);
    }
    /** @type {Live} */
    const live = {
      manifest,
      name: `${r.revision}-${r.build}`,
      shards: new Map((r.shards ?? []).map((/** @type {[number, string]} */ [i, sha]) => [i, sha])),
    };
    isolate.roots.set(manifest, live);
    while (isolate.roots.size > KEEP_ROOTS) {
      isolate.roots.delete(/** @type {string} */ (isolate.roots.keys().next().value));
    }
    return live;
  });
}

/**
 * The entry for `path` in the live revision, if it has one (reads the one shard it hashes to).
 * @param {Settings} s @param {Record<string, any>} env @param {ExecutionContext} ctx @param {URL} url
 * @param {Live} live @param {string} path
 * @returns {Promise<Entry | undefined>}
 */
async function entry(s, env, ctx, url, live, path) {
  const sha = live.shards.get(await shardOf(path));
  if (!sha) return undefined;
  let shard = isolate.shards.get(sha);
  if (!shard) {
    shard = await single(`shard:${sha}`, async () => {
      const bytes = await addressed(s, env, ctx, `manifests/shards/${sha}.json`, sha, "shard", url);
      /** @type {Entry[]} */
      const entries = JSON.parse(new TextDecoder().decode(bytes));
      const m = new Map(entries.map((e) => [e.path, e]));
      const cost = bytes.byteLength * PARSED_PER_JSON_BYTE;
      // Kept while it fits the budget, oldest first out; one larger than the whole budget is
      // used for this request and not kept.
      if (cost <= s.shardMemory) {
        isolate.shards.set(sha, m);
        isolate.shardCost.set(sha, cost);
        isolate.shardBytes += cost;
        while (isolate.shardBytes > s.shardMemory) {
          const old = /** @type {string} */ (isolate.shards.keys().next().value);
          isolate.shards.delete(old);
          isolate.shardBytes -= isolate.shardCost.get(old) ?? 0;
          isolate.shardCost.delete(old);
        }
      }
      return m;
    });
  }
  return shard.get(path);
}

/**
 * A small blob's bytes, checked (once per isolate however many requests want it).
 * @param {Settings} s @param {Record<string, any>} env @param {ExecutionContext} ctx @param {URL} url
 * @param {Entry} e
 * @returns {Promise<ArrayBuffer>}
 */
async function smallBlob(s, env, ctx, url, e) {
  const held = isolate.blobs.get(e.sha256);
  if (held) return held;
  return single(`blob:${e.sha256}`, async () => {
    const bytes = await addressed(s, env, ctx, `objects/${e.sha256}`, e.sha256, "blob", url);
    if (bytes.byteLength <= s.blobMemory && !isolate.blobs.has(e.sha256)) {
      isolate.blobs.set(e.sha256, bytes);
      isolate.blobBytes += bytes.byteLength;
      for (const [k, v] of isolate.blobs) {
        if (isolate.blobBytes <= s.blobMemory) break;
        isolate.blobs.delete(k);
        isolate.blobBytes -= v.byteLength;
      }
    }
    return bytes;
  });
}

/**
 * A large blob as a stream, hashed as it streams: each chunk is held back until the next one
 * arrives and the last one until the digest is checked, so a mismatch ends the body short of
 * its length and no client ever receives it whole. A verified copy goes to the cache.
 * @param {Settings} s @param {Record<string, any>} env @param {ExecutionContext} ctx @param {URL} url
 * @param {Entry} e
 * @returns {Promise<ReadableStream>}
 */
async function largeBlob(s, env, ctx, url, e) {
  if (!HEX64.test(e.sha256)) throw new Unavailable(`blob ${e.sha256} is not a sha256`);
  const rel = `objects/${e.sha256}`;
  const k = cacheKey(s, url, rel);
  const cache = /** @type {any} */ (caches).default;
  const hit = await cache.match(k);
  if (hit?.body) {
    isolate.cacheHits += 1;
    return hit.body;
  }
  isolate.reads.blob += 1;
  const obj = await bucket(s, `reading ${rel}`, () => env.SITE.get(key(s, rel)));
  if (obj === null) throw new Unavailable(`${rel} is missing from the bucket`);
  const digest = new /** @type {any} */ (crypto).DigestStream("SHA-256");
  const writer = digest.getWriter();
  /** @type {Uint8Array | null} */
  let heldBack = null;
  const verified = obj.body.pipeThrough(
    new TransformStream({
      async transform(chunk, controller) {
        await writer.write(chunk);
        if (heldBack) controller.enqueue(heldBack);
        heldBack = chunk;
      },
      async flush(controller) {
        await writer.close();
        let got = "";
        for (const b of new Uint8Array(await digest.digest)) got += b.toString(16).padStart(2, "0");
        if (got !== e.sha256) {
          console.error(`${rel}: the bucket streamed bytes that do not hash to ${e.sha256}; cut off`);
          controller.error(new Error(`${rel} does not match its digest`));
          return;
        }
        if (heldBack) controller.enqueue(heldBack);
      },
    }),
  );
  const [toClient, toCache] = verified.tee();
  // An errored body (a mismatch) makes the put fail: only whole, checked bytes are cached.
  ctx.waitUntil(
    cache
      .put(k, new Response(toCache, { headers: { "cache-control": IMMUTABLE } }))
      .catch(() => {}),
  );
  return toClient;
}

/** A plain-text answer that no cache keeps. @param {number} status @param {string} msg */
function text(status, msg, extra = {}) {
  const body = new TextEncoder().encode(`${msg}\n`);
  return new Response(body, {
    status,
    headers: {
      "content-type": TEXT,
      "cache-control": "no-store",
      "content-length": String(body.byteLength),
      ...extra,
    },
  });
}

/** 503: nothing can be served right now; never a stale 200. Why goes to the log. */
function unavailable(/** @type {string} */ why) {
  console.warn(`answering 503: ${why}`);
  return text(503, "the site is unavailable right now; try again shortly", { "retry-after": "1" });
}

/** A 301 adding the slash; cacheable only with revalidation, like every URL-keyed answer. */
function redirect(/** @type {string} */ to) {
  return new Response(null, {
    status: 301,
    headers: { location: encodeLocation(to), "cache-control": REVALIDATE, "content-length": "0" },
  });
}

/**
 * Checks a request path (already resolved by the URL parser) the way `serve` does.
 * @param {string} raw
 * @returns {{ rel: string, trailingSlash: boolean } | string} the path, or why it is refused
 */
export function parsePath(raw) {
  if (!raw.startsWith("/")) return "the path must start with /";
  const lower = raw.toLowerCase();
  if (lower.includes("%2f") || lower.includes("%5c")) return "the path contains an encoded slash";
  let decoded;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    return "the path is not UTF-8";
  }
  if (decoded.includes("\0")) return "the path contains a NUL byte";
  const body = decoded.slice(1);
  const trailingSlash = body === "" || body.endsWith("/");
  const trimmed = trailingSlash && body !== "" ? body.slice(0, -1) : body;
  const segments = [];
  if (trimmed !== "") {
    for (const seg of trimmed.split("/")) {
      if (seg === "") return "the path contains an empty segment (//)";
      segments.push(seg);
    }
  }
  return { rel: segments.join("/"), trailingSlash };
}

/**
 * The file a request maps to: the file, else a redirect adding the slash, else the revision's
 * 404 page, else a plain 404.
 * @param {Settings} s @param {Record<string, any>} env @param {ExecutionContext} ctx @param {URL} url
 * @param {Live} live @param {{ rel: string, trailingSlash: boolean }} rp
 * @returns {Promise<{ entry: Entry, status: number } | Response>}
 */
async function find(s, env, ctx, url, live, rp) {
  const file = rp.rel === "" ? "index.html" : rp.trailingSlash ? `${rp.rel}/index.html` : rp.rel;
  const found = await entry(s, env, ctx, url, live, file);
  if (found) return { entry: found, status: 200 };
  if (!rp.trailingSlash && (await entry(s, env, ctx, url, live, `${rp.rel}/index.html`))) {
    return redirect(`/${rp.rel}/`);
  }
  const notFound = await entry(s, env, ctx, url, live, "404.html");
  if (notFound) return { entry: notFound, status: 404 };
  return text(404, "not found");
}

/**
 * Answers one request from the bucket.
 * @param {Request} req @param {Record<string, any>} env @param {ExecutionContext} ctx
 */
export async function respond(req, env, ctx) {
  if (req.method !== "GET" && req.method !== "HEAD") {
    return text(405, "only GET and HEAD", { allow: "GET, HEAD" });
  }
  const url = new URL(req.url);
  let s;
  try {
    s = settings(env);
  } catch (e) {
    return unavailable(String(e));
  }
  isolate.requests += 1;
  // No ledger is ever served: a PREFIX that holds a ledger's log (a misconfigured Worker)
  // answers 503 to everything. Checked once per isolate: one list of at most one key.
  try {
    if (await holdsLedger(s, env)) {
      return unavailable(`PREFIX ${s.prefix || "(the bucket's root)"} holds a fencepost ledger's log/: a ledger names every embargoed item and its instant, and is never served. Point PREFIX at the site's deploy target`);
    }
  } catch (e) {
    return unavailable(String(e));
  }
  if (s.stats && url.pathname === "/__fencepost/edge-stats") {
    return new Response(JSON.stringify({
        requests: isolate.requests,
        reads: isolate.reads,
        cache_hits: isolate.cacheHits,
        shard_index_paths: isolate.shardIndex.size,
        shard_index_bytes: isolate.shardIndexBytes,
        shards: isolate.shards.size,
        shard_bytes: isolate.shardBytes,
      }), {
      headers: { "content-type": "application/json", "cache-control": "no-store" },
    });
  }
  const rp = parsePath(url.pathname);
  if (typeof rp === "string") return text(400, rp);
  try {
    const io = {
      get: (/** @type {string} */ rel) =>
        bucket(s, `reading ${rel}`, async () => {
          const o = await env.SITE.get(key(s, rel));
          return o === null ? null : o.arrayBuffer();
        }),
    };
    const shown = await preview.answer(req, url, env, rp, io);
    if (shown) return shown;
  } catch (e) {
    return unavailable(e instanceof Error ? e.message : String(e));
  }
  try {
    const live = await current(s, env, ctx, url);
    const found = await find(s, env, ctx, url, live, rp);
    if (found instanceof Response) return found;
    const e = found.entry;
    const gone = e.cache === "gone";
    // An alias (an item's old URL): a 301 to the item, with the page a static host would show.
    const moved = e.cache === "redirect" && typeof e.location === "string";
    const status = gone ? 410 : moved ? 301 : found.status;
    const headers = new Headers({
      etag: `"${e.sha256}"`,
      "content-type": e.content_type,
      "x-content-type-options": "nosniff",
      "x-revision": live.name,
      ...(isolate.ledgerRevision === null ? {} : { "x-ledger-revision": String(isolate.ledgerRevision) }),
      "cache-control": e.cache === "immutable" ? IMMUTABLE : REVALIDATE,
    });
    if (e.content_type.startsWith("image/svg+xml")) headers.set("content-security-policy", SVG_CSP);
    if (gone) headers.set("x-robots-tag", "noindex");
    if (moved) headers.set("location", encodeLocation(e.location));
    if (status === 200 && etagMatches(req, `"${e.sha256}"`)) {
      return new Response(null, { status: 304, headers });
    }
    headers.set("content-length", String(e.bytes));
    if (req.method === "HEAD") return new Response(null, { status, headers });
    if (e.bytes <= SMALL_BLOB) {
      const bytes = await smallBlob(s, env, ctx, url, e);
      if (bytes.byteLength !== e.bytes) {
        return unavailable(`blob ${e.sha256} is not the size its manifest says`);
      }
      return new Response(bytes, { status, headers });
    }
    const stream = await largeBlob(s, env, ctx, url, e);
    const body = new /** @type {any} */ (globalThis).FixedLengthStream(e.bytes);
    stream.pipeTo(body.writable).catch(() => {});
    return new Response(body.readable, { status, headers });
  } catch (e) {
    return unavailable(e instanceof Error ? e.message : String(e));
  }
}

export default {
  /** @param {Request} req @param {Record<string, any>} env @param {ExecutionContext} ctx */
  fetch(req, env, ctx) {
    return respond(req, env, ctx);
  },
};
