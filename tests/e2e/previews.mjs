// Browser test of a preview link (issue 80), run by tests/suite/preview.rs:
//   node previews.mjs <origin-url> <link-path> <other-site-url> [screenshot-dir]
// A reviewer opens the link: the page shows with its banner, the token is gone from the
// address bar and from script's reach (an HttpOnly cookie), a link within the preview stays
// in it, and a reload still shows it. The link clicked on another site's page (a webmail, a
// chat) opens it too. A browser without the link sees the site's 404.
import { chromium } from 'playwright-core';
import path from 'node:path';

const [origin, link, otherSite, shots] = process.argv.slice(2);

function check(cond, what) {
  if (!cond) throw new Error(what);
}

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
    '--no-first-run', '--disable-quic', '--disable-sync'],
});
try {
  // Opened directly (pasted, or from a mail client: a navigation no site started).
  const reviewer = await browser.newContext();
  const page = await reviewer.newPage();
  const resp = await page.goto(`${origin}${link}`);
  check(resp.status() === 200, `the link answered ${resp.status()}`);
  check(!page.url().includes('fp_preview'), `the token stayed in the address bar: ${page.url()}`);
  const text = await page.innerText('body');
  check(text.includes('The airship goes up'), `not the embargoed page:\n${text}`);
  check(text.includes('Preview pr-7'), `no banner:\n${text}`);
  check((await page.evaluate(() => document.cookie)) === '', 'script can read the preview cookie');
  if (shots) await page.screenshot({ path: path.join(shots, 'preview.png') });
  await page.reload();
  check((await page.innerText('body')).includes('The airship goes up'), 'a reload lost the preview');
  const home = page.locator('a[href="/.preview/pr-7/"]').first();
  await home.click();
  await page.waitForLoadState();
  check(page.url().endsWith('/.preview/pr-7/'), `a link left the preview: ${page.url()}`);
  check((await page.innerText('body')).includes('Zeppelin launch'), 'the preview home lacks the post');

  // Clicked on another site's page.
  const clicker = await browser.newContext();
  const from = await clicker.newPage();
  await from.goto(otherSite);
  await from.setContent(`<a id="l" href="${origin}${link}">the preview</a>`);
  await Promise.all([from.waitForNavigation(), from.click('#l')]);
  const clicked = await from.innerText('body');
  check(clicked.includes('The airship goes up'), `a link clicked on another site did not open the preview:\n${clicked}`);
  check(!from.url().includes('fp_preview'), `the token stayed in the address bar: ${from.url()}`);

  // Without the link.
  const stranger = await browser.newContext();
  const other = await stranger.newPage();
  const r = await other.goto(`${origin}/.preview/pr-7/posts/secret/`);
  check(r.status() === 404, `a browser without the link got ${r.status()}`);
  check(!(await other.innerText('body')).includes('airship'), 'a browser without the link saw the post');
  console.log('ok');
} finally {
  await browser.close();
}
