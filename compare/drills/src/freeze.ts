import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** The postmaster's pid, from the first line of `postmaster.pid` in the data directory. */
export function postmasterPid(dataDir: string): number {
  const pid = Number(readFileSync(join(dataDir, "postmaster.pid"), "utf8").split("\n", 1)[0]);
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`no postmaster pid in ${dataDir}`);
  return pid;
}

/** The pids whose parent is `parent` (a postmaster's backends and auxiliary processes), from /proc. */
export function childPids(parent: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // Field 4 is the parent pid; the command name (field 2) is in parentheses and may hold spaces.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[1]) === parent) out.push(Number(entry));
    } catch {
      // The process ended while the list was read.
    }
  }
  return out;
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Gone already: nothing left to stop or wake.
  }
}

/**
 * Freezes a whole PostgreSQL server with SIGSTOP (postmaster, backends, WAL writer...): its
 * sockets stay open and accept nothing, as a hung machine's would. `thaw` wakes every process
 * it stopped.
 */
export function freezeServer(dataDir: string): { thaw(): void } {
  const postmaster = postmasterPid(dataDir);
  signal(postmaster, "SIGSTOP");
  const children = childPids(postmaster);
  for (const pid of children) signal(pid, "SIGSTOP");
  return {
    thaw() {
      for (const pid of children) signal(pid, "SIGCONT");
      signal(postmaster, "SIGCONT");
    },
  };
}

/** Freezes one backend process, as a server stuck on that one session; `thaw` wakes it. */
export function freezeBackend(pid: number): { thaw(): void } {
  signal(pid, "SIGSTOP");
  return { thaw: () => signal(pid, "SIGCONT") };
}
