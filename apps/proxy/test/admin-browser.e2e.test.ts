import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { type BrowserContext, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RealRegions, startRealRegions } from "./support/real-regions.js";

/** The page's own `document`, for functions run inside the browser (the tests compile without DOM types). */
declare const document: {
  querySelector(
    selector: string,
  ): { textContent: string | null; getAttribute(name: string): string | null } | null;
};

const CHROMIUM = "/usr/bin/chromium";
const OUTPUT = join(dirname(fileURLToPath(import.meta.url)), "..", "test-output");
const PASSWORD = "dashboard-secret";

let regions: RealRegions;
let context: BrowserContext;
let profile: string;
let client: pg.Client;
let running = false;
let workload: Promise<void> | undefined;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`headless Chromium is missing at ${CHROMIUM}: apt-get install -y chromium`);
  }
  regions = await startRealRegions(`\n[admin]\nport = 0\npassword = "${PASSWORD}"\n`);
  client = new pg.Client({ host: regions.proxy.host, port: regions.proxy.port, user: "postgres" });
  await client.connect();
  profile = mkdtempSync(join(tmpdir(), "geo-proxy-chromium-"));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    httpCredentials: { username: "operator", password: PASSWORD },
  });
});

afterAll(async () => {
  running = false;
  await workload;
  await context?.close();
  await client?.end().catch(() => undefined);
  await regions?.close();
  if (profile !== undefined) rmSync(profile, { recursive: true, force: true });
});

