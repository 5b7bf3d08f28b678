import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { KEYS, regionsToml } from "./fake-regions.js";

/**
 * The built command line: these proxies are real processes, so one can be killed with SIGKILL and
 * its descriptors, memory and exit watched.
 */
const CLI = fileURLToPath(new URL("../../dist/cli.js", import.meta.url));

type Outcome =
  | { readonly listening: number }
  | { readonly exited: number | null; readonly signal: string | null };

/** `geoproxy serve` in a process of its own, with the given command-line options after `serve`. */
export class ProxyChild {
  readonly child: ChildProcess;
  readonly pid: number;
  stderr = "";
  stdout = "";
  /** The port it listens on, once `listening()` resolved; 0 before. */
  port = 0;
  readonly exited: Promise<{ code: number | null; signal: string | null }>;
  private readonly outcome: Promise<Outcome>;

  constructor(args: readonly string[]) {
    this.child = spawn(process.execPath, [CLI, "serve", ...args], { stdio: ["ignore", "pipe", "pipe"] });
    this.pid = this.child.pid!;
    this.exited = new Promise((resolve) =>
      this.child.once("exit", (code, signal) => resolve({ code, signal })),
    );
    this.outcome = new Promise<Outcome>((resolve) => {
      this.child.stdout!.on("data", (data: Buffer) => {
        this.stdout += data.toString();
        const port = /"port":(\d+)[^\n]*"msg":"geoproxy listening"/.exec(this.stdout)?.[1];
        if (port !== undefined) resolve({ listening: Number(port) });
      });
      this.child.stderr!.on("data", (data: Buffer) => {
        this.stderr += data.toString();
      });
      this.child.once("exit", (code, signal) => resolve({ exited: code, signal }));
    });
  }

  /** The port once it listens; rejects, with what it printed, if it exits first. */
  async listening(): Promise<number> {
    const outcome = await this.outcome;
    if (!("listening" in outcome))
      throw new Error(`geoproxy exited with ${outcome.exited}: ${this.output()}`);
    this.port = outcome.listening;
    return this.port;
  }

  /** The exit status, when it exits at start; rejects if it starts listening instead. */
  async exitCode(): Promise<number | null> {
    const outcome = await this.outcome;
    if ("exited" in outcome) return outcome.exited;
    throw new Error(`geoproxy started on port ${outcome.listening}`);
  }

  /** Everything it printed so far: standard output, then standard error. */
  output(): string {
    return this.stdout + this.stderr;
  }

  /** Descriptors it has open now (sockets, files), from /proc. */
  descriptors(): number {
    return readdirSync(`/proc/${this.pid}/fd`).length;
  }

  /** Its resident memory now, in MiB. */
  residentMiB(): number {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${this.pid}/status`, "utf8"))?.[1] ?? 0) / 1024;
  }

  async kill(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill("SIGKILL");
    await this.exited;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill("SIGTERM");
    await this.exited;
  }
}

export interface ProxyChildOptions {
  /** Ports of the three regions' servers (eu-west, us-east, ap-south). */
  readonly ports: readonly number[];
  /** A folder of the test's own: the configuration, the directory and the decision log go there. */
  readonly folder: string;
  /** `[server] node`: every proxy over the same servers needs its own. */
  readonly node: string;
  /** More lines for `[server]`. */
  readonly server?: string;
  readonly shutdownTimeoutMs?: number;
}

/** `geoproxy serve` over the three servers; resolves once it listens, rejects if it exits first. */
export async function launchProxy(options: ProxyChildOptions): Promise<ProxyChild> {
  const directory = join(options.folder, "keys.tsv");
  await writeFile(
    directory,
    Object.entries(KEYS)
      .map(([key, region]) => `${key}\t${region}\n`)
      .join(""),
  );
  const config = join(options.folder, "geoproxy.toml");
  await writeFile(
    config,
    regionsToml(options.ports, `\n[txn]\ndata_dir = "${join(options.folder, "txn")}"\n`).replace(
      "[server]\n",
      `[server]\nnode = "${options.node}"\n${options.server ?? ""}`,
    ),
  );
  const proxy = new ProxyChild([
    "--config",
    config,
    "--directory",
    directory,
    "--log-level",
    "info",
    ...(options.shutdownTimeoutMs === undefined
      ? []
      : ["--shutdown-timeout-ms", String(options.shutdownTimeoutMs)]),
  ]);
  await proxy.listening();
  return proxy;
}
