import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/** utime + stime of one process and its parent pid, from the text of /proc/<pid>/stat. */
export function parseProcStat(text: string): { ppid: number; ticks: number } {
  // The command name (field 2) is in parentheses and may itself hold spaces or ')', so fields are
  // counted from the last ')'. After it: state(3) ppid(4) ... utime(14) stime(15).
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) };
}

function readStat(pid: number): { ppid: number; ticks: number } | undefined {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return undefined;
  }
}

let clockTicksPerSecond: number | undefined;

function ticksPerSecond(): number {
  clockTicksPerSecond ??= Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  return clockTicksPerSecond;
}

/**
 * CPU seconds (user + system, every thread) used so far by a process and all its live
 * descendants, so a proxy that spreads work over worker processes is charged for all of it.
 */
export function cpuSecondsOfTree(rootPid: number): number {
  const children = new Map<number, number[]>();
  const ticks = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const stat = readStat(pid);
    if (stat === undefined) continue;
    ticks.set(pid, stat.ticks);
    const siblings = children.get(stat.ppid);
    if (siblings === undefined) children.set(stat.ppid, [pid]);
    else siblings.push(pid);
  }
  let total = 0;
  const pending = [rootPid];
  while (pending.length > 0) {
    const pid = pending.pop()!;
    total += ticks.get(pid) ?? 0;
    pending.push(...(children.get(pid) ?? []));
  }
  return total / ticksPerSecond();
}
