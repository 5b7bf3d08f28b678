import { spawn } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { FakeBackend, RawClient } from "@geo/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { regionsToml } from "./support/fake-regions.js";
import { txnSection } from "./support/txn-data-dir.js";

const cli = fileURLToPath(new URL("../src/cli.ts", import.meta.url));
const examples = fileURLToPath(new URL("../../../examples/", import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function geoproxy(args: string[]): {
  done: Promise<Run>;
  child: ReturnType<typeof spawn>;
  output: () => string;
} {
  const child = spawn(process.execPath, ["--import", "tsx", cli, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr!.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const done = new Promise<Run>((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
  return { done, child, output: () => stdout };
}

function tempToml(name: string, text: string): string {
  const file = join(tmpdir(), `geoproxy-${process.pid}-${name}.toml`);
  writeFileSync(file, text);
  return file;
}

describe("geoproxy explain", () => {
  it("prints where a statement runs, before and after its parameter is known", async () => {
    const base = [
      "explain",
      "--topology",
      join(examples, "topology.toml"),
      "--directory",
      join(examples, "keys.tsv"),
    ];
    const deferred = await geoproxy([...base, "SELECT * FROM users WHERE tenant_id = $1"]).done;
    expect(deferred.code).toBe(0);
    expect(deferred.stdout).toMatch(/deferred until \$1/);
    const bound = await geoproxy([...base, "--param", "bob", "SELECT * FROM users WHERE tenant_id = $1"])
      .done;
    expect(bound.code).toBe(0);
    expect(bound.stdout).toMatch(/one region: us-east/);
  });
});

describe("geoproxy serve", () => {
  let fakes: FakeBackend[] = [];
  beforeAll(async () => {
    fakes = await Promise.all([0, 1, 2].map(() => FakeBackend.start({ unknownStatements: "empty" })));
  });
  afterAll(async () => {
    await Promise.all(fakes.map((fake) => fake.close()));
  });

  it("reports a configuration error in one line naming the file and field, and exits non-zero", async () => {
    const file = tempToml("bad", `${regionsToml([1, 2, 3])}\n[server]\nport = "six"\n`);
    const run = await geoproxy(["serve", "--config", file]).done;
    expect(run.code).not.toBe(0);
    const lines = run.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(file);
  });

  it("reports each unreachable region on a line of its own and exits non-zero", async () => {
    const closed = await Promise.all(
      [0, 1, 2].map(async () => {
        const fake = await FakeBackend.start();
        const port = fake.port;
        await fake.close();
        return port;
      }),
    );
    const file = tempToml("unreachable", regionsToml(closed));
    const run = await geoproxy(["serve", "--config", file]).done;
    expect(run.code).not.toBe(0);
    const lines = run.stderr.trim().split("\n");
    expect(lines).toHaveLength(3);
    for (const region of ["eu-west", "us-east", "ap-south"]) {
      expect(lines.some((line) => line.includes(`region ${region}`) && line.includes("unreachable"))).toBe(
        true,
      );
    }
  }, 30_000);

  it("refuses to listen beyond loopback with trust authentication unless told it is intended", async () => {
    const toml = regionsToml(fakes.map((f) => f.port)).replace(
      'host = "127.0.0.1"\nport = 0',
      'host = "0.0.0.0"\nport = 0',
    );
    const run = await geoproxy(["serve", "--config", tempToml("open", toml)]).done;
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/trust_beyond_loopback/);
  });

  it("routes by the directory file the example configuration names, found beside the configuration", async () => {
    // The example as shipped, pointed at the fake regions (and a decision log folder of its own): its
    // [directory] file is relative.
    const folder = mkdtempSync(join(tmpdir(), "geoproxy-example-"));
    const ports = fakes.map((fake) => fake.port);
    const toml = readFileSync(join(examples, "geoproxy.toml"), "utf8")
      .replace("port = 6432", "port = 0")
      .replace("port = 5433", `port = ${ports[0]}`)
      .replace("port = 5434", `port = ${ports[1]}`)
      .replace("port = 5435", `port = ${ports[2]}`);
    writeFileSync(join(folder, "geoproxy.toml"), `${toml}${txnSection()}`);
    copyFileSync(join(examples, "keys.tsv"), join(folder, "keys.tsv"));
    // The working directory (this package) holds no keys.tsv: only the configuration's folder does.
    const proxy = geoproxy(["serve", "--config", join(folder, "geoproxy.toml")]);
    try {
      const port = await new Promise<number>((resolve, reject) => {
        const timer = setInterval(() => {
          const match = /"port":(\d+),[^\n]*"msg":"geoproxy listening"/.exec(proxy.output());
          if (match) {
            clearInterval(timer);
            resolve(Number(match[1]));
          }
        }, 20);
        void proxy.done.then((run) => {
          clearInterval(timer);
          reject(new Error(`geoproxy exited: ${run.stderr}`));
        });
      });
      const client = await RawClient.connect({ host: "127.0.0.1", port, user: "app" });
      for (const [key, index] of [
        ["alice", 0],
        ["bob", 1],
        ["chandra", 2],
      ] as const) {
        const marker = `/* directory-${key} */`;
        const result = await client.query(`SELECT 1 FROM users WHERE tenant_id = '${key}' ${marker}`);
        expect(result.error).toBeUndefined();
        const ranIn = fakes.map((fake) => fake.statements.some((s) => s.sql.includes(marker)));
        expect(ranIn).toEqual([0, 1, 2].map((i) => i === index));
      }
      await client.close();
    } finally {
      proxy.child.kill("SIGTERM");
      await proxy.done;
    }
  }, 30_000);

  it("lets an open transaction finish on SIGTERM, then closes its client and exits 0", async () => {
    const proxy = geoproxy(["serve", "--config", tempToml("serve", regionsToml(fakes.map((f) => f.port)))]);
    const port = await new Promise<number>((resolve) => {
      const timer = setInterval(() => {
        const match = /"port":(\d+),[^\n]*"msg":"geoproxy listening"/.exec(proxy.output());
        if (match) {
          clearInterval(timer);
          resolve(Number(match[1]));
        }
      }, 20);
    });
    const client = await RawClient.connect({ host: "127.0.0.1", port, user: "app" });
    await client.query("BEGIN");
    await client.query("SELECT 1 FROM users WHERE tenant_id = 'alice'");
    proxy.child.kill("SIGTERM");
    await new Promise((resolve) => setTimeout(resolve, 200));
    const inside = await client.query("SELECT 2 FROM users WHERE tenant_id = 'alice'");
    expect(inside.error).toBeUndefined();
    const commit = await client.query("COMMIT");
    expect(commit.tags).toEqual(["COMMIT"]);
    await client.closedByServer();
    const run = await proxy.done;
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/"msg":"geoproxy stopped"/);
  }, 30_000);
});
