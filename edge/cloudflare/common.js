// @ts-check
/**
 * What the Worker's two modules answer alike (worker.js, the live revision; preview.js,
 * previews): the rules `fencepost serve` shares in `answer.rs`.
 */

export const HEX64 = /^[0-9a-f]{64}$/;

/** The sandbox every SVG is served with (serve's `answer::SVG_CSP`). */
export const SVG_CSP =
  "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:";

/** @param {ArrayBuffer | Uint8Array} bytes */
export async function sha256(bytes) {
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  let out = "";
  for (const b of d) out += b.toString(16).padStart(2, "0");
  return out;
}

/** Percent-encodes control characters and non-ASCII (what `serve` does to a Location). */
export function encodeLocation(/** @type {string} */ to) {
  let out = "";
  for (const b of new TextEncoder().encode(to)) {
    out += b < 0x20 || b >= 0x7f ? `%${b.toString(16).toUpperCase().padStart(2, "0")}` : String.fromCharCode(b);
  }
  return out;
}

/** Whether If-None-Match names `etag` (or `*`). @param {Request} req @param {string} etag */
export function etagMatches(req, etag) {
  const v = req.headers.get("if-none-match");
  if (!v) return false;
  return v.split(",").some((t) => {
    const tag = t.trim().replace(/^W\//, "");
    return tag === "*" || tag === etag;
  });
}
