import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";

// The command as installed: the package's bin, which runs the build's dist/cli.js.
const bin = fileURLToPath(new URL("../bin/geoproxy.js", import.meta.url));
const built = fileURLToPath(new URL("../dist/cli.js", import.meta.url));
const root = fileURLToPath(new URL("../../../", import.meta.url));
const examples = join(root, "examples");

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function geoproxy(args: readonly string[], cwd = root): Promise<Run> {
  const child = spawn(process.execPath, [bin, ...args], { cwd, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (data: Buffer) => {
    stdout += data.toString();
  });
  child.stderr.on("data", (data: Buffer) => {
    stderr += data.toString();
  });
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

const SUBCOMMANDS = {
  serve: ["--config", "--directory", "--log-level", "--shutdown-timeout-ms", "--help"],
  explain: ["--config", "--topology", "--directory", "--param", "--help"],
} as const;

beforeAll(() => {
  if (!existsSync(built))
    throw new Error("these tests run the built command line: run `pnpm run build` first");
});

describe("geoproxy --help", () => {
  it("prints the usage, every command and how to get a command's help, and exits 0", async () => {
    for (const args of [["--help"], ["-h"], ["help"]]) {
      const run = await geoproxy(args);
      expect(run.code, args.join(" ")).toBe(0);
      expect(run.stdout).toMatch(/^usage: geoproxy <command>/);
      for (const name of Object.keys(SUBCOMMANDS)) expect(run.stdout).toContain(`  ${name} `);
      expect(run.stdout).toContain("geoproxy <command> --help");
      expect(run.stderr).toBe("");
    }
  });

  it("refuses an unknown command with the usage and exit status 64", async () => {
    const run = await geoproxy(["frobnicate"]);
    expect(run.code).toBe(64);
    expect(run.stderr).toContain("unknown command frobnicate");
    expect(run.stderr).toContain("usage: geoproxy <command>");
  });
});

describe("geoproxy <command> --help", () => {
  for (const [name, options] of Object.entries(SUBCOMMANDS)) {
    it(`prints ${name}'s usage line, options with defaults and examples, and exits 0`, async () => {
      const run = await geoproxy([name, "--help"]);
      expect(run.code).toBe(0);
      expect(run.stderr).toBe("");
      expect(run.stdout).toMatch(new RegExp(`^usage: geoproxy ${name} `));
      for (const option of options) expect(run.stdout).toContain(option);
      expect(run.stdout).toContain("(default: geoproxy.toml in the current folder)");
      expect(run.stdout).toMatch(/\nexamples:\n {2}geoproxy /);
      expect((await geoproxy([name, "-h"])).stdout).toBe(run.stdout);
      expect((await geoproxy(["help", name])).stdout).toBe(run.stdout);
    });
  }
});

describe("geoproxy command-line mistakes", () => {
  for (const name of Object.keys(SUBCOMMANDS)) {
    it(`refuses an unknown option of ${name}, naming it, with the usage and exit status 64`, async () => {
      const run = await geoproxy([name, "--frobnicate", "SELECT 1"]);
      expect(run.code).toBe(64);
      expect(run.stderr).toContain("unknown option --frobnicate for geoproxy");
      expect(run.stderr).toContain(`usage: geoproxy ${name} `);
      expect(run.stdout).toBe("");
    });
  }

  it("refuses an option given without its value, naming it, with exit status 64", async () => {
    const run = await geoproxy(["explain", "--config"]);
    expect(run.code).toBe(64);
    expect(run.stderr).toContain("--config needs a value");
    expect(run.stderr).toContain("usage: geoproxy explain ");
    const ambiguous = await geoproxy(["explain", "--directory", "--param", "x", "SELECT 1"]);
    expect(ambiguous.code).toBe(64);
    expect(ambiguous.stderr).toContain("--directory needs a value");
  });

  it("refuses the same option given twice", async () => {
    const config = join(examples, "geoproxy.toml");
    const run = await geoproxy(["explain", "--config", config, "--config", config, "SELECT 1"]);
    expect(run.code).toBe(64);
    expect(run.stderr).toContain("--config is given more than once");
  });
});

describe("geoproxy explain and its configuration", () => {
  it("takes the topology and the directory file from --config alone", async () => {
    // bob is listed in us-east by the example's [directory] file; unlisted, he would be placed at home.
    const run = await geoproxy([
      "explain",
      "--config",
      "examples/geoproxy.toml",
      "SELECT * FROM users WHERE tenant_id = 'bob'",
    ]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/one region: us-east/);
  });

  it("reads geoproxy.toml in the current folder when no --config is given, and says so when there is none", async () => {
    const found = await geoproxy(["explain", "SELECT * FROM users WHERE tenant_id = 'chandra'"], examples);
    expect(found.code).toBe(0);
    expect(found.stdout).toMatch(/one region: ap-south/);
    const empty = mkdtempSync(join(tmpdir(), "geoproxy-cli-"));
    const missing = await geoproxy(["explain", "SELECT 1"], empty);
    expect(missing.code).toBe(64);
    expect(missing.stderr).toContain("explain needs --config <file>: there is no geoproxy.toml in");
  });

  it("reports a missing directory file as a configuration error naming the file, the field and the fix, from explain and serve", async () => {
    const folder = mkdtempSync(join(tmpdir(), "geoproxy-cli-"));
    const config = join(folder, "geoproxy.toml");
    writeFileSync(
      config,
      readFileSync(join(examples, "geoproxy.toml"), "utf8").replace('file = "keys.tsv"', 'file = "gone.tsv"'),
    );
    // explain reads it, and so does serve before it reaches any region.
    for (const args of [
      ["explain", "--config", config, "SELECT 1"],
      ["serve", "--config", config],
    ]) {
      const run = await geoproxy(args);
      expect(run.code, args[0]).toBe(78);
      const [line, ...rest] = run.stderr.trim().split("\n");
      expect(rest).toEqual([]);
      expect(line).toContain(`geoproxy: configuration error: ${config}:`);
      expect(line).toContain("directory.file");
      expect(line).toContain(join(folder, "gone.tsv"));
      expect(line).not.toContain("ENOENT");
    }
  });
});

describe("the geoproxy bin at the checkout root", () => {
  it("is linked by a root devDependency on the package, to a file that exists before the build", () => {
    const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
      devDependencies: Record<string, string>;
    };
    expect(manifest.devDependencies["@geo/proxy"]).toBe("workspace:*");
    const own = JSON.parse(readFileSync(join(root, "apps", "proxy", "package.json"), "utf8")) as {
      bin: Record<string, string>;
    };
    expect(join(root, "apps", "proxy", own.bin.geoproxy!)).toBe(bin);
  });

  // pnpm links it at install time: a node_modules installed before the link existed lacks it,
  // and `pnpm install` at the root fixes that.
  const linked = join(root, "node_modules", ".bin", "geoproxy");
  it("is what pnpm exec geoproxy runs from the root", async () => {
    expect(existsSync(linked), `${linked} is missing: run pnpm install at the root`).toBe(true);
    const child = spawn(linked, ["--help"], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    child.stdout.on("data", (data: Buffer) => {
      stdout += data.toString();
    });
    const code = await new Promise((resolve) => child.on("close", resolve));
    expect(code).toBe(0);
    expect(stdout).toMatch(/^usage: geoproxy <command>/);
  });
});
