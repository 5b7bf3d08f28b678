import { randomBytes } from "node:crypto";
import { link, readFile, rename, unlink, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { decisionLogLocked } from "./errors.js";
import { livenessOf, ownLife } from "./process-identity.js";

/** Who holds a decision log, as its `<path>.lock` file says. */
export interface LockOwner {
  readonly pid: number;
  /** Start identity of that pid's process (see process-identity.ts); absent in old lock files. */
  readonly start?: string;
  readonly host?: string;
  /** Random per open: tells this life's lock from one a previous life with the same pid left. */
  readonly token?: string;
}

/**
 * Why a lock found on open was taken over. "previous-life": it names this process's own pid under
 * another token, which only an earlier process with the same pid can have written (a restarted
 * container's pid 1). "exited": its process no longer runs, or its pid now belongs to a process
 * started at another time. "unreadable": empty or damaged, which a live owner's lock never is (it
 * appears complete in one step), so it is a crash's leftover.
 */
export const STALE_LOCK_REASONS = ["previous-life", "exited", "unreadable"] as const;
export type StaleLockReason = (typeof STALE_LOCK_REASONS)[number];

export interface StaleLock {
  readonly reason: StaleLockReason;
  readonly owner: LockOwner | undefined;
}

export interface DecisionLogLock {
  readonly lockPath: string;
  /** The lock this one replaced, when a crashed owner had left one. */
  readonly tookOver: StaleLock | undefined;
  /** Removes the lock file if it is still this lock's. */
  release(): Promise<void>;
}

/**
 * Tokens of the locks this process holds, shared by every copy of this module in the process: a lock
 * naming our pid under one of these is live (a second open here), under any other token it is stale.
 */
const held = processWide("geo.txn.decision-log-locks", () => new Set<string>());

/** Turns of the take-over loop before giving up on a lock file other processes keep changing. */
const ATTEMPTS = 5;

/**
 * Takes `<logPath>.lock` for this process, or throws 55006 naming the live owner. The lock is written
 * whole into a private file and hard-linked into place, so it appears complete or not at all; a stale
 * one is replaced by an atomic rename, after checking it still holds what was judged stale.
 */
export async function takeDecisionLogLock(logPath: string): Promise<DecisionLogLock> {
  const lockPath = `${logPath}.lock`;
  const life = await ownLife();
  const token = randomBytes(16).toString("hex");
  const mine: LockOwner = {
    pid: life.pid,
    ...(life.start === undefined ? {} : { start: life.start }),
    host: hostname(),
    token,
  };
  const text = `${JSON.stringify({ v: 2, ...mine })}\n`;
  const draft = `${lockPath}.${token}`;
  let lastOwner: LockOwner = mine;
  try {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      await writeFile(draft, text, { flag: "wx" }).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== "EEXIST") throw error;
      });
      if (await placeNew(draft, lockPath, text)) return granted(lockPath, text, token, undefined);
      const found = await readLock(lockPath);
      if (found === undefined) continue; // released meanwhile: try to create it again
      const reason = await stalenessOf(found.owner);
      if (reason === undefined) throw decisionLogLocked(logPath, found.owner!);
      if (found.owner !== undefined) lastOwner = found.owner;
      // Another process may have replaced the stale lock since it was read: then judge again.
      if ((await readText(lockPath)) !== found.text) continue;
      await rename(draft, lockPath);
      if ((await readText(lockPath)) === text)
        return granted(lockPath, text, token, { reason, owner: found.owner });
    }
  } finally {
    await unlink(draft).catch(() => {});
  }
  throw decisionLogLocked(logPath, lastOwner);
}

/** Links the complete draft into place; false when a lock is there already. */
async function placeNew(draft: string, lockPath: string, text: string): Promise<boolean> {
  try {
    await link(draft, lockPath);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return false;
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP" && code !== "ENOSYS") throw error;
  }
  // A file system without hard links: exclusive create, then write. A reader can meet the file
  // empty for that instant, which is why hard links come first.
  try {
    await writeFile(lockPath, text, { flag: "wx" });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
}

function granted(
  lockPath: string,
  text: string,
  token: string,
  tookOver: StaleLock | undefined,
): DecisionLogLock {
  held.add(token);
  let released = false;
  return {
    lockPath,
    tookOver,
    async release() {
      if (released) return;
      released = true;
      held.delete(token);
      // Never remove a lock another process has taken over meanwhile.
      if ((await readText(lockPath)) === text) await unlink(lockPath).catch(() => {});
    },
  };
}

/** Undefined while the owner lives; otherwise why its lock is stale. */
async function stalenessOf(owner: LockOwner | undefined): Promise<StaleLockReason | undefined> {
  if (owner === undefined) return "unreadable";
  if (owner.token !== undefined && held.has(owner.token)) return undefined;
  if (owner.pid === process.pid) return "previous-life";
  return (await livenessOf({ pid: owner.pid, start: owner.start })) === "dead" ? "exited" : undefined;
}

async function readLock(
  lockPath: string,
): Promise<{ text: string; owner: LockOwner | undefined } | undefined> {
  const text = await readText(lockPath);
  return text === undefined ? undefined : { text, owner: parseLock(text) };
}

async function readText(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** The JSON line this module writes, or the bare pid earlier versions wrote; undefined if neither. */
export function parseLock(text: string): LockOwner | undefined {
  const trimmed = text.trim();
  if (/^[1-9]\d{0,9}$/.test(trimmed)) return { pid: Number(trimmed) };
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const { pid, start, host, token } = value as Record<string, unknown>;
  if (typeof pid !== "number" || !Number.isSafeInteger(pid) || pid <= 0) return undefined;
  if (typeof token !== "string" || token.length === 0) return undefined;
  return {
    pid,
    token,
    ...(typeof start === "string" ? { start } : {}),
    ...(typeof host === "string" ? { host } : {}),
  };
}

/** One value per process (per JavaScript realm), however many copies of this module are loaded. */
function processWide<T>(name: string, create: () => T): T {
  const slots = globalThis as Record<symbol, unknown>;
  const key = Symbol.for(name);
  if (!(key in slots)) slots[key] = create();
  return slots[key] as T;
}
