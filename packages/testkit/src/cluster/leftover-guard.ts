import { spawn } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";

/** A running server this process is responsible for removing. */
export interface GuardedServer {
  rootDir: string;
  dataDir: string;
}

const live = new Map<GuardedServer, { watchdogPid: number | undefined }>();
let handlersInstalled = false;

function postmasterPid(dataDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(dataDir, "postmaster.pid"), "utf8").split("\n", 1)[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** Synchronous, because it runs inside process 'exit' where no more I/O callbacks fire. */
function destroySync(server: GuardedServer): void {
  const pid = postmasterPid(server.dataDir);
  if (pid !== undefined && isAlive(pid)) {
    // SIGQUIT is PostgreSQL's immediate shutdown: children exit at once, no checkpoint.
    try {
      process.kill(pid, "SIGQUIT");
    } catch {}
    for (let waited = 0; waited < 3000 && isAlive(pid); waited += 20) Atomics.wait(sleeper, 0, 0, 20);
    if (isAlive(pid)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {}
    }
  }
  rmSync(server.rootDir, { recursive: true, force: true, maxRetries: 3 });
}

function destroyAllSync(): void {
  for (const [server, { watchdogPid }] of live) {
    destroySync(server);
    if (watchdogPid !== undefined) {
      try {
        process.kill(watchdogPid, "SIGTERM");
      } catch {}
    }
  }
  live.clear();
}

const relayedSignals = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

function onSignal(signal: NodeJS.Signals): void {
  destroyAllSync();
  // Only re-raise when nobody else handles the signal; our listener alone must not change how the process ends.
  if (process.listenerCount(signal) === 1) {
    for (const name of relayedSignals) process.removeListener(name, onSignal);
    process.kill(process.pid, signal);
  }
}

function installHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on("exit", destroyAllSync);
  for (const name of relayedSignals) process.on(name, onSignal);
}

/**
 * A detached shell that outlives us: if this process dies without running its exit hooks
 * (SIGKILL, a crashed test worker), it stops the postmaster and removes the folder.
 */
function spawnWatchdog(server: GuardedServer): number | undefined {
  const script = [
    'while kill -0 "$1" 2>/dev/null; do sleep 1; done',
    'pid=$(head -n 1 "$2/postmaster.pid" 2>/dev/null)',
    'if [ -n "$pid" ]; then kill -QUIT "$pid" 2>/dev/null; sleep 2; kill -KILL "$pid" 2>/dev/null; fi',
    'rm -rf "$3"',
  ].join("\n");
  try {
    const child = spawn(
      "sh",
      ["-c", script, "geo-pg-watchdog", String(process.pid), server.dataDir, server.rootDir],
      {
        detached: true,
        stdio: "ignore",
      },
    );
    child.on("error", () => {});
    child.unref();
    return child.pid;
  } catch {
    return undefined;
  }
}

export function guard(server: GuardedServer): void {
  installHandlers();
  live.set(server, { watchdogPid: spawnWatchdog(server) });
}

/** Called once the server was stopped and removed the ordinary way. */
export function release(server: GuardedServer): void {
  const entry = live.get(server);
  live.delete(server);
  if (entry?.watchdogPid !== undefined) {
    try {
      process.kill(entry.watchdogPid, "SIGTERM");
    } catch {}
  }
}

export { destroySync };
