import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type BrowserContext, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProxyMetrics, type RunningAdminServer, startAdminServer } from "../src/index.js";
import { FakeSource, REGIONS, runStatement } from "./fake-source.js";

/** The page's own `document`, for functions that run inside the browser (the tests compile without DOM types). */
declare const document: { querySelector(selector: string): { textContent: string | null } | null };

const CHROMIUM = "/usr/bin/chromium";
const OUTPUT = join(dirname(fileURLToPath(import.meta.url)), "..", "test-output");

let metrics: ProxyMetrics;
let source: FakeSource;
let admin: RunningAdminServer;
let context: BrowserContext;
let profile: string;
let workload: NodeJS.Timeout | undefined;

/** Debian's Chromium with a fresh profile folder, logged in to the admin port. */
function launch(userDataDir: string, javaScriptEnabled: boolean): Promise<BrowserContext> {
  return chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    javaScriptEnabled,
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
    httpCredentials: { username: "operator", password: "s3cret" },
  });
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`headless Chromium is missing at ${CHROMIUM}: apt-get install -y chromium`);
  }
  metrics = new ProxyMetrics({
    node: "geo-browser",
    homeRegion: "eu-west",
    regions: REGIONS,
    processMetrics: false,
  });
  source = new FakeSource(metrics);
  source.alerts = [
    {
      name: "backend_down",
      subject: "ap.db:5432",
      message: "three probes failed",
      since: new Date().toISOString(),
    },
  ];
  source.decisions = [
    {
      shape: "SELECT name FROM users WHERE tenant_id = $1",
      plan: "one_region",
      regions: ["us-east"],
      finish: "relayed",
      count: 12,
      lastAt: new Date().toISOString(),
    },
  ];
  source.refusedShapes = [
    {
      shape: "SELECT * FROM users u JOIN orders o ON o.user_id = u.id",
      reason: "cross-region-join",
      sqlstate: "0A000",
      count: 3,
      lastAt: new Date().toISOString(),
    },
  ];
  source.schemaDrift = {
    checkedAt: new Date().toISOString(),
    reference: "eu-west",
    tables: [
      {
        table: "public.orders",
        regions: [{ region: "us-east", status: "differs", detail: "extra column note text" }],
      },
    ],
  };
  admin = await startAdminServer({ host: "127.0.0.1", port: 0, source, metrics, password: "s3cret" });
  profile = mkdtempSync(join(tmpdir(), "geo-admin-chromium-"));
  context = await launch(profile, true);
});

afterAll(async () => {
  if (workload !== undefined) clearInterval(workload);
  await context?.close();
  await admin?.close();
  if (profile !== undefined) rmSync(profile, { recursive: true, force: true });
});

describe("the dashboard in a real browser", () => {
  it("goes live under its Content-Security-Policy and shows numbers changing within seconds", async () => {
    const page = await context.newPage();
    const violations: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error") violations.push(message.text());
    });
    let i = 0;
    workload = setInterval(() => {
      for (let n = 0; n < 40; n++) runStatement(metrics, i++);
      metrics.observeStatement("distributed_write", 0.02 + (i % 5) / 100);
      metrics.countTransaction("two_phase_committed");
    }, 100);

    const response = await page.goto(admin.url, { waitUntil: "domcontentloaded" });
    expect(response?.status()).toBe(200);
    expect(response?.headers()["content-security-policy"]).toContain("script-src 'sha256-");

    const total = page.locator('[data-live="statements-total"]');
    const before = (await total.textContent()) ?? "";
    // "live" is written only by the inline script on an update: it ran, so its hash was allowed.
    await page.locator("#state", { hasText: /^live$/ }).waitFor({ timeout: 5_000 });
    await page.waitForFunction(
      (previous) => document.querySelector('[data-live="statements-total"]')?.textContent !== previous,
      before,
      { timeout: 5_000 },
    );
    const after = (await total.textContent()) ?? "";
    expect(Number(after.replaceAll(",", ""))).toBeGreaterThan(Number(before.replaceAll(",", "")));
    await expect(page.locator("#alerts li").first().textContent()).resolves.toContain("backend_down");
    expect(await page.locator("#regions svg.bars rect").count()).toBe(3);
    expect(await page.locator("#placement-map g.region-node").count()).toBe(3);
    await expect(page.locator('#placement-map g[data-region="eu-west"]').textContent()).resolves.toBe(
      "eu-west (home)4 keysrows in 3, out 0moving in: 1 key",
    );
    await expect(page.locator("#moves li").textContent()).resolves.toContain("carol to eu-west");
    await expect(page.locator("#decisions tbody tr td").first().textContent()).resolves.toBe(
      "SELECT name FROM users WHERE tenant_id = $1",
    );
    await expect(page.locator("#refused tbody tr td").nth(1).textContent()).resolves.toBe(
      "cross-region-join",
    );
    await expect(page.locator('[data-live="schema-drift-tables"]').textContent()).resolves.toBe("1");
    await expect(page.locator("#schema-drift tbody tr").textContent()).resolves.toBe(
      "public.ordersus-eastdiffersextra column note text",
    );
    expect(violations.filter((text) => /Content Security Policy/i.test(text))).toEqual([]);

    // Let the sparklines gather a few points before the picture.
    await page.waitForTimeout(3_000);
    mkdirSync(OUTPUT, { recursive: true });
    const shot = join(OUTPUT, "dashboard.png");
    await page.screenshot({ path: shot, fullPage: true });
    expect(existsSync(shot)).toBe(true);
  });

  it("reads and refreshes itself every five seconds with scripts off", async () => {
    const quietProfile = mkdtempSync(join(tmpdir(), "geo-admin-chromium-"));
    const quiet = await launch(quietProfile, false);
    try {
      const page = await quiet.newPage();
      await page.goto(admin.url, { waitUntil: "load" });
      await expect(page.locator("#state").textContent()).resolves.toBe("static, reloads every 5 s");
      const before = Number(
        ((await page.locator('[data-live="statements-total"]').textContent()) ?? "").replaceAll(",", ""),
      );
      for (let n = 0; n < 10; n++) runStatement(metrics, n);
      await page.waitForEvent("load", { timeout: 8_000 });
      const after = Number(
        ((await page.locator('[data-live="statements-total"]').textContent()) ?? "").replaceAll(",", ""),
      );
      expect(after).toBeGreaterThan(before);
    } finally {
      await quiet.close();
      rmSync(quietProfile, { recursive: true, force: true });
    }
  });
});
