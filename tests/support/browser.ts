// A real headless browser for the tests of what talos-gate renders as HTML: the system's Chromium (the OS package;
// `.ci/run` installs it when missing), driven over the DevTools protocol by playwright-core, which never downloads a
// browser of its own (it is one package with no dependencies and no install script) and launches the given
// executable with --remote-debugging-pipe. What a page logs, throws or requests is collected for the test to assert.
import * as fs from "node:fs";
import * as path from "node:path";
import type { Browser, Page } from "playwright-core";
import { onFileEnd } from "./fixtures";

const CANDIDATES = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome", "/usr/bin/google-chrome-stable"];

/** The Chromium to drive: $CHROMIUM, else the OS package's. Fails naming the package when there is none. */
export function chromiumPath(): string {
  const found = [process.env.CHROMIUM, ...CANDIDATES].find((p): p is string => !!p && fs.existsSync(p));
  if (!found) {
    throw new Error("Chromium is missing: the HTML report tests need a headless browser; install the OS package " +
      "(`apt-get install -y chromium`, which .ci/run does when it is missing) or set CHROMIUM to a Chrome/Chromium binary");
  }
  return found;
}

let browser: Promise<Browser> | undefined;

/** One browser per test file, closed at its end. */
export function launchBrowser(): Promise<Browser> {
  browser ??= (async () => {
    const { chromium } = require("playwright-core") as typeof import("playwright-core");
    // --no-sandbox: the tests run as root in CI, where Chromium's sandbox refuses to start.
    const b = await chromium.launch({ executablePath: chromiumPath(), headless: true, args: ["--no-sandbox", "--disable-gpu"], timeout: 60_000 });
    onFileEnd(async () => {
      browser = undefined;
      await b.close();
    });
    return b;
  })();
  return browser;
}

export interface OpenedPage {
  page: Page;
  /** Console messages of level error, uncaught exceptions, failed loads. */
  errors: string[];
  /** Every URL the page asked for besides itself. */
  requests: string[];
}

/** Opens a local HTML file with a fresh context, recording errors and every request it makes. */
export async function openFile(file: string, viewport = { width: 1280, height: 900 }): Promise<OpenedPage> {
  const b = await launchBrowser();
  const context = await b.newContext({ viewport, deviceScaleFactor: 1 });
  const page = await context.newPage();
  const errors: string[] = [];
  const requests: string[] = [];
  const self = "file://" + path.resolve(file);
  page.on("console", (m) => { if (m.type() === "error") errors.push(`console: ${m.text()}`); });
  page.on("pageerror", (e) => errors.push(`page error: ${e.message}`));
  page.on("requestfailed", (r) => errors.push(`request failed: ${r.url()}`));
  page.on("request", (r) => { if (r.url() !== self) requests.push(r.url()); });
  await page.goto(self, { waitUntil: "load", timeout: 30_000 });
  return { page, errors, requests };
}

/** Where tests write what a person should look at (screenshots); git-ignored. */
export function artifactPath(name: string): string {
  const dir = path.join(__dirname, "..", "..", "..", "tests", "artifacts");
  fs.mkdirSync(dir, { recursive: true });
  return path.join(dir, name);
}
