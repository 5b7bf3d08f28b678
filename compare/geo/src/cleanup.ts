import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";

type Undo = () => Promise<unknown> | unknown;

interface Entry {
  undo: Undo;
  /** Synchronous part run the moment a signal arrives: a parent may follow Ctrl-C with SIGKILL. */
  now?: () => void;
}

const entries: Entry[] = [];
let running: Promise<void> | undefined;

/** Registers something to undo at the end of the run (newest first); returns the deregistration. */
export function atCleanup(undo: Undo, now?: () => void): () => void {
  const entry: Entry = now === undefined ? { undo } : { undo, now };
  entries.push(entry);
  return () => {
    const index = entries.indexOf(entry);
    if (index !== -1) entries.splice(index, 1);
  };
}

/** Undoes everything registered, once, reporting (not throwing) failures. */
export function cleanup(): Promise<void> {
  running ??= (async () => {
    while (entries.length > 0) {
      const entry = entries.pop()!;
      try {
        await entry.undo();
      } catch (error) {
        console.error(`cleanup: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  })();
  return running;
}

export function isCleaningUp(): boolean {
  return running !== undefined;
}

/**
 * On SIGINT, SIGTERM or SIGHUP: signal our children at once, then undo everything and exit.
 * Listeners stay installed, so the PostgreSQL launcher's own signal hook (which re-raises only
 * when it is the last listener) cannot end the process before we have cleaned up.
 */
export function cleanUpOnSignals(): void {
  let exiting = false;
  const stop = (signal: NodeJS.Signals, code: number) => {
    if (exiting) return;
    exiting = true;
    console.error(`\n${signal}: stopping every process and server this run started`);
    for (const entry of [...entries].reverse()) {
      try {
        entry.now?.();
      } catch {}
    }
    void cleanup().finally(() => process.exit(code));
  };
  process.on("SIGINT", () => stop("SIGINT", 130));
  process.on("SIGTERM", () => stop("SIGTERM", 143));
  process.on("SIGHUP", () => stop("SIGHUP", 129));
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {}
}

/** A child process stopped by its own pid at cleanup (SIGTERM, then SIGKILL after 5 s). */
export interface Child {
  readonly pid: number;
  readonly logFile: string;
  readonly exited: Promise<number | string>;
  hasExited(): boolean;
  logTail(lines?: number): string;
  stop(): Promise<void>;
}

export function startChild(name: string, command: string, args: readonly string[], logFile: string): Child {
  const log = openSync(logFile, "a");
  const child: ChildProcess = spawn(command, args, { stdio: ["ignore", log, log] });
  closeSync(log);
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${name}: could not start ${command}`);
  let done = false;
  const exited = new Promise<number | string>((resolve) =>
    child.once("exit", (code, sig) => {
      done = true;
      resolve(code ?? sig ?? "unknown");
    }),
  );
  const stop = async () => {
    if (done) return;
    signal(pid, "SIGTERM");
    const timer = setTimeout(() => signal(pid, "SIGKILL"), 5_000);
    await exited;
    clearTimeout(timer);
  };
  const forget = atCleanup(stop, () => signal(pid, "SIGTERM"));
  // Leaving without cleanup (an uncaught error) must not leave the child behind either.
  process.once("exit", () => {
    if (!done) signal(pid, "SIGKILL");
  });
  void exited.then(forget);
  return {
    pid,
    logFile,
    exited,
    hasExited: () => done,
    logTail: (lines = 20) => {
      try {
        return readFileSync(logFile, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
      } catch {
        return "(no log)";
      }
    },
    stop,
  };
}
