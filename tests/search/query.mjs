// Pagefind's own search, from its npm package (not the copy fencepost serves), run in Node
// against the index an origin serves. usage: node query.mjs <origin> <word>
//
// The npm package's binary makes its runtime (pagefind.js and the WebAssembly, for a
// throw-away record); a local server answers those files from it and every other path under
// /pagefind/ (the entry, meta, chunks, fragments: fencepost's) from the origin. Prints the
// results' URL paths, titles and excerpts as JSON.
import * as pagefind from "pagefind";
import { createServer } from "node:http";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [origin, word] = process.argv.slice(2);
const { index } = await pagefind.createIndex({});
await index.addCustomRecord({ url: "/", content: "runtime", language: "en" });
const { files } = await index.getFiles();
const runtime = new Map();
for (const f of files) {
  const name = f.path.replace(/\\/g, "/");
  if (name.endsWith(".js") || name.endsWith(".pagefind")) runtime.set(name, Buffer.from(f.content));
}
await pagefind.close();

const server = createServer(async (req, res) => {
  const name = req.url.replace(/^\/pagefind\//, "");
  if (runtime.has(name)) {
    res.end(runtime.get(name));
    return;
  }
  const upstream = await fetch(origin + req.url);
  res.statusCode = upstream.status;
  res.end(Buffer.from(await upstream.arrayBuffer()));
});
await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
const base = `http://127.0.0.1:${server.address().port}/pagefind/`;

const dir = mkdtempSync(join(tmpdir(), "pagefind-"));
const file = join(dir, "pagefind.mjs");
writeFileSync(file, runtime.get("pagefind.js"));
const search = await import(pathToFileURL(file).href);
await search.options({ basePath: base });
await search.init();
const found = await search.search(word);
const out = [];
for (const r of found.results) {
  const d = await r.data();
  out.push({ url: d.url.replace(/^https?:\/\/[^/]+/, ""), title: d.meta.title, excerpt: d.excerpt });
}
server.close();
console.log(JSON.stringify(out));
process.exit(0);
