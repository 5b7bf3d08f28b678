import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { KEYS, regionsToml } from "./fake-regions.js";

/** The built command line: a proxy in a process of its own, whose descriptors and exit can be watched. */
const CLI = fileURLToPath(new URL("../../dist/cli.js", import.meta.url));

export interface ProxyChild {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly port: number;
  readonly exited: Promise<{ code: number | null; signal: string | null }>;
  /** Everything it printed so far, both streams. */
  output(): string;
  /** Descriptors it has open now (sockets, files), from /proc. */
  descriptors(): number;
  /** Its resident memory now, in MiB. */
  residentMiB(): number;
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
  const child = spawn(
    process.execPath,
    [
      CLI,
      "serve",
      "--config",
      config,
      "--directory",
      directory,
      "--log-level",
      "info",
      ...(options.shutdownTimeoutMs === undefined
        ? []
        : ["--shutdown-timeout-ms", String(options.shutdownTimeoutMs)]),
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  child.stdout!.on("data", (data: Buffer) => {
    output += data.toString();
  });
  child.stderr!.on("data", (data: Buffer) => {
    output += data.toString();
  });
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setInterval(() => {
      const match = /"port":(\d+)[^\n]*"msg":"geoproxy listening"/.exec(output);
      if (match !== null) {
        clearInterval(timer);
        resolve(Number(match[1]));
      }
    }, 20);
    void exited.then(({ code }) => {
      clearInterval(timer);
      reject(new Error(`geoproxy exited with ${code}: ${output}`));
    });
  });
  const pid = child.pid!;
  return {
    child,
    pid,
    port,
    exited,
    output: () => output,
    descriptors: () => readdirSync(`/proc/${pid}/fd`).length,
    residentMiB: () =>
      Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024,
  };
}
