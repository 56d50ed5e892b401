// elasticlunr itself (its npm package) reads a Zola index fencepost wrote and searches it.
// usage: node elasticlunr.mjs <search_index.<lang>.js|.json> <word>  →  the refs found, as JSON.
import elasticlunr from "elasticlunr";
import { readFileSync } from "node:fs";
import vm from "node:vm";

const [file, word] = process.argv.slice(2);
const text = readFileSync(file, "utf8");
let data;
if (file.endsWith(".js")) {
  // The file a Zola theme loads with <script>: it sets window.searchIndex.
  const window = {};
  vm.runInNewContext(text, { window });
  data = window.searchIndex;
} else {
  data = JSON.parse(text);
}
const index = elasticlunr.Index.load(data);
const found = index.search(word, { expand: false }).map((r) => r.ref);
console.log(JSON.stringify(found));