/** Statements through the proxy, one after another, over every region, until stopped. */
async function runWorkload(): Promise<void> {
  const tenants = ["alice", "bob", "chandra", "3", "4", "5"];
  for (let i = 0; running; i++) {
    await client.query("SELECT id, total FROM orders WHERE tenant_id = $1", [tenants[i % tenants.length]]);
    if (i % 10 === 0) await client.query("SHOW POOLS");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("the dashboard served by the proxy, in a real browser", () => {
  it("draws the placement map, says why a scatter read went where it did, and lists a refused shape", async () => {
    const admin = regions.proxy.runtime.observability.admin!;
    const page = await context.newPage();
    await page.goto(admin.url, { waitUntil: "domcontentloaded" });
    // Read at once, before any update could arrive: the badge is live from the first paint.
    expect(await page.locator("#state").textContent()).toBe("live");
    const nodes = page.locator("#placement-map g.region-node");
    expect(await nodes.count()).toBe(3);
    expect(
      (await nodes.evaluateAll((all) => all.map((node) => node.getAttribute("data-region")))).sort(),
    ).toEqual(["ap-south", "eu-west", "us-east"]);
    await expect(page.locator('#placement-map g[data-region="eu-west"]').textContent()).resolves.toMatch(
      /eu-west \(home\)\d+ keys/,
    );

    await client.query("SELECT country, count(*) FROM users GROUP BY country ORDER BY country");
    // One read for each way an answer over several regions is finished.
    await client.query("SELECT id FROM orders ORDER BY id LIMIT 3");
    await client.query("SELECT o.id FROM orders o JOIN users u ON u.id = o.user_id");
    const refused = await client
      // Correlated with the written row, so it cannot be read first (write-prereads.e2e).
      .query(
        "UPDATE users u SET age = (SELECT max(age) FROM users v WHERE v.name = u.name) WHERE tenant_id = 'chandra'",
      )
      .catch((error: unknown) => error);
    expect((refused as { code?: string }).code).toBe("0A000");

    // The next update from the event stream carries them.
    const scatterRow = page.locator("#decisions tr", {
      hasText: "SELECT country, count(*) FROM users GROUP BY country ORDER BY country",
    });
    await scatterRow.waitFor({ timeout: 15_000 });
    const cells = await scatterRow.locator("td").allTextContents();
    expect(cells.slice(1, 4)).toEqual(["scatter", expect.stringContaining("us-east"), "partial-aggregate"]);
    // A decision is listed when the route is decided, a statement counted when its answer is out:
    // an update taken in between lists the row with the count still 0, so wait for the count.
    await page.waitForFunction(
      () =>
        Number(document.querySelector('[data-live="plan-scatter"]')?.textContent?.replaceAll(",", "")) > 0,
      undefined,
      { timeout: 15_000 },
    );
    expect(
      Number((await page.locator('[data-live="plan-scatter"]').textContent())?.replaceAll(",", "")),
    ).toBeGreaterThan(0);
    // The traffic panel's read finishes move, each from the proxy's own count.
    for (const finish of ["merged_in_proxy", "finished_in_home", "gathered"]) {
      await page.waitForFunction(
        (name) =>
          Number(document.querySelector(`[data-live="read-${name}"]`)?.textContent?.replaceAll(",", "")) > 0,
        finish,
        { timeout: 15_000 },
      );
    }
    const refusedRow = page.locator("#refused tr", {
      hasText:
        "UPDATE users u SET age = (SELECT max(age) FROM users v WHERE v.name = u.name) WHERE tenant_id = $1",
    });
    await refusedRow.waitFor({ timeout: 15_000 });
    expect(await refusedRow.locator("td").allTextContents()).toEqual([
      "UPDATE users u SET age = (SELECT max(age) FROM users v WHERE v.name = u.name) WHERE tenant_id = $1",
      "write-reads-elsewhere",
      "0A000",
      "1",
      expect.stringMatching(/^\d\d:\d\d:\d\d$/),
    ]);
    await page.close();
  });

  it("goes live and shows the proxy's statement count rising while a workload runs through it", async () => {
    const admin = regions.proxy.runtime.observability.admin!;
    const page = await context.newPage();
    const scriptErrors: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error") scriptErrors.push(message.text());
    });
    running = true;
    workload = runWorkload();

    const response = await page.goto(admin.url, { waitUntil: "domcontentloaded" });
    expect(response?.status()).toBe(200);
    expect(response?.headers()["content-security-policy"]).toContain("script-src 'sha256-");
    const total = page.locator('[data-live="statements-total"]');
    const before = (await total.textContent()) ?? "";
    // Only the page's inline script writes "live", on an event-stream update from the proxy.
    await page.locator("#state", { hasText: /^live$/ }).waitFor({ timeout: 15_000 });
    await page.waitForFunction(
      (previous) => document.querySelector('[data-live="statements-total"]')?.textContent !== previous,
      before,
      { timeout: 15_000 },
    );
    const after = Number(((await total.textContent()) ?? "").replaceAll(",", ""));
    expect(after).toBeGreaterThan(Number(before.replaceAll(",", "")));
    expect(await page.locator("#regions svg.bars rect").count()).toBe(3);
    // The map's links carry the bytes per second each way, from the proxy's socket counters.
    await page.waitForFunction(
      () =>
        ["eu-west", "us-east", "ap-south"].every((region) => {
          const link = document.querySelector(`#placement-map text.link-bytes[data-region="${region}"]`);
          return (
            Number(link?.getAttribute("data-bytes-in")) > 0 &&
            Number(link?.getAttribute("data-bytes-out")) > 0
          );
        }),
      undefined,
      { timeout: 15_000 },
    );
    const usLink = page.locator('#placement-map text.link-bytes[data-region="us-east"]');
    expect(await usLink.textContent()).toMatch(/^↓ \d+(\.\d)? k?B\/s ↑ \d+(\.\d)? k?B\/s$/);
    for (const region of ["eu-west", "us-east", "ap-south"]) {
      await expect(page.locator("#regions").textContent()).resolves.toContain(region);
    }
    expect(scriptErrors.filter((text) => /Content Security Policy/i.test(text))).toEqual([]);

    // A few seconds of sparkline before the picture.
    await page.waitForTimeout(3_000);
    mkdirSync(OUTPUT, { recursive: true });
    const shot = join(OUTPUT, "proxy-dashboard.png");
    await page.screenshot({ path: shot, fullPage: true });
    expect(statSync(shot).size).toBeGreaterThan(10_000);
  });
});
