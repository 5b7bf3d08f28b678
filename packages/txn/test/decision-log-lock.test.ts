import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseLock } from "../src/decision-log-lock.js";
import { encodeLine } from "../src/file-decision-log.js";
import { FileDecisionLog, TxnError } from "../src/index.js";
import { livenessOf, ownLife } from "../src/process-identity.js";

const HOLDER = fileURLToPath(new URL("./fixtures/hold-decision-log.ts", import.meta.url));
const LINUX = process.platform === "linux";

let directory: string;
let path: string;
const children = new Set<ChildProcess>();

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), "geo-txn-lock-"));
  path = join(directory, "decisions.log");
});
afterEach(async () => {
  for (const child of children) child.kill("SIGKILL");
  children.clear();
  await rm(directory, { recursive: true, force: true });
});

/** A real second process holding the log at `path` until killed. */
async function holder(logPath: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", HOLDER, logPath], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(child);
  let output = "";
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("HELD\n")) resolve();
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.on("exit", (code) => reject(new Error(`holder exited (${code}):\n${output}`)));
  });
  return child;
}

async function kill(child: ChildProcess): Promise<void> {
  const exited = once(child, "exit");
  child.kill("SIGKILL");
  await exited;
  children.delete(child);
}

const lockOf = async () => parseLock(await readFile(`${path}.lock`, "utf8"));

describe("the decision log's lock", () => {
  it("names its owner by pid, start identity and a random token", async () => {
    const log = await FileDecisionLog.open({ path });
    const owner = await lockOf();
    expect(owner?.pid).toBe(process.pid);
    expect(owner?.token).toMatch(/^[0-9a-f]{32}$/);
    if (LINUX) expect(owner?.start).toMatch(/^[0-9a-f-]+:\d+$/);
    expect(log.tookOver).toBeUndefined();
    await log.close();
    expect(await readdir(directory)).toEqual(["decisions.log"]);
  });

  it("takes over a lock naming this process's own pid under another token: a previous life of the same pid", async () => {
    // What a proxy running as pid 1 in a container finds after a crash and restart: its own pid,
    // even its own start identity when the container's clock of ticks repeats, but not its token.
    const life = await ownLife();
    await writeFile(
      `${path}.lock`,
      JSON.stringify({ v: 2, pid: life.pid, start: life.start, host: "before", token: "0".repeat(32) }),
    );
    const log = await FileDecisionLog.open({ path });
    expect(log.tookOver).toMatchObject({
      reason: "previous-life",
      owner: { pid: process.pid, host: "before" },
    });
    expect((await lockOf())?.token).not.toBe("0".repeat(32));
    await log.close();
  });

  it("takes over a bare pid of this process, as earlier versions wrote it", async () => {
    await writeFile(`${path}.lock`, String(process.pid));
    const log = await FileDecisionLog.open({ path });
    expect(log.tookOver).toMatchObject({ reason: "previous-life", owner: { pid: process.pid } });
    await log.close();
  });

  it("takes over the lock of a process killed with SIGKILL", async () => {
    const child = await holder(path);
    const pid = child.pid!;
    await kill(child);
    expect((await lockOf())?.pid).toBe(pid);
    const log = await FileDecisionLog.open({ path });
    expect(log.tookOver).toMatchObject({ reason: "exited", owner: { pid } });
    await log.close();
  });

  it("takes over a lock whose pid now belongs to a process started at another time", async () => {
    if (!LINUX) return;
    // A live process under the recorded pid, but not the one that wrote the lock: the pid was reused.
    const child = await holder(join(directory, "other.log"));
    const life = await ownLife();
    await writeFile(
      `${path}.lock`,
      JSON.stringify({
        v: 2,
        pid: child.pid,
        start: `${life.start?.split(":")[0]}:1`,
        token: "1".repeat(32),
      }),
    );
    const log = await FileDecisionLog.open({ path });
    expect(log.tookOver).toMatchObject({ reason: "exited", owner: { pid: child.pid } });
    await log.close();
  });

  it("refuses while another live process holds it, naming the file and the owner, and opens once it is gone", async () => {
    const child = await holder(path);
    const refused = await FileDecisionLog.open({ path }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TxnError);
    expect(refused).toMatchObject({ code: "55006" });
    expect((refused as Error).message).toContain(path);
    expect((refused as Error).message).toContain(`process ${child.pid}`);
    // The refused open left the holder's lock as it was.
    expect((await lockOf())?.pid).toBe(child.pid);
    await kill(child);
    const log = await FileDecisionLog.open({ path });
    expect(log.tookOver?.reason).toBe("exited");
    await log.close();
  });

  it("refuses a second open in this process while the first is open", async () => {
    const log = await FileDecisionLog.open({ path });
    await expect(FileDecisionLog.open({ path })).rejects.toMatchObject({ code: "55006" });
    await log.close();
    const again = await FileDecisionLog.open({ path });
    expect(again.tookOver).toBeUndefined();
    await again.close();
  });

  it("takes over an empty or damaged lock file: a live owner's lock always appears whole", async () => {
    for (const content of ["", '{"v":2,"pid":', "\u0000\u0000\u0000\u0000", "-5"]) {
      await writeFile(`${path}.lock`, content);
      const log = await FileDecisionLog.open({ path });
      expect(log.tookOver).toEqual({ reason: "unreadable", owner: undefined });
      await log.close();
    }
  });

  it("releases the lock of an open that failed, so the next open reports the real fault", async () => {
    await writeFile(path, `garbage\n${encodeLine({ v: 1, type: "complete", gid: "g1", at: 1 })}`);
    await expect(FileDecisionLog.open({ path })).rejects.toMatchObject({ code: "XX001" });
    await expect(FileDecisionLog.open({ path })).rejects.toMatchObject({ code: "XX001" });
    expect(await readdir(directory)).toEqual(["decisions.log"]);
  });

  it("leaves alone, on close, a lock another process has taken over meanwhile", async () => {
    const log = await FileDecisionLog.open({ path });
    const theirs = JSON.stringify({ v: 2, pid: 1, token: "2".repeat(32) });
    await writeFile(`${path}.lock`, theirs);
    await log.close();
    expect(await readFile(`${path}.lock`, "utf8")).toBe(theirs);
  });
});

describe("process liveness", () => {
  it("tells a running process from a dead pid and from a reused one", async () => {
    const life = await ownLife();
    expect(await livenessOf(life)).toBe("alive");
    expect(await livenessOf({ pid: 999_999_999, start: undefined })).toBe("dead");
    if (LINUX) expect(await livenessOf({ pid: life.pid, start: `${life.start}0` })).toBe("dead");
  });
});
