// Browser test of `fencepost serve --watch`, run by tests/browser.rs:
//   node watch.mjs <base-url> <site-dir> <good-template-file> [screenshot-dir]
// Opens a page, then only edits files: the page must change by itself (live reload).
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import path from 'node:path';

const [base, site, goodTemplate, shots] = process.argv.slice(2);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitForText(page, wanted, unwanted, what) {
  const deadline = Date.now() + 15000;
  let last = '';
  while (Date.now() < deadline) {
    try {
      last = await page.innerText('body', { timeout: 1000 });
      if (last.includes(wanted) && !(unwanted && last.includes(unwanted))) return;
    } catch (_) {
      // The page is reloading; read again.
    }
    await sleep(50);
  }
  throw new Error(`${what}: page never showed ${JSON.stringify(wanted)}; last text:\n${last}`);
}

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
    '--no-first-run', '--disable-quic', '--disable-sync'],
});
try {
  const page = await browser.newPage();
  await page.goto(`${base}/answers/1/`);
  await waitForText(page, 'Item 1', null, 'first load');

  const item = path.join(site, 'content/answers/1.md');
  fs.writeFileSync(item, fs.readFileSync(item, 'utf8').replace(/\n\n[^]*$/, '\n\nEdited while the browser watched.\n'));
  await waitForText(page, 'Edited while the browser watched.', null, 'after editing the Markdown');
  if (shots) await page.screenshot({ path: path.join(shots, 'edited.png') });

  const template = path.join(site, 'templates/answer.html');
  fs.writeFileSync(template, '{% extends "base.html" %}\n{% block content %}\n{{ page.title \n{% endblock content %}\n');
  await waitForText(page, 'could not rebuild the preview', null, 'after breaking the template');
  const text = await page.innerText('body');
  if (!text.includes('answer.html')) throw new Error(`the error page does not name the template:\n${text}`);
  if (shots) await page.screenshot({ path: path.join(shots, 'error.png') });

  fs.copyFileSync(goodTemplate, template);
  await waitForText(page, 'Edited while the browser watched.', 'could not rebuild', 'after fixing the template');
  if (shots) await page.screenshot({ path: path.join(shots, 'fixed.png') });
  console.log('ok: edit, error page and recovery all appeared without any action from the test');
} finally {
  await browser.close();
}
