// @ts-check
/**
 * Previews at `/.preview/NAME/…` on the edge (issue 80), rule for rule as `fencepost serve`
 * answers them (crates/fencepost-serve/src/previews.rs; the bucket layout in
 * crates/fencepost-bucket/src/preview.rs):
 *
 *   <PREFIX>/previews/<NAME>/preview.json                    the preview's pointer
 *   <PREFIX>/previews/<NAME>/manifests/<sha256>.json         its root
 *   <PREFIX>/previews/<NAME>/manifests/shards/<sha256>.json  the shards the public area lacks
 *   <PREFIX>/previews/<NAME>/objects/<sha256>                the files the public area lacks
 *
 * - `?fp_preview=TOKEN` that opens NAME now (HMAC-SHA256 under the secret
 *   FENCEPOST_PREVIEW_KEY, checked with WebCrypto's constant-time verify): 303 to the same URL
 *   without it, setting the cookie `fp_preview` (HttpOnly; Secure; SameSite=Strict, path
 *   `/.preview/NAME/`, until the token expires); followed from another site's page, a page
 *   that moves on to it by itself.
 * - The cookie: the page from the preview, its pointer read anew on every request, every
 *   object checked against its sha256, nothing put in `caches.default` or kept in the isolate.
 * - Anything else (no key, no token, a bad, expired or other preview's token, no such
 *   preview): `null` — the Worker answers as for any path the public revision lacks.
 * - Every answer: `cache-control: private, no-store`, `x-robots-tag: noindex, nofollow,
 *   noarchive`, `referrer-policy: no-referrer`. HTML pages are served with their links led
 *   within the preview and a banner first in `<body>`, by HTMLRewriter (lol_html, the engine
 *   `serve` uses) on the same rules.
 * - Each answer is logged as one JSON line: name, path, token id, status.
 */

import { encodeLocation, etagMatches, HEX64, sha256, SVG_CSP } from "./common.js";

const PREFIX = "/.preview/";
const COOKIE = "fp_preview";
const TOKEN_PARAM = "fp_preview";
const NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;
const PRIVATE = {
  "cache-control": "private, no-store",
  "x-robots-tag": "noindex, nofollow, noarchive",
  "referrer-policy": "no-referrer",
};
const ONE_URL = new Set([
  "href", "src", "action", "formaction", "poster", "cite", "data", "background", "longdesc",
  "manifest", "icon", "codebase", "xlink:href",
]);
const SRCSET = new Set(["srcset", "imagesrcset"]);

/** @type {Map<string, Promise<CryptoKey | null>>} key text → imported key */
const keys = new Map();

