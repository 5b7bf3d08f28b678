import { readFile } from "node:fs/promises";

/**
 * What tells one life of a process from another that got the same pid: on Linux the boot id and the
 * process's start time in clock ticks since boot (field 22 of `/proc/<pid>/stat`). A pid is reused
 * after its process exits, and after a reboot or in a fresh container the same pid comes back at
 * once (a proxy running as pid 1); the pair (boot, start) does not.
 */
export interface ProcessLife {
  readonly pid: number;
  /** `<boot id>:<start ticks>`, or undefined where the system does not say (no /proc). */
  readonly start: string | undefined;
}

export type Liveness = "alive" | "dead";

/** This process's own life. */
export async function ownLife(): Promise<ProcessLife> {
  return { pid: process.pid, start: await startOf(process.pid) };
}

/**
 * Whether the process that recorded `life` still runs. With /proc: gone, a zombie, or the pid now
 * held by a process started at another time (or in another boot) is dead. Where /proc does not show
 * the pid only the pid can be asked, and a reused pid looks alive: the safe side, as it refuses
 * rather than shares.
 */
export async function livenessOf(life: ProcessLife): Promise<Liveness> {
  const stat = await readStat(life.pid);
  // No /proc entry is also what a /proc mounted with hidepid shows for another user's process: only
  // the signal can tell that one (EPERM) from a pid nobody holds (ESRCH).
  if (stat === "no-proc" || stat === undefined) return signalReaches(life.pid) ? "alive" : "dead";
  if (stat.state === "Z" || stat.state === "X") return "dead";
  if (life.start !== undefined && life.start !== `${await bootId()}:${stat.startTicks}`) return "dead";
  return "alive";
}

async function startOf(pid: number): Promise<string | undefined> {
  const stat = await readStat(pid);
  if (stat === "no-proc" || stat === undefined) return undefined;
  return `${await bootId()}:${stat.startTicks}`;
}

let bootIdRead: Promise<string> | undefined;

/** Changes at every boot, so start ticks of an earlier boot never match a process of this one. */
function bootId(): Promise<string> {
  bootIdRead ??= readFile("/proc/sys/kernel/random/boot_id", "utf8").then(
    (text) => text.trim(),
    () => "",
  );
  return bootIdRead;
}

interface Stat {
  state: string;
  startTicks: string;
}

/** `/proc/<pid>/stat`; undefined when the pid does not exist, "no-proc" when the system has no /proc. */
async function readStat(pid: number): Promise<Stat | undefined | "no-proc"> {
  let text: string;
  try {
    text = await readFile(`/proc/${pid}/stat`, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") return "no-proc";
    return (await hasProc()) ? undefined : "no-proc";
  }
  // Field 2 is the command name in parentheses and may itself hold spaces and ")": fields 3 onwards
  // start after the last ")".
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const state = fields[0];
  const startTicks = fields[19];
  if (state === undefined || startTicks === undefined || !/^\d+$/.test(startTicks)) return "no-proc";
  return { state, startTicks };
}

let procPresent: Promise<boolean> | undefined;

function hasProc(): Promise<boolean> {
  procPresent ??= readFile("/proc/self/stat", "utf8").then(
    () => true,
    () => false,
  );
  return procPresent;
}

function signalReaches(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
