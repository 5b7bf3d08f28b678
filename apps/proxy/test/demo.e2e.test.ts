import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { findPostgresBinaries, isPortOpen } from "@geo/testkit";
import { afterAll, describe, expect, it } from "vitest";

const PROXY_DIR = fileURLToPath(new URL("../", import.meta.url));
/** The ports examples/geoproxy.toml names: the demo runs on them as-is. */
const PORTS = [5433, 5434, 5435, 6432];

let child: ChildProcessWithoutNullStreams | undefined;

/** A failed test must not leave the demo running: Ctrl-C it as a user would, then kill it. */
afterAll(async () => {
  const demo = child;
  if (demo === undefined || demo.exitCode !== null || demo.signalCode !== null) return;
  const exited = new Promise((resolve) => demo.once("exit", resolve));
  demo.kill("SIGINT");
  const timer = setTimeout(() => demo.kill("SIGKILL"), 20_000);
  await exited;
  clearTimeout(timer);
});

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
});
