// Pagefind's own search (the served pagefind.js and WebAssembly) run in Node against an origin.
// usage: node query.mjs <origin> <word> [language]
import { writeFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
const [origin, word, language] = process.argv.slice(2);
const base = `${origin}/pagefind/`;
const src = await (await fetch(base + "pagefind.js")).text();
const dir = mkdtempSync(join(tmpdir(), "pf-"));
const file = join(dir, "pagefind.mjs");
writeFileSync(file, src);
const pagefind = await import(pathToFileURL(file).href);
await pagefind.options({ basePath: base, ...(language ? { language } : {}) });
await pagefind.init(language);
const search = await pagefind.search(word);
const out = [];
for (const r of search.results) {
  const d = await r.data();
  out.push({ url: d.url, title: d.meta.title, excerpt: d.excerpt });
}
console.log(JSON.stringify(out));