/** The HMAC key from its 64 hex digits; null for anything else. @param {string} text */
function importKey(text) {
  let k = keys.get(text);
  if (!k) {
    const hex = text.trim();
    if (!HEX64.test(hex)) {
      console.warn("FENCEPOST_PREVIEW_KEY is not a preview key (64 hex digits): no previews served");
      k = Promise.resolve(null);
    } else {
      const bytes = new Uint8Array(32);
      for (let i = 0; i < 32; i++) bytes[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
      k = crypto.subtle.importKey("raw", bytes, { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
    }
    keys.set(text, k);
  }
  return k;
}

/**
 * The token's id and expiry when it opens preview `name` at `now` (Unix seconds), else null.
 * @param {CryptoKey} key @param {string} token @param {string} name @param {number} now
 */
export async function verify(key, token, name, now) {
  const parts = token.split(".");
  if (parts.length !== 3) return null;
  const [id, exp, mac] = parts;
  if (!/^[0-9a-fA-F]{16}$/.test(id) || !/^[0-9]+$/.test(exp) || !/^([0-9a-fA-F]{2})+$/.test(mac)) return null;
  const sig = new Uint8Array(mac.length / 2);
  for (let i = 0; i < sig.length; i++) sig[i] = parseInt(mac.slice(2 * i, 2 * i + 2), 16);
  const msg = new TextEncoder().encode(`fencepost-preview-v1\n${name}\n${id}\n${exp}`);
  if (!(await crypto.subtle.verify("HMAC", key, sig, msg))) return null;
  const expires = Number(exp);
  if (!(now < expires)) return null;
  return { id, expires };
}

/** The banner a preview's pages show (the bytes `serve` writes). @param {string} name @param {string | null} asOf */
export function banner(name, asOf) {
  const when = asOf ?? "every scheduled change";
  return `<div data-fencepost-preview="${name}" style="position:sticky;top:0;z-index:2147483647;background:#7a1f00;color:#fff;font:14px/1.6 system-ui,sans-serif;padding:4px 12px;text-align:center">Preview ${name} as of ${when}: not public; only holders of its link see it</div>`;
}

/**
 * `v` led within preview `name`, if it leads into the site (serve's `Into::url`).
 * @param {string} v @param {string} name @param {string} baseUrl
 */
export function within(v, name, baseUrl) {
  const inside = `${PREFIX}${name}`;
  const orSlash = (/** @type {string} */ rest) => (rest === "" ? "/" : rest);
  const base = baseUrl.replace(/\/+$/, "");
  if (base !== "" && v.startsWith(base)) {
    const rest = v.slice(base.length);
    if (rest === "" || rest.startsWith("/")) return `${inside}${orSlash(rest)}`;
  }
  if (!v.startsWith("/") || v.startsWith("//") || v.startsWith("/\\")) return null;
  if (v.startsWith(PREFIX)) return null;
  return `${inside}${orSlash(v)}`;
}

/** The page that sends a reviewer from another site on to `to` (serve's `rewrite::onward`). @param {string} name @param {string} to */
export function onward(name, to) {
  const t = to.replaceAll("&", "&amp;").replaceAll('"', "&quot;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
  return `<!doctype html><meta charset="utf-8"><meta name="referrer" content="no-referrer"><meta http-equiv="refresh" content="0;url=${t}"><title>Preview ${name}</title><p><a href="${t}">Open preview ${name}</a></p>\n`;
}

/** A srcset's candidates led within the preview. @param {string} v @param {string} name @param {string} baseUrl */
function srcset(v, name, baseUrl) {
  let changed = false;
  const parts = v.split(",").map((part) => {
    const lead = part.length - part.trimStart().length;
    const body = part.slice(lead);
    const m = /\s/.exec(body);
    const end = m ? m.index : body.length;
    const u = within(body.slice(0, end), name, baseUrl);
    if (u === null) return part;
    changed = true;
    return `${part.slice(0, lead)}${u}${body.slice(end)}`;
  });
  return changed ? parts.join(",") : null;
}

/** @param {ArrayBuffer} bytes @param {string} name @param {string} baseUrl @param {string} top */
async function page(bytes, name, baseUrl, top) {
  const rewritten = new HTMLRewriter()
    .on("*", {
      element(el) {
        /** @type {[string, string][]} */
        const changed = [];
        for (const [attr, raw] of el.attributes) {
          const v = SRCSET.has(attr) ? srcset(raw, name, baseUrl) : ONE_URL.has(attr) ? within(raw, name, baseUrl) : null;
          if (v !== null) changed.push([attr, v]);
        }
        for (const [attr, v] of changed) el.setAttribute(attr, v);
      },
    })
    .on("body", {
      element(el) {
        el.prepend(top, { html: true });
      },
    })
    .transform(new Response(bytes));
  return rewritten.arrayBuffer();
}

/** The shard a path hashes to (the deploy's rule). @param {string} path */
async function shardOf(path) {
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(path)));
  return ((d[0] << 8) | d[1]) % 1024;
}

/** @param {number} status @param {string} msg @param {Record<string, string>} extra */
function text(status, msg, extra = {}) {
  const body = new TextEncoder().encode(`${msg}\n`);
  return new Response(body, {
    status,
    headers: { "content-type": "text/plain; charset=utf-8", "content-length": String(body.byteLength), ...extra, ...PRIVATE },
  });
}

/**
 * The answer to a request under `/.preview/`, or null: answer it as the public origin would.
 * @param {Request} req @param {URL} url @param {Record<string, any>} env
 * @param {{ rel: string, trailingSlash: boolean }} rp the checked path
 * @param {{ get: (rel: string) => Promise<ArrayBuffer | null> }} io reads an object under PREFIX
 *   (null: none), within BUCKET_TIMEOUT_MS
 * @returns {Promise<Response | null>}
 */
export async function answer(req, url, env, rp, io) {
  if (!url.pathname.startsWith(PREFIX) || !env.FENCEPOST_PREVIEW_KEY) return null;
  const rest = rp.rel.startsWith(".preview/") ? rp.rel.slice(".preview/".length) : null;
  if (rest === null) return null;
  const slash = rest.indexOf("/");
  const name = slash < 0 ? rest : rest.slice(0, slash);
  const inner = { rel: slash < 0 ? "" : rest.slice(slash + 1), trailingSlash: rp.trailingSlash };
  if (!NAME.test(name) || name.includes("..")) return null;
  const key = await importKey(String(env.FENCEPOST_PREVIEW_KEY));
  if (!key) return null;
  const now = Math.floor(Date.now() / 1000);
  const log = (/** @type {Record<string, any>} */ o) => console.log(JSON.stringify({ preview: name, ...o }));
  const token = tokenParam(url.search.slice(1));
  if (token !== null) {
    const valid = await verify(key, token, name, now);
    if (!valid) {
      log({ path: url.pathname, refused: "bad, expired or another preview's token" });
      return null;
    }
    const rest = withoutToken(url.search.slice(1));
    const to = encodeLocation(rest === "" ? url.pathname : `${url.pathname}?${rest}`);
    const set = {
      "set-cookie": `${COOKIE}=${token}; Path=${PREFIX}${name}/; Max-Age=${Math.max(0, valid.expires - now)}; HttpOnly; Secure; SameSite=Strict`,
      ...PRIVATE,
    };
    // Followed from another site's page: a page that moves on by itself (serve's
    // `Previews::open`: a browser sends no SameSite=Strict cookie along a redirect chain
    // another site started).
    if ((req.headers.get("sec-fetch-site") ?? "").toLowerCase() === "cross-site") {
      const body = new TextEncoder().encode(onward(name, to));
      log({ path: url.pathname, token: valid.id, status: 200 });
      return new Response(body, {
        status: 200,
        headers: {
          "content-type": "text/html; charset=utf-8",
          "content-security-policy": "default-src 'none'",
          "x-content-type-options": "nosniff",
          "content-length": String(body.byteLength),
          ...set,
        },
      });
    }
    log({ path: url.pathname, token: valid.id, status: 303 });
    return new Response(null, { status: 303, headers: { location: to, "content-length": "0", ...set } });
  }
  const valid = await cookie(req, key, name, now);
  if (!valid) {
    log({ path: url.pathname, refused: "no token" });
    return null;
  }
  let resp;
  try {
    resp = await serve(req, name, inner, io);
  } catch (e) {
    console.warn(`answering 503: ${e instanceof Error ? e.message : String(e)}`);
    resp = text(503, "the site is unavailable right now; try again shortly", { "retry-after": "1" });
  }
  if (resp === null) {
    log({ path: url.pathname, token: valid.id, refused: "no such preview" });
    return null;
  }
  log({ path: inner.rel, token: valid.id, status: resp.status });
  return resp;
}

/** @param {string} query */
function tokenParam(query) {
  for (const kv of query.split("&")) {
    if (kv.startsWith(`${TOKEN_PARAM}=`)) return kv.slice(TOKEN_PARAM.length + 1);
  }
  return null;
}

/** @param {string} query */
function withoutToken(query) {
  return query.split("&").filter((kv) => kv !== "" && kv.split("=")[0] !== TOKEN_PARAM).join("&");
}

/** @param {Request} req @param {CryptoKey} key @param {string} name @param {number} now */
async function cookie(req, key, name, now) {
  for (const c of (req.headers.get("cookie") ?? "").split(";")) {
    const t = c.trim();
    if (!t.startsWith(`${COOKIE}=`)) continue;
    const valid = await verify(key, t.slice(COOKIE.length + 1), name, now);
    if (valid) return valid;
  }
  return null;
}

/**
 * @param {Request} req @param {string} name @param {{ rel: string, trailingSlash: boolean }} inner
 * @param {{ get: (rel: string) => Promise<ArrayBuffer | null> }} io
 * @returns {Promise<Response | null>}
 */
async function serve(req, name, inner, io) {
  const get = io.get;
  const addressed = async (/** @type {string} */ rel, /** @type {string} */ sha) => {
    if (!HEX64.test(sha)) throw new Error(`${rel}: not a sha256`);
    const bytes = await get(rel);
    if (bytes === null) throw new Error(`${rel} is missing`);
    if ((await sha256(bytes)) !== sha) throw new Error(`${rel} does not hash to its name; refused`);
    return bytes;
  };
  const pointerBytes = await get(`previews/${name}/preview.json`);
  if (pointerBytes === null) return null;
  const p = JSON.parse(new TextDecoder().decode(pointerBytes));
  // `all_own`: every object is in the preview's folder (a target without a public area).
  const own = (/** @type {string[]} */ list, /** @type {string} */ sha) => p.all_own === true || (list ?? []).includes(sha);
  const root = JSON.parse(new TextDecoder().decode(await addressed(`previews/${name}/manifests/${p.manifest}.json`, p.manifest)));
  const shards = new Map((root.shards ?? []).map((/** @type {[number, string]} */ [i, sha]) => [i, sha]));
  const entry = async (/** @type {string} */ path) => {
    const sha = shards.get(await shardOf(path));
    if (!sha) return undefined;
    const rel = own(p.shards, sha) ? `previews/${name}/manifests/shards/${sha}.json` : `manifests/shards/${sha}.json`;
    /** @type {any[]} */
    const entries = JSON.parse(new TextDecoder().decode(await addressed(rel, sha)));
    return entries.find((e) => e.path === path);
  };
  const redirect = (/** @type {string} */ to) =>
    new Response(null, { status: 301, headers: { location: encodeLocation(to), "content-length": "0", ...PRIVATE } });
  if (inner.rel === "" && !inner.trailingSlash) return redirect(`${PREFIX}${name}/`);
  const file = inner.rel === "" ? "index.html" : inner.trailingSlash ? `${inner.rel}/index.html` : inner.rel;
  let e = await entry(file);
  let status = 200;
  if (!e) {
    if (!inner.trailingSlash && (await entry(`${inner.rel}/index.html`))) {
      return redirect(`${PREFIX}${name}/${inner.rel}/`);
    }
    e = await entry("404.html");
    status = 404;
    if (!e) return text(404, "not found");
  }
  const blobRel = own(p.objects, e.sha256) ? `previews/${name}/objects/${e.sha256}` : `objects/${e.sha256}`;
  const stored = await addressed(blobRel, e.sha256);
  const asOf = p.as_of ?? null;
  const body = e.content_type.startsWith("text/html") ? await page(stored, name, p.base_url ?? "", banner(name, asOf)) : stored;
  const gone = e.cache === "gone";
  const moved = typeof e.location === "string" ? within(e.location, name, p.base_url ?? "") ?? e.location : null;
  status = gone ? 410 : moved !== null ? 301 : status;
  const etag = `"${e.sha256}"`;
  /** @type {Record<string, string>} */
  const headers = {
    etag,
    "content-type": e.content_type,
    "x-content-type-options": "nosniff",
    "x-revision": `${p.revision}-${p.build}`,
    ...PRIVATE,
  };
  if (e.content_type.startsWith("image/svg+xml")) headers["content-security-policy"] = SVG_CSP;
  if (moved !== null) headers.location = encodeLocation(moved);
  if (status === 200 && etagMatches(req, etag)) return new Response(null, { status: 304, headers });
  headers["content-length"] = String(body.byteLength);
  return new Response(req.method === "HEAD" ? null : body, { status, headers });
}

