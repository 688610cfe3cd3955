// make docs-check: open every page of the built site (site/) in headless Debian Chromium, one
// browser session, at 1400 x 900, and fail on what the Markdown cannot show:
//   - a console error or an uncaught exception on the page;
//   - a request leaving 127.0.0.1 (the site loads nothing from the network; such requests are
//     blocked and reported);
//   - a code block (pre, pre > code) wider than its column (scrollWidth > clientWidth), outside
//     the decision records (docs/adr/ stay as written);
//   - a Mermaid diagram that did not render.
// Usage: node scripts/docs_check.mjs [SITE_DIR] [--screenshot PAGE=FILE ...]
// The pages are served by a small static server on 127.0.0.1 (search needs http, not file://).
import { createServer } from "node:http";
import { readFile, readdir } from "node:fs/promises";
import { extname, join, relative, resolve, sep } from "node:path";
import { chromium } from "playwright-core";

const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const FLAGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];
const VIEWPORT = { width: 1400, height: 900 };
const TABS = 2;
const TYPES = {
  ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".css": "text/css",
  ".json": "application/json", ".svg": "image/svg+xml", ".png": "image/png", ".map": "application/json",
  ".xml": "application/xml", ".txt": "text/plain", ".woff2": "font/woff2", ".ico": "image/x-icon",
};

const args = process.argv.slice(2);
const site = resolve(args.find((a) => !a.startsWith("--") && !a.includes("=")) || "site");
const screenshots = Object.fromEntries(
  args.flatMap((a, i) => (args[i - 1] === "--screenshot" ? [a.split("=")] : [])),
);

async function htmlPages(dir) {
  const found = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await htmlPages(path)));
    else if (entry.name.endsWith(".html") && entry.name !== "404.html") found.push(path);
  }
  return found;
}

function serve(root) {
  const server = createServer(async (request, response) => {
    const path = decodeURIComponent(new URL(request.url, "http://127.0.0.1").pathname);
    const file = resolve(root, "." + (path.endsWith("/") ? path + "index.html" : path));
    if (!file.startsWith(root + sep) && file !== root) return response.writeHead(403).end();
    try {
      const body = await readFile(file);
      response.writeHead(200, {
        "content-type": TYPES[extname(file)] || "application/octet-stream",
        "cache-control": "max-age=600",  // the theme's scripts and styles once per run
      }).end(body);
    } catch {
      response.writeHead(404).end("not found");
    }
  });
  return new Promise((done) => server.listen(0, "127.0.0.1", () => done(server)));
}

// In the page: every code block wider than its column, and how many code blocks there are.
function measure() {
  const wide = [];
  for (const element of document.querySelectorAll(".md-content pre, .md-content pre > code")) {
    if (element.closest(".mermaid")) continue;
    if (element.scrollWidth > element.clientWidth + 1) {
      const line = (element.textContent || "").split("\n").reduce((a, b) => (b.length > a.length ? b : a), "");
      wide.push(`${element.tagName.toLowerCase()} ${element.scrollWidth} > ${element.clientWidth} px: ${line.trim().slice(0, 80)}`);
    }
  }
  return { wide, blocks: document.querySelectorAll(".md-content pre").length };
}

// One tab visits its share of the pages in turn; what the page reports is kept per page.
async function tab(context, names) {
  const page = await context.newPage();
  let problems = [];
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console error: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`uncaught: ${error.message}`));
  const results = [];
  while (names.length) {
    const name = names.shift();
    problems = [];
    const response = await page.goto(base + name, { waitUntil: "load" });
    // Material renders each <pre class="mermaid"> into a <div class="mermaid"> (its SVG in a closed
    // shadow root): wait for as many, each with a height.
    const diagrams = ((await response.text()).match(/<pre class="mermaid">/g) || []).length;
    let rendered = 0;
    if (diagrams) {
      rendered = await page.waitForFunction(
        (n) => {
          const done = [...document.querySelectorAll("div.mermaid")].filter((d) => d.getBoundingClientRect().height > 0);
          return done.length >= n && done.length;
        },
        diagrams, { timeout: 15000 },
      ).then((handle) => handle.jsonValue()).catch(() => 0);
    }
    const found = await page.evaluate(measure);
    if (!name.startsWith("adr/")) problems.push(...found.wide.map((w) => `code block overflows its column: ${w}`));
    if (rendered < diagrams) problems.push(`${diagrams - rendered} of ${diagrams} Mermaid diagrams did not render`);
    if (screenshots[name]) await page.screenshot({ path: screenshots[name] });
    results.push({ name, problems, blocks: found.blocks, diagrams });
  }
  await page.close();
  return results;
}

const started = Date.now();
const files = (await htmlPages(site)).sort();
if (!files.length) {
  console.error(`docs-check: no pages in ${site}: run make docs first`);
  process.exit(2);
}
const server = await serve(site);
var base = `http://127.0.0.1:${server.address().port}/`;
const browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
const context = await browser.newContext({ viewport: VIEWPORT });
const outside = [];
await context.route("**/*", (route) => {
  const url = route.request().url();
  if (url.startsWith(base)) return route.continue();
  outside.push(url);
  return route.abort();
});
const queue = files.map((file) => relative(site, file).split(sep).join("/"));
let results = [];
try {
  results = (await Promise.all(Array.from({ length: TABS }, () => tab(context, queue)))).flat();
} finally {
  await browser.close();
  server.close();
}
const failed = results.filter((r) => r.problems.length).sort((a, b) => a.name.localeCompare(b.name));
for (const result of failed) {
  console.log(`${result.name}:`);
  for (const problem of result.problems) console.log(`  ${problem}`);
}
for (const url of [...new Set(outside)]) console.log(`request outside the site (blocked): ${url}`);
const blocks = results.reduce((n, r) => n + r.blocks, 0);
const diagrams = results.reduce((n, r) => n + r.diagrams, 0);
const seconds = ((Date.now() - started) / 1000).toFixed(1);
console.log(`docs-check: ${results.length} pages, ${blocks} code blocks, ${diagrams} diagrams in ${seconds} s; `
  + `${failed.length} pages with problems, ${new Set(outside).size} requests outside the site`);
process.exit(failed.length || outside.length ? 1 : 0);
