import { type ChildProcess, type SpawnOptions, spawn } from "node:child_process";
import { closeSync, openSync, readFileSync, rmSync } from "node:fs";
import { rm } from "node:fs/promises";

/** A long-running process this kit started, stopped only by its own pid. */
export interface ManagedProcess {
  name: string;
  pid: number;
  /** Where its stdout and stderr go, shown when it fails. */
  logFile: string;
  /** Resolves with the exit code (or the signal's name) once the process has exited. */
  exited: Promise<number | string>;
  hasExited(): boolean;
  stop(): Promise<void>;
}

type Cleanup = () => Promise<void> | void;

interface Registration {
  cleanup: Cleanup;
  /** Synchronous part run the moment a signal arrives, before anything can kill us harder. */
  urgent: (() => void) | undefined;
}

const registrations: Registration[] = [];
let tearingDown: Promise<void> | undefined;

/**
 * Registers work to undo at teardown; undone in reverse order of registration. `urgent` is the
 * synchronous version run first on a signal: a package runner or a parent process may follow
 * Ctrl-C with SIGKILL within milliseconds, so signalling our children and removing our folders
 * cannot wait for anything asynchronous. Returns a function that drops the registration.
 */
export function onTeardown(cleanup: Cleanup, urgent?: () => void): () => void {
  const registration: Registration = { cleanup, urgent };
  registrations.push(registration);
  return () => {
    const index = registrations.lastIndexOf(registration);
    if (index !== -1) registrations.splice(index, 1);
  };
}

/** Removes a folder at teardown, at once on a signal. */
export function removeAtTeardown(dir: string): void {
  onTeardown(
    () => rm(dir, { recursive: true, force: true }),
    () => rmSync(dir, { recursive: true, force: true }),
  );
}

function runUrgent(): void {
  for (const { urgent } of [...registrations].reverse()) {
    try {
      urgent?.();
    } catch {
      // Best effort: the asynchronous pass repeats the work and reports failures.
    }
  }
}

export class InterruptedError extends Error {
  override readonly name = "InterruptedError";
  constructor() {
    super("interrupted");
  }
}

/** Throws InterruptedError once teardown has begun: a session checks between runs, so it stops starting new ones. */
export function stopIfTearingDown(): void {
  if (tearingDown !== undefined) throw new InterruptedError();
}

/** Runs every registered cleanup once, newest first, reporting (not throwing) their failures. */
export function teardown(): Promise<void> {
  tearingDown ??= (async () => {
    while (registrations.length > 0) {
      const { cleanup } = registrations.pop()!;
      try {
        await cleanup();
      } catch (error) {
        console.error(`cleanup failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  })();
  return tearingDown;
}

/**
 * Stops everything on Ctrl-C, SIGTERM or an uncaught failure, then exits. The listeners stay
 * installed (`on`, not `once`): other libraries' signal hooks, such as the testkit's, re-raise the
 * signal when they believe they are the last listener, which would kill us before we clean up.
 */
export function installSignalHandlers(): void {
  let exiting = false;
  const stopAndExit = (code: number) => {
    if (exiting) return;
    exiting = true;
    runUrgent();
    void teardown().finally(() => process.exit(code));
  };
  process.on("SIGINT", () => {
    console.error("\ninterrupted: stopping every process this run started");
    stopAndExit(130);
  });
  process.on("SIGTERM", () => stopAndExit(143));
  process.on("SIGHUP", () => stopAndExit(129));
  process.on("uncaughtException", (error) => {
    console.error(error);
    stopAndExit(1);
  });
}

function waitForExit(child: ChildProcess): Promise<number | string> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else if (child.signalCode !== null) resolve(child.signalCode);
    else child.once("exit", (code, signal) => resolve(code ?? signal ?? "unknown"));
  });
}

function signalPid(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
}

/** Sends SIGTERM to one pid, then SIGKILL if it has not exited within `graceMs`. */
async function stopPid(pid: number, exited: Promise<unknown>, graceMs = 5_000): Promise<void> {
  const signal = (name: NodeJS.Signals) => signalPid(pid, name);
  signal("SIGTERM");
  let timer: NodeJS.Timeout | undefined;
  const timedOut = await Promise.race([
    exited.then(() => false),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), graceMs);
    }),
  ]);
  clearTimeout(timer);
  if (timedOut) {
    signal("SIGKILL");
    await exited;
  }
}

export interface StartOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  uid?: number;
  gid?: number;
}

/** Starts a daemon with its output in `logFile`, stopped at teardown if still running. */
export function startProcess(
  name: string,
  command: string,
  args: readonly string[],
  logFile: string,
  options: StartOptions = {},
): ManagedProcess {
  const logFd = openSync(logFile, "a");
  const spawnOptions: SpawnOptions = { stdio: ["ignore", logFd, logFd], ...options };
  const child = spawn(command, args, spawnOptions);
  closeSync(logFd);
  if (child.pid === undefined) throw new Error(`${name}: could not start ${command}`);
  const pid = child.pid;
  const exited = waitForExit(child);
  let done = false;
  void exited.then(() => {
    done = true;
  });
  const managed: ManagedProcess = {
    name,
    pid,
    logFile,
    exited,
    hasExited: () => done,
    stop: () => (done ? Promise.resolve() : stopPid(pid, exited)),
  };
  onTeardown(
    () => managed.stop(),
    () => signalPid(pid, "SIGTERM"),
  );
  return managed;
}

export interface RunResult {
  code: number | string;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command to completion, capturing its output. While it runs its pid is registered, so
 * an interrupted session stops it too (a pgbench mid-run, for instance).
 */
export function runToCompletion(
  command: string,
  args: readonly string[],
  options: StartOptions = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], ...options });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout?.on("data", (chunk: Buffer) => stdout.push(chunk));
    child.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk));
    child.once("error", reject);
    const exited = waitForExit(child);
    const pid = child.pid;
    const unregister =
      pid === undefined
        ? () => {}
        : onTeardown(
            () => stopPid(pid, exited),
            () => signalPid(pid, "SIGTERM"),
          );
    child.once("close", async () => {
      unregister();
      resolve({
        code: await exited,
        stdout: Buffer.concat(stdout).toString("utf8"),
        stderr: Buffer.concat(stderr).toString("utf8"),
      });
    });
  });
}

/** The last lines of a process's log, for error messages. */
export function logTail(logFile: string, lines = 20): string {
  try {
    return readFileSync(logFile, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}
