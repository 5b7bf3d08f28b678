import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { findPostgresBinaries, isPortOpen } from "@geo/testkit";
import { afterAll, describe, expect, it } from "vitest";

const PROXY_DIR = fileURLToPath(new URL("../", import.meta.url));
const REPO_DIR = fileURLToPath(new URL("../../../", import.meta.url));
/** The ports examples/geoproxy.toml names: the demo runs on them as-is. */
const PORTS = [5433, 5434, 5435, 6432];

let child: ChildProcessWithoutNullStreams | undefined;
/** The README's command, in a process group of its own as a terminal's foreground job. */
let group: ChildProcessWithoutNullStreams | undefined;

/** A failed test must not leave the demo running: Ctrl-C it as a user would, then kill it. */
afterAll(async () => {
  for (const [demo, signal] of [
    [child, (name: NodeJS.Signals) => child?.kill(name)],
    [group, (name: NodeJS.Signals) => group?.pid !== undefined && process.kill(-group.pid, name)],
  ] as const) {
    if (demo === undefined || demo.exitCode !== null || demo.signalCode !== null) continue;
    const exited = new Promise((resolve) => demo.once("exit", resolve));
    signal("SIGINT");
    const timer = setTimeout(() => signal("SIGKILL"), 20_000);
    await exited;
    clearTimeout(timer);
  }
});

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function run(
  program: string,
  args: readonly string[],
): Promise<{ stdout: string; stderr: string; code: number | null }> {
  const process = spawn(program, args, { env: { ...globalThis.process.env, PGCONNECT_TIMEOUT: "10" } });
  let stdout = "";
  let stderr = "";
  process.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  process.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  return new Promise((resolve, reject) => {
    process.on("error", reject);
    process.on("close", (code) => resolve({ stdout, stderr, code }));
  });
}

