// @ts-check
/**
 * fencepost's ledger proxy: a Cloudflare Worker that lets `fencepost` keep its ledger in a D1
 * database (`ledger.url = "d1+https://HOST[/path]"`, token in FENCEPOST_D1_TOKEN).
 *
 *   POST <path>/batch   Authorization: Bearer <LEDGER_TOKEN>
 *        {"statements": [{"sql": "…", "params": [null | number | string, …]}, …]}
 *   200  {"results": [{"rows": [{column: value, …}, …], "changes": n}, …], "now": ms}
 *   409  {"error": "…"}   a statement violated a constraint: the whole batch was rolled back
 *   401, 400, 413, 500   {"error": "…"}
 *
 * It exposes one thing, D1's atomic batch (`env.DB.batch`): every statement runs, in order,
 * in one implicit transaction, or none does. It keeps no state, opens no interactive
 * transaction (D1 has none), and answers each statement's rows and change count and the
 * Worker's clock after the batch (`Date.now()`, which fencepost measures its own clock
 * against) — nothing else of D1's metadata.
 *
 * Bindings (see wrangler.toml, `[env.ledger-proxy]`): `DB` (the D1 database), `LEDGER_TOKEN`
 * (a secret: `wrangler secret put LEDGER_TOKEN --env ledger-proxy`), optional
 * `MAX_REQUEST_BYTES` (default 33554432: fencepost never sends more in one batch) and
 * `MAX_STATEMENTS` (default 1000, D1's queries per Worker invocation on a paid plan).
 *
 * Plain JavaScript, no bundler: `wrangler deploy --env ledger-proxy` takes this file as it is.
 */

const DEFAULT_MAX_REQUEST_BYTES = 32 * 1024 * 1024;
const DEFAULT_MAX_STATEMENTS = 1000;

/** @param {number} status @param {unknown} body */
function answer(status, body) {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", "cache-control": "no-store" },
  });
}

/** Whether two strings are equal, in time independent of where they differ. */
async function sameSecret(/** @type {string} */ a, /** @type {string} */ b) {
  const enc = new TextEncoder();
  const [x, y] = await Promise.all([
    crypto.subtle.digest("SHA-256", enc.encode(a)),
    crypto.subtle.digest("SHA-256", enc.encode(b)),
  ]);
  const subtle = /** @type {any} */ (crypto.subtle);
  if (typeof subtle.timingSafeEqual === "function") return subtle.timingSafeEqual(x, y);
  const u = new Uint8Array(x), v = new Uint8Array(y);
  let diff = 0;
  for (let i = 0; i < u.length; i++) diff |= u[i] ^ v[i];
  return diff === 0;
}

/** The request's body as text, refused past `max` bytes whatever its Content-Length says. */
async function boundedText(/** @type {Request} */ request, /** @type {number} */ max) {
  const declared = Number(request.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > max) return null;
  if (!request.body) return "";
  const reader = request.body.getReader();
  const chunks = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.byteLength;
  }
  return new TextDecoder().decode(all);
}

/** The statements of a well-formed request, or why it is not one. */
function statementsOf(/** @type {any} */ body, /** @type {number} */ maxStatements) {
  if (!body || !Array.isArray(body.statements) || body.statements.length === 0)
    return "the body must be {\"statements\": [{\"sql\": …, \"params\": […]}, …]} with at least one statement";
  if (body.statements.length > maxStatements)
    return `${body.statements.length} statements are more than this proxy runs in one batch (${maxStatements})`;
  for (const [i, s] of body.statements.entries()) {
    if (!s || typeof s.sql !== "string" || s.sql.length === 0) return `statement ${i} has no sql`;
    if (s.params !== undefined && !Array.isArray(s.params)) return `statement ${i}: params must be an array`;
    for (const p of s.params ?? []) {
      const ok = p === null || typeof p === "string" || (typeof p === "number" && Number.isSafeInteger(p));
      if (!ok) return `statement ${i}: a parameter is neither null, a string nor an integer within 2^53`;
    }
  }
  return body.statements;
}

export default {
  /** @param {Request} request @param {any} env */
  async fetch(request, env) {
    const url = new URL(request.url);
    if (request.method !== "POST" || !url.pathname.endsWith("/batch"))
      return answer(404, { error: "the ledger proxy answers POST …/batch only" });
    if (!env.LEDGER_TOKEN)
      return answer(500, { error: "LEDGER_TOKEN is not set: wrangler secret put LEDGER_TOKEN --env ledger-proxy" });
    if (!env.DB) return answer(500, { error: "no D1 database is bound as DB (wrangler.toml, [[env.ledger-proxy.d1_databases]])" });
    const auth = request.headers.get("authorization") ?? "";
    if (!(await sameSecret(auth, `Bearer ${env.LEDGER_TOKEN}`)))
      return answer(401, { error: "missing or wrong bearer token" });
    const max = Number(env.MAX_REQUEST_BYTES ?? DEFAULT_MAX_REQUEST_BYTES);
    const text = await boundedText(request, max);
    if (text === null) return answer(413, { error: `the batch is larger than this proxy takes (MAX_REQUEST_BYTES = ${max})` });
    let body;
    try {
      body = JSON.parse(text);
    } catch {
      return answer(400, { error: "the body is not JSON" });
    }
    const statements = statementsOf(body, Number(env.MAX_STATEMENTS ?? DEFAULT_MAX_STATEMENTS));
    if (typeof statements === "string") return answer(400, { error: statements });
    let results;
    try {
      results = await env.DB.batch(statements.map((/** @type {any} */ s) => env.DB.prepare(s.sql).bind(...(s.params ?? []))));
    } catch (e) {
      const message = String((e && /** @type {any} */ (e).message) || e);
      const status = /constraint failed|SQLITE_CONSTRAINT/i.test(message) ? 409 : 500;
      return answer(status, { error: message });
    }
    return answer(200, {
      results: results.map((/** @type {any} */ r) => ({ rows: r.results ?? [], changes: r.meta?.changes ?? 0 })),
      now: Date.now(),
    });
  },
};
