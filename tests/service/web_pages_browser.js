// Reads the lab's web pages in Debian's Chromium, driven by playwright-core, the way a person
// does: the jobs page first (the sign-in form, 401), then signs in through the form with a token
// (no token in any URL, no header), opens the jobs list, one job, a many-case job, the boards
// and another tenant's job, and signs out; once per viewport (a desktop and a phone width).
//
// Usage: node web_pages_browser.js <config.json>
//   config: {"playwright": ".../node_modules/playwright-core", "chromium": "/usr/bin/chromium",
//            "url": "http://127.0.0.1:PORT/", "token": "...", "job": "j...", "other_job": "j...",
//            "cases_job": "j..." (a many-case job: page "cases"),
//            "out": "<dir>", "viewports": [{"name": "desktop", "width": 1366, "height": 900}]}
// Writes into `out`, per page and viewport: <page>-<viewport>.html (the DOM as the browser holds
// it) and <page>-<viewport>.png (a full-page screenshot); and result.json: per page and viewport
// the HTTP status, whether the document is wider than the window (a phone would scroll
// sideways), and the errors: a Content-Security-Policy violation, a style or icon not loaded.
// Exit code 0 when every page was read; the checks of what they show are the caller's.
'use strict';
const fs = require('fs');
const path = require('path');

const config = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const {chromium} = require(config.playwright);

// The flags the service tests give Chromium everywhere: no sandbox (CI runs as root), no GPU,
// nothing that talks to Google.
const kChromiumFlags = [
  '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

// Saves what `page` shows as <name>-<viewport>: its DOM and a full-page screenshot.
async function capture(page, name, viewport, response, errors, results) {
  const base = path.join(config.out, `${name}-${viewport.name}`);
  fs.writeFileSync(`${base}.html`, await page.content());
  await page.screenshot({path: `${base}.png`, fullPage: true});
  const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth > window.innerWidth);
  results[`${name}-${viewport.name}`] = {
    status: response ? response.status() : 0,
    url: page.url(),
    overflow,
    errors,
  };
}

async function readPages(browser, viewport, results) {
  const context = await browser.newContext(
      {viewport: {width: viewport.width, height: viewport.height}, deviceScaleFactor: 1});
  const page = await context.newPage();
  // What the browser refused or could not load besides the page itself: a Content-Security-Policy
  // violation, a style or icon that failed. (The page's own 401 or 404 is its answer.)
  let errors = [];
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) {
      errors.push(message.text());
    }
  });
  page.on('response', (answer) => {
    if (answer.request().resourceType() !== 'document' && answer.status() >= 400) {
      errors.push(`${answer.status()} for ${answer.url()}`);
    }
  });
  // Opens a page with `navigate` (which returns the document's response) and captures it.
  const visit = async (name, navigate) => {
    errors = [];
    const response = await navigate();
    await page.waitForLoadState('load');
    await capture(page, name, viewport, response, errors, results);
  };
  const click = (selector) => async () => {
    const [response] = await Promise.all([page.waitForNavigation(), page.click(selector)]);
    return response;
  };
  // Not signed in: the page asked for is the sign-in form.
  await visit('signin', () => page.goto(config.url + 'jobs'));
  await page.fill('#token', config.token);
  await visit('jobs', click('button[type=submit]'));
  await visit('job', () => page.goto(config.url + `jobs/${config.job}`));
  await visit('cases', () => page.goto(config.url + `jobs/${config.cases_job}`));
  await visit('boards', () => page.goto(config.url + 'boards'));
  await visit('other', () => page.goto(config.url + `jobs/${config.other_job}`));
  // Signing out ends the session: the pages ask for the token again.
  await page.goto(config.url + 'boards');
  await click('text=Sign out')();
  await visit('signedout', () => page.goto(config.url + 'boards'));
  await context.close();
}

(async () => {
  fs.mkdirSync(config.out, {recursive: true});
  const browser = await chromium.launch({executablePath: config.chromium, args: kChromiumFlags});
  const results = {browser: browser.version()};
  try {
    for (const viewport of config.viewports) await readPages(browser, viewport, results);
  } finally {
    fs.writeFileSync(path.join(config.out, 'result.json'), JSON.stringify(results, null, 1));
    await browser.close();
  }
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
