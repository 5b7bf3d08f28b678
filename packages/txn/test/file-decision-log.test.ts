import { appendFile, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as zlib from "node:zlib";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type DecisionRecord, FileDecisionLog } from "../src/index.js";

let directory: string;
let path: string;

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), "geo-txn-log-"));
  path = join(directory, "decisions.log");
});
afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

const record = (gid: string, decision: "commit" | "abort" = "commit"): DecisionRecord => ({
  gid,
  decision,
  participants: ["eu", "us"],
  decidedAt: 1_700_000_000_000,
});

describe("FileDecisionLog", () => {
  it("writes one line per record: CRC-32 of the JSON in hex, a space, the JSON", async () => {
    const log = await FileDecisionLog.open({ path });
    await log.decide(record("g1"));
    await log.complete("g1");
    await log.close();
    const lines = (await readFile(path, "utf8")).split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe("");
    for (const line of lines.slice(0, 2)) {
      const json = line.slice(9);
      expect(line.slice(0, 9)).toBe(`${zlib.crc32(json).toString(16).padStart(8, "0")} `);
    }
    expect(JSON.parse(lines[0]!.slice(9))).toEqual({
      v: 1,
      type: "decide",
      gid: "g1",
      decision: "commit",
      participants: ["eu", "us"],
      at: 1_700_000_000_000,
    });
    expect(JSON.parse(lines[1]!.slice(9))).toMatchObject({ v: 1, type: "complete", gid: "g1" });
  });

  it("keeps decisions and completions across a reopen", async () => {
    const log = await FileDecisionLog.open({ path });
    await log.decide(record("g1"));
    await log.decide(record("g2", "abort"));
    await log.complete("g1");
    await log.close();
    const reopened = await FileDecisionLog.open({ path });
    expect(await reopened.lookup("g1")).toEqual(record("g1"));
    expect(await reopened.pending()).toEqual([record("g2", "abort")]);
    await reopened.close();
  });

  it("keeps the first decision for a gid and returns it to a later attempt", async () => {
    const log = await FileDecisionLog.open({ path });
    await log.decide(record("g1", "abort"));
    expect(await log.decide(record("g1", "commit"))).toEqual(record("g1", "abort"));
    const [a, b] = await Promise.all([log.decide(record("g2", "commit")), log.decide(record("g2", "abort"))]);
    expect(a.decision).toBe("commit");
    expect(b.decision).toBe("commit");
    await log.close();
  });

  it("makes every one of many concurrent decisions durable", async () => {
    const log = await FileDecisionLog.open({ path });
    await Promise.all(Array.from({ length: 64 }, (_, i) => log.decide(record(`g${i}`))));
    await log.close();
    const reopened = await FileDecisionLog.open({ path });
    expect(await reopened.pending()).toHaveLength(64);
    await reopened.close();
  });

  it("ignores a torn last line and cuts it off so the next record starts a clean line", async () => {
    const log = await FileDecisionLog.open({ path });
    await log.decide(record("g1"));
    await log.close();
    const good = await readFile(path, "utf8");
    await appendFile(path, good.slice(0, 30));
    const reopened = await FileDecisionLog.open({ path });
    expect(await reopened.pending()).toEqual([record("g1")]);
    expect(await readFile(path, "utf8")).toBe(good);
    await reopened.decide(record("g2"));
    await reopened.close();
    const again = await FileDecisionLog.open({ path });
    expect((await again.pending()).map((r) => r.gid)).toEqual(["g1", "g2"]);
    await again.close();
  });

  it("ignores a last line whose checksum fails", async () => {
    const log = await FileDecisionLog.open({ path });
    await log.decide(record("g1"));
    await log.decide(record("g2"));
    await log.close();
    const text = await readFile(path, "utf8");
    await writeFile(path, text.replace('"g2"', '"g3"'));
    const reopened = await FileDecisionLog.open({ path });
    expect((await reopened.pending()).map((r) => r.gid)).toEqual(["g1"]);
    await reopened.close();
  });

  it("refuses a file damaged before its last line", async () => {
    const log = await FileDecisionLog.open({ path });
    await log.decide(record("g1"));
    await log.decide(record("g2"));
    await log.close();
    const text = await readFile(path, "utf8");
    await writeFile(path, text.replace('"g1"', '"gX"'));
    await expect(FileDecisionLog.open({ path })).rejects.toMatchObject({ code: "XX001" });
  });

  it("compacts away completed commits and keeps pending decisions and recent aborts", async () => {
    let now = 0;
    const log = await FileDecisionLog.open({ path, abortRetentionMs: 100, clock: () => now });
    for (let i = 0; i < 20; i++) await log.decide(record(`c${i}`));
    for (let i = 0; i < 19; i++) await log.complete(`c${i}`);
    await log.decide(record("a1", "abort"));
    await log.complete("a1");
    const before = log.sizeInBytes;
    await log.compact();
    expect(log.sizeInBytes).toBeLessThan(before / 10);
    expect(await log.lookup("c0")).toBeUndefined();
    expect(await log.lookup("a1")).toEqual(record("a1", "abort"));
    now = 100;
    await log.compact();
    expect(await log.lookup("a1")).toBeUndefined();
    await log.decide(record("after"));
    await log.close();
    const reopened = await FileDecisionLog.open({ path });
    expect((await reopened.pending()).map((r) => r.gid)).toEqual(["c19", "after"]);
    await reopened.close();
  });

  it("compacts by itself after the configured number of completions", async () => {
    const log = await FileDecisionLog.open({ path, compactAfter: 10 });
    for (let i = 0; i < 10; i++) {
      await log.decide(record(`c${i}`));
      await log.complete(`c${i}`);
    }
    await log.decide(record("kept"));
    expect((await readFile(path, "utf8")).trim().split("\n")).toHaveLength(1);
    await log.close();
  });

  it("refuses a second opener while the owner lives, and takes over a dead owner's lock", async () => {
    const log = await FileDecisionLog.open({ path });
    await expect(FileDecisionLog.open({ path })).rejects.toMatchObject({ code: "55006" });
    await log.close();
    await writeFile(`${path}.lock`, "999999999");
    const next = await FileDecisionLog.open({ path });
    await next.close();
  });
});
