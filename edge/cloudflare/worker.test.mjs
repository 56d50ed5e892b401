// The Worker's pure rules, table-tested with node's own runner (`node --test`), the same tables
// as their Rust twins (`serve::bucket::ttl`, `serve::paths`). `tests/suite/origins.rs` runs this.
import assert from "node:assert/strict";
import { test } from "node:test";
import { parsePath, ttl } from "./worker.js";

test("a future instant caps the pointer, a just-past one makes it hot, a long-past one caps nothing", () => {
  const s = { prefix: "", ttlMs: 1000, hotMs: 100, blobMemory: 0, stats: false };
  const now = 1_000_000;
  const HOT_WINDOW_MS = 30_000;
  // [next_change_at, the TTL]
  const table = [
    [null, 1000],
    [1_000_250, 250],
    [1_000_050, 50],
    [1_000_000, 100],
    [999_000, 100],
    [1_000_000 - HOT_WINDOW_MS, 100],
    [1_000_000 - HOT_WINDOW_MS - 1, 1000],
    [0, 1000],
  ];
  for (const [at, want] of table) assert.equal(ttl(s, at, now), want, `next_change_at ${at}`);
  // A hot interval longer than the TTL changes nothing.
  assert.equal(ttl({ ...s, hotMs: 5000 }, 999_000, now), 1000);
  // An unparseable instant caps nothing.
  assert.equal(ttl(s, Date.parse("not a date"), now), 1000);
});

test("request paths: the file to look up, and what is refused", () => {
  assert.deepEqual(parsePath("/"), { rel: "", trailingSlash: true });
  assert.deepEqual(parsePath("/answers/3/"), { rel: "answers/3", trailingSlash: true });
  assert.deepEqual(parsePath("/style.css"), { rel: "style.css", trailingSlash: false });
  assert.deepEqual(parsePath("/a%20b/"), { rel: "a b", trailingSlash: true });
  assert.deepEqual(parsePath("/caf%C3%A9"), { rel: "café", trailingSlash: false });
  const refused = [
    ["/..%2fetc%2fpasswd", "the path contains an encoded slash"],
    ["/a%5c..%5cb", "the path contains an encoded slash"],
    ["/index.html%00.css", "the path contains a NUL byte"],
    ["//etc/passwd", "the path contains an empty segment (//)"],
    ["/%ff", "the path is not UTF-8"],
    ["etc/passwd", "the path must start with /"],
  ];
  for (const [path, why] of refused) assert.equal(parsePath(path), why, path);
});

test("a preview token: the vector serve's own test checks, one preview, until it expires", async () => {
  const { verify } = await import("./preview.js");
  const key = await crypto.subtle.importKey("raw", new Uint8Array(32).fill(0x11), { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
  // crates/fencepost-bucket/src/preview/token.rs: a_fixed_vector_both_origins_agree_on
  const token = "0123456789abcdef.2000000000.41325312b4c98b9ed46de3897d19ea3792f79b111d41e5282a6e940b48237491";
  assert.deepEqual(await verify(key, token, "pr-7", 1_999_999_999), { id: "0123456789abcdef", expires: 2_000_000_000 });
  assert.equal(await verify(key, token, "pr-7", 2_000_000_000), null, "expired");
  assert.equal(await verify(key, token, "pr-8", 1), null, "another preview");
  assert.equal(await verify(key, token.replace(".2000000000.", ".2000000001."), "pr-7", 1), null, "stretched");
  assert.equal(await verify(key, "a.b", "pr-7", 1), null);
});

test("a preview's links lead within it (serve's Into::url table)", async () => {
  const { within } = await import("./preview.js");
  const base = "https://example.org/";
  assert.equal(within("/posts/a/", "pr-7", base), "/.preview/pr-7/posts/a/");
  assert.equal(within("/", "pr-7", base), "/.preview/pr-7/");
  assert.equal(within("https://example.org/x", "pr-7", base), "/.preview/pr-7/x");
  assert.equal(within("https://example.org", "pr-7", base), "/.preview/pr-7/");
  for (const out of ["//cdn.example/x", "https://other.org/", "rel/x", "#top", "/.preview/x/", "https://example.org.evil/"]) {
    assert.equal(within(out, "pr-7", base), null, out);
  }
});
