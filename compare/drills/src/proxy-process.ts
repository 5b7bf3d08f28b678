import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, type WriteStream } from "node:fs";
import { connect } from "node:net";
import { fileURLToPath } from "node:url";

/** The built geoproxy command line (`pnpm --filter @geo/proxy run build` makes it). */
export const PROXY_CLI = fileURLToPath(new URL("../../../apps/proxy/dist/cli.js", import.meta.url));

/**
 * geoproxy as a child process, so the drill can kill it with SIGKILL (no shutdown, no flush: the
 * decision log and the prepared transactions are all a restart has) and start it again.
 */
export class ProxyProcess {
  private child: ChildProcess | null = null;
  private readonly log: WriteStream;
  starts = 0;
  kills = 0;

  constructor(
    private readonly options: {
      readonly configPath: string;
      /** The directory TSV; absent when the directory lives in PostgreSQL (`[directory_store]`). */
      readonly directoryPath?: string;
      readonly port: number;
      readonly logPath: string;
    },
  ) {
    this.log = createWriteStream(options.logPath, { flags: "a" });
  }

  /** The running process's pid, or undefined. */
  get pid(): number | undefined {
    return this.running ? this.child?.pid : undefined;
  }

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Starts it and waits until it accepts connections; retries while it exits at start (a region is down). */
  async start(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const child = spawn(
        process.execPath,
        [
          PROXY_CLI,
          "serve",
          "--config",
          this.options.configPath,
          ...(this.options.directoryPath === undefined ? [] : ["--directory", this.options.directoryPath]),
          "--log-level",
          "warn",
        ],
        { stdio: ["ignore", "pipe", "pipe"] },
      );
      child.stdout?.pipe(this.log, { end: false });
      child.stderr?.pipe(this.log, { end: false });
      this.child = child;
      this.starts++;
      while (Date.now() < deadline && this.running) {
        if (await portOpen(this.options.port)) return;
        await sleep(50);
      }
      await sleep(300);
    }
    throw new Error(`geoproxy did not start within ${timeoutMs} ms (see ${this.options.logPath})`);
  }

  /** SIGKILL: the process ends mid-whatever, as in a power cut of the proxy's machine. */
  async kill(): Promise<void> {
    const child = this.child;
    if (child === null || !this.running) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGKILL");
    this.kills++;
    await exited;
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (child === null || !this.running) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
    await exited;
    clearTimeout(timer);
    this.log.end();
  }
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