function waitForOutput(
  demo: ChildProcessWithoutNullStreams,
  marker: string,
  timeoutMs: number,
): Promise<string> {
  let output = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the demo did not print ${marker} in time:\n${output}`)),
      timeoutMs,
    );
    const done = (error?: Error) => {
      clearTimeout(timer);
      if (error === undefined) resolve(output);
      else reject(error);
    };
    demo.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk;
      if (output.includes(marker)) done();
    });
    demo.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk;
    });
    demo.on("exit", (code) =>
      done(new Error(`the demo exited with ${code} before it was ready:\n${output}`)),
    );
  });
}

describe("the demo", () => {
  it("says how to install PostgreSQL when its programs cannot be found, and exits non-zero", async () => {
    const demo = spawn(process.execPath, ["--import", "tsx", "scripts/demo.ts"], {
      cwd: PROXY_DIR,
      env: { ...process.env, GEO_PG_BINDIR: join(PROXY_DIR, "no-such-folder") },
    });
    let stderr = "";
    demo.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    const code = await new Promise<number | null>((resolve) => demo.on("exit", resolve));
    expect(code).toBe(1);
    expect(stderr).toContain("needs PostgreSQL");
    expect(stderr).toContain("apt-get install");
  });

  it("starts three regions and geoproxy on the example's ports, answers psql, and removes everything on Ctrl-C", {
    timeout: 180_000,
  }, async () => {
    const { bindir } = findPostgresBinaries();
    const psql = existsSync(join(bindir, "psql")) ? join(bindir, "psql") : "psql";
    for (const port of PORTS)
      expect(await isPortOpen(port), `port ${port} must be free for the demo`).toBe(false);

    // One process (node with tsx's loader) rather than the tsx launcher, so SIGINT reaches the demo itself.
    const demo = spawn(process.execPath, ["--import", "tsx", "scripts/demo.ts"], {
      cwd: PROXY_DIR,
      env: { ...process.env, NO_COLOR: "1" },
    });
    child = demo;
    const output = await waitForOutput(demo, "Ctrl-C stops", 120_000);
    expect(output).toContain("psql -h 127.0.0.1 -p 6432 -d shop -U postgres");
    const dataDirs = /data folders: (.*)$/m.exec(output)?.[1]?.split(" ") ?? [];
    expect(dataDirs).toHaveLength(3);
    for (const dir of dataDirs) expect(existsSync(dir), dir).toBe(true);

    const connect = ["-X", "-A", "-t", "-h", "127.0.0.1", "-p", "6432", "-d", "shop", "-U", "postgres"];
    const regions = await run(psql, [...connect, "-c", "SHOW REGIONS"]);
    expect(regions.stderr).toBe("");
    expect(regions.stdout.trim().split("\n")).toEqual([
      "ap-south|no|ap-south|127.0.0.1:5435||up",
      "eu-west|yes|eu-west|127.0.0.1:5433||up",
      "us-east|no|us-east|127.0.0.1:5434||up",
    ]);
    const keyed = await run(psql, [
      ...connect,
      "-c",
      "SELECT o.total, u.name FROM orders o JOIN users u ON u.tenant_id = o.tenant_id AND u.id = o.user_id WHERE o.tenant_id = 'bob'",
    ]);
    expect(keyed.stderr).toBe("");
    expect(keyed.stdout.trim()).toBe("120.00|Bob");

    const exited = new Promise<number | null>((resolve) => demo.on("exit", (code) => resolve(code)));
    demo.kill("SIGINT");
    expect(await exited).toBe(0);
    for (const port of PORTS) expect(await isPortOpen(port), `port ${port} after Ctrl-C`).toBe(false);
    for (const dir of dataDirs) expect(existsSync(dir), `${dir} after Ctrl-C`).toBe(false);
  });

  it("stops with 0 and leaves no server on Ctrl-C while it is still starting", {
    timeout: 180_000,
  }, async () => {
    for (const port of PORTS)
      expect(await isPortOpen(port), `port ${port} must be free for the demo`).toBe(false);
    const demo = spawn(process.execPath, ["--import", "tsx", "scripts/demo.ts"], {
      cwd: PROXY_DIR,
      env: { ...process.env, NO_COLOR: "1" },
    });
    child = demo;
    let output = "";
    let sent = false;
    demo.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk;
      // Its first line comes before the first server is started.
      if (!sent && output.includes("starting three PostgreSQL servers")) {
        sent = true;
        demo.kill("SIGINT");
      }
    });
    const code = await new Promise<number | null>((resolve) => demo.on("exit", resolve));
    expect(code, output).toBe(0);
    expect(output).toContain("SIGINT: stopping what has started so far");
    expect(output).not.toContain("Connect with:");
    for (const port of PORTS) expect(await isPortOpen(port), `port ${port} after Ctrl-C`).toBe(false);
  });

  it("stops cleanly on Ctrl-C through the README's command: exit 0, no error printed, no server left, folders removed", {
    timeout: 480_000,
  }, async () => {
    for (const port of PORTS)
      expect(await isPortOpen(port), `port ${port} must be free for the demo`).toBe(false);
    // detached: a new process group led by bash, which the demo's node process then replaces.
    const demo = spawn("bash", ["scripts/demo.sh"], {
      cwd: REPO_DIR,
      detached: true,
      env: { ...process.env, NO_COLOR: "1" },
    });
    group = demo;
    let stderr = "";
    demo.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    // Its build step is instant once built, but may rebuild first after a change.
    const output = await waitForOutput(demo, "Ctrl-C stops", 420_000);
    const dataDirs = /data folders: (.*)$/m.exec(output)?.[1]?.split(" ") ?? [];
    expect(dataDirs).toHaveLength(3);
    const postmasters = dataDirs.map((dir) =>
      Number(readFileSync(join(dir, "postmaster.pid"), "utf8").split("\n", 1)[0]),
    );
    for (const pid of postmasters) expect(isRunning(pid), `postmaster ${pid}`).toBe(true);

    let after = "";
    demo.stdout.on("data", (chunk: string) => {
      after += chunk;
    });
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      demo.on("exit", (code, signal) => resolve([code, signal])),
    );
    // What a terminal does on Ctrl-C: SIGINT to every process of the foreground group.
    process.kill(-demo.pid!, "SIGINT");
    expect(await exited).toEqual([0, null]);
    expect(after).toContain("stopped; the servers' data folders are removed.");
    expect(stderr).not.toMatch(/ELIFECYCLE|ERR_PNPM|Error/);
    for (const pid of postmasters) expect(isRunning(pid), `postmaster ${pid} after Ctrl-C`).toBe(false);
    for (const port of PORTS) expect(await isPortOpen(port), `port ${port} after Ctrl-C`).toBe(false);
    for (const dir of dataDirs) expect(existsSync(dirname(dir)), `${dirname(dir)} after Ctrl-C`).toBe(false);
  });
});
