import type { FakeBackendOptions } from "@geo/testkit";
import { RawClient } from "@geo/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeRegions, startFakeRegions } from "./support/fake-regions.js";

/**
 * A region that stops answering while its port stays open: the eu-west fake stalls every
 * statement (its probes included) while `frozen` is set, as a SIGSTOPped server would.
 */

const UNREACHABLE_MS = 1_000;
/** The bound a client waits at most: the timeout, two checks to notice the wait, and slack for a loaded machine. */
const BOUND_MS = UNREACHABLE_MS + 2_000;

let frozen = false;
let regions: FakeRegions;

const usersRow = (_sql: string, _params: unknown, ctx: { text(i: number): string | null }) => ({
  columns: ["tenant_id", "name"],
  rows: [[ctx.text(0) ?? "?", "someone"]],
});

function regionOptions(stalls: boolean): FakeBackendOptions {
  return {
    unknownStatements: "empty",
    rules: [
      { match: /pg_sleep/i, reply: { columns: ["n"], rows: [["1"]], delayMs: 3_000 } },
      { match: /tenant_id = \$1/i, reply: usersRow },
      { match: /FROM users/i, reply: { columns: ["name"], rows: [["someone"]] } },
    ],
    ...(stalls ? { failures: { stallOn: () => frozen } } : {}),
  };
}

beforeAll(async () => {
  regions = await startFakeRegions({
    "eu-west": regionOptions(true),
    "us-east": regionOptions(false),
    "ap-south": regionOptions(false),
    extraToml: `\n[pool]\nunreachable_timeout_ms = ${UNREACHABLE_MS}\n`,
  });
});
afterAll(() => regions.close());

async function client(): Promise<RawClient> {
  return RawClient.connect({ host: "127.0.0.1", port: regions.proxy.port, user: "app", timeoutMs: 30_000 });
}

async function timed<T>(run: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = Date.now();
  const value = await run();
  return { ms: Date.now() - started, value };
}

async function servesAgain(): Promise<number> {
  const started = Date.now();
  for (;;) {
    const c = await client();
    const result = await c.query("SELECT name FROM users WHERE tenant_id = 'alice'");
    await c.close();
    if (result.error === undefined) return Date.now() - started;
    if (Date.now() - started > 10_000) throw new Error(`eu-west still failing: ${result.error.message}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("a frozen region (fake backend that stops answering)", () => {
  it("fails a statement to it within the bound, then fails new ones at once, while other regions serve", async () => {
    const warm = await client();
    expect((await warm.query("SELECT name FROM users WHERE tenant_id = 'alice'")).error).toBeUndefined();
    frozen = true;
    const stuck = await timed(() => warm.query("SELECT name FROM users WHERE tenant_id = 'alice' /* f1 */"));
    console.log(`frozen region (fake): single-region statement failed after ${stuck.ms} ms`);
    expect(stuck.value.error?.code).toBe("08006");
    expect(stuck.value.error?.message).toContain("eu-west");
    expect(stuck.ms).toBeLessThan(BOUND_MS);
    // The session stays usable for other regions.
    expect((await warm.query("SELECT name FROM users WHERE tenant_id = 'bob'")).error).toBeUndefined();
    await warm.close();

    const fresh = await client();
    const fast = await timed(() => fresh.query("SELECT name FROM users WHERE tenant_id = 'alice'"));
    expect(fast.value.error?.code).toMatch(/^08/);
    expect(fast.value.error?.message).toContain("eu-west");
    expect(fast.value.error?.hint).toBeTruthy();
    expect(fast.ms).toBeLessThan(500);
    const bob = await timed(() => fresh.query("SELECT name FROM users WHERE tenant_id = 'bob'"));
    expect(bob.value.error).toBeUndefined();
    expect(bob.ms).toBeLessThan(1_000);
    await fresh.close();

    frozen = false;
    console.log(`frozen region (fake): served again ${await servesAgain()} ms after it resumed`);
  }, 60_000);

  it("fails a read across regions that includes it within the bound", async () => {
    const c = await client();
    const s0 = await c.query("SELECT name FROM users /* s0 */");
    expect(s0.error).toBeUndefined();
    frozen = true;
    const scatter = await timed(() => c.query("SELECT name FROM users /* s1 */"));
    console.log(`frozen region (fake): read across regions failed after ${scatter.ms} ms`);
    expect(scatter.value.error?.code).toMatch(/^08/);
    expect(scatter.value.error?.message).toContain("eu-west");
    expect(scatter.ms).toBeLessThan(BOUND_MS);
    expect((await c.query("SELECT name FROM users WHERE tenant_id = 'chandra'")).error).toBeUndefined();
    await c.close();
    frozen = false;
    await servesAgain();
    const after = await client();
    expect((await after.query("SELECT name FROM users /* s2 */")).error).toBeUndefined();
    await after.close();
  }, 60_000);

  it("lets a long statement of a healthy region run past the timeout", async () => {
    const c = await client();
    const slow = await timed(() => c.query("SELECT pg_sleep(3) FROM users WHERE tenant_id = 'bob'"));
    expect(slow.value.error).toBeUndefined();
    expect(slow.ms).toBeGreaterThanOrEqual(2_900);
    await c.close();
  }, 30_000);
});
