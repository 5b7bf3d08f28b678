import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

/** The built command line: these proxies are real processes, so one can be killed with SIGKILL. */
const CLI = fileURLToPath(new URL("../../dist/cli.js", import.meta.url));

type Outcome =
  | { readonly listening: number }
  | { readonly exited: number | null; readonly signal: string | null };

/** `geoproxy serve` in a process of its own, with the given command-line options after `serve`. */
export class ProxyChild {
  readonly child: ChildProcess;
  stderr = "";
  stdout = "";
  private readonly outcome: Promise<Outcome>;
  readonly exited: Promise<void>;

  constructor(args: readonly string[]) {
    this.child = spawn(process.execPath, [CLI, "serve", ...args], { stdio: ["ignore", "pipe", "pipe"] });
    this.exited = new Promise((resolve) => this.child.once("exit", () => resolve()));
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
  async port(): Promise<number> {
    const outcome = await this.outcome;
    if ("listening" in outcome) return outcome.listening;
    throw new Error(`geoproxy exited with ${outcome.exited}: ${this.stderr}`);
  }

  /** The exit status, when it exits at start; rejects if it starts listening instead. */
  async exitCode(): Promise<number | null> {
    const outcome = await this.outcome;
    if ("exited" in outcome) return outcome.exited;
    throw new Error(`geoproxy started on port ${outcome.listening}`);
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
