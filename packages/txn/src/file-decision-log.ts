import { type FileHandle, open, readFile, rename } from "node:fs/promises";
import { dirname } from "node:path";
import { crc32 } from "./crc32.js";
import type { Decision, DecisionLog, DecisionRecord } from "./decision-log.js";
import { type DecisionLogLock, type StaleLock, takeDecisionLogLock } from "./decision-log-lock.js";
import { decisionLogClosed, decisionLogCorrupt } from "./errors.js";

export interface FileDecisionLogOptions {
  path: string;
  /** How long a completed abort is kept so a coordinator that wakes up late still reads it. Default 1 h. */
  abortRetentionMs?: number;
  /** Completed records that trigger a compaction. Default 1024. */
  compactAfter?: number;
  clock?: () => number;
}

interface Entry {
  record: DecisionRecord;
  /** Settles once the decide line is on disk (fdatasync returned). */
  durable: Promise<void>;
  flushed: boolean;
  completedAt: number | undefined;
}

type Line =
  | { v: 1; type: "decide"; gid: string; decision: Decision; participants: string[]; at: number }
  | { v: 1; type: "complete"; gid: string; at: number };

interface CompactRequest {
  kind: "compact";
  resolve: () => void;
  reject: (error: unknown) => void;
}

interface PendingWrite {
  kind: "write";
  text: string;
  sync: boolean;
  resolve: () => void;
  reject: (error: unknown) => void;
  onFlushed?: () => void;
}

const encoder = new TextEncoder();

/** `<crc32 of the JSON, 8 lowercase hex digits> <JSON>\n`: a torn line fails its checksum. */
export function encodeLine(line: Line): string {
  const json = JSON.stringify(line);
  return `${crc32(encoder.encode(json)).toString(16).padStart(8, "0")} ${json}\n`;
}

export function decodeLine(text: string): Line | undefined {
  if (text.length < 10 || text[8] !== " ") return undefined;
  const json = text.slice(9);
  if (
    Number.parseInt(text.slice(0, 8), 16) !== crc32(encoder.encode(json)) ||
    !/^[0-9a-f]{8}$/.test(text.slice(0, 8))
  )
    return undefined;
  try {
    const line = JSON.parse(json) as Line;
    return line.v === 1 && typeof line.gid === "string" ? line : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The decision log as a local append-only file, fsynced before a decision counts. Concurrent decisions
 * share one write and one fdatasync (group commit). One process owns a file at a time (a `.lock` file
 * naming it by pid, start identity and a random token; a lock whose owner no longer runs is taken over).
 */
export class FileDecisionLog implements DecisionLog {
  readonly path: string;
  /**
   * When this process took the file's lock (ms since the epoch). From then on no other process can write a decision to
   * it: an earlier owner has exited (its stale lock was taken over) or closed the log. A gid of this
   * log's coordinator issued before this instant and still undecided can therefore never be decided.
   */
  readonly ownedSince: number;
  /** The stale lock a crashed earlier owner left, when opening took one over. */
  readonly tookOver: StaleLock | undefined;
  private readonly lock: DecisionLogLock;
  private readonly entries = new Map<string, Entry>();
  private readonly queue: Array<PendingWrite | CompactRequest> = [];
  private readonly abortRetentionMs: number;
  private readonly compactAfter: number;
  private readonly clock: () => number;
  private handle: FileHandle;
  private size: number;
  private completedSinceCompaction = 0;
  private flushing = false;
  private broken: unknown;
  private closed = false;

  private constructor(
    options: FileDecisionLogOptions,
    lock: DecisionLogLock,
    ownedSince: number,
    handle: FileHandle,
    size: number,
  ) {
    this.path = options.path;
    this.lock = lock;
    this.ownedSince = ownedSince;
    this.tookOver = lock.tookOver;
    this.abortRetentionMs = options.abortRetentionMs ?? 3_600_000;
    this.compactAfter = options.compactAfter ?? 1024;
    this.clock = options.clock ?? Date.now;
    this.handle = handle;
    this.size = size;
  }

  /** Opens (creating if needed) and replays the file; a torn last line is cut off. */
  static async open(options: FileDecisionLogOptions): Promise<FileDecisionLog> {
    const lock = await takeDecisionLogLock(options.path);
    // Wall-clock milliseconds, as gids carry: not the test clock of `options.clock`.
    const ownedSince = Date.now();
    let handle: FileHandle | undefined;
    try {
      let bytes: Buffer;
      try {
        bytes = await readFile(options.path);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
        bytes = Buffer.alloc(0);
      }
      const { lines, goodLength } = parse(bytes, options.path);
      handle = await open(options.path, "a");
      if (goodLength < bytes.length) {
        await handle.truncate(goodLength);
        await handle.datasync();
      }
      if (bytes.length === 0) await syncDirectory(options.path);
      const log = new FileDecisionLog(options, lock, ownedSince, handle, goodLength);
      for (const line of lines) log.replay(line);
      return log;
    } catch (error) {
      // A log that did not open holds nothing: a later open, here or elsewhere, must not meet its lock.
      await handle?.close().catch(() => {});
      await lock.release();
      throw error;
    }
  }

  private replay(line: Line): void {
    switch (line.type) {
      case "decide":
        if (!this.entries.has(line.gid)) {
          this.entries.set(line.gid, {
            record: {
              gid: line.gid,
              decision: line.decision,
              participants: line.participants,
              decidedAt: line.at,
            },
            durable: Promise.resolve(),
            flushed: true,
            completedAt: undefined,
          });
        }
        return;
      case "complete": {
        const entry = this.entries.get(line.gid);
        if (entry !== undefined) entry.completedAt = line.at;
        return;
      }
      default:
        assertNever(line);
    }
  }

  async decide(record: DecisionRecord): Promise<DecisionRecord> {
    const existing = this.entries.get(record.gid);
    if (existing !== undefined) {
      await existing.durable;
      return existing.record;
    }
    const entry: Entry = { record, durable: Promise.resolve(), flushed: false, completedAt: undefined };
    entry.durable = this.append(
      encodeLine({
        v: 1,
        type: "decide",
        gid: record.gid,
        decision: record.decision,
        participants: [...record.participants],
        at: record.decidedAt,
      }),
      true,
      () => {
        entry.flushed = true;
      },
    );
    this.entries.set(record.gid, entry);
    try {
      await entry.durable;
    } catch (error) {
      // The failed batch was cut off the file (or the log refuses further writes), so no one may read
      // this decision as made.
      if (this.entries.get(record.gid) === entry) this.entries.delete(record.gid);
      throw error;
    }
    return record;
  }

  async complete(gid: string): Promise<void> {
    const entry = this.entries.get(gid);
    if (entry === undefined || entry.completedAt !== undefined) return;
    await entry.durable;
    entry.completedAt = this.clock();
    // No fsync: a lost completion only makes recovery look again and find nothing prepared.
    await this.append(encodeLine({ v: 1, type: "complete", gid, at: entry.completedAt }), false);
    this.completedSinceCompaction++;
    if (this.completedSinceCompaction >= this.compactAfter) void this.compact().catch(() => {});
  }

  async lookup(gid: string): Promise<DecisionRecord | undefined> {
    const entry = this.entries.get(gid);
    if (entry === undefined) return undefined;
    await entry.durable;
    return entry.record;
  }

  async pending(): Promise<DecisionRecord[]> {
    const out: DecisionRecord[] = [];
    for (const entry of this.entries.values())
      if (entry.flushed && entry.completedAt === undefined) out.push(entry.record);
    return out;
  }

  /** Rewrites the file with what is still needed, atomically (write, fsync, rename, fsync directory). */
  compact(): Promise<void> {
    if (this.closed) return Promise.reject(decisionLogClosed());
    return new Promise((resolve, reject) => {
      this.queue.push({ kind: "compact", resolve, reject });
      this.kick();
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    while (this.flushing || this.queue.length > 0) await new Promise((r) => setTimeout(r, 1));
    await this.handle.close();
    await this.lock.release();
  }

  /** Bytes in the file as this log wrote it. */
  get sizeInBytes(): number {
    return this.size;
  }

  private append(text: string, sync: boolean, onFlushed?: () => void): Promise<void> {
    if (this.closed) return Promise.reject(decisionLogClosed());
    if (this.broken !== undefined) return Promise.reject(this.broken);
    return new Promise((resolve, reject) => {
      this.queue.push({
        kind: "write",
        text,
        sync,
        resolve,
        reject,
        ...(onFlushed === undefined ? {} : { onFlushed }),
      });
      this.kick();
    });
  }

  private kick(): void {
    if (this.flushing) return;
    this.flushing = true;
    void this.flushLoop();
  }

  private async flushLoop(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const head = this.queue[0]!;
        if (head.kind === "compact") {
          this.queue.shift();
          try {
            await this.rewrite();
            head.resolve();
          } catch (error) {
            head.reject(error);
          }
          continue;
        }
        const batch: PendingWrite[] = [];
        for (let next = this.queue[0]; next?.kind === "write"; next = this.queue[0]) {
          batch.push(next);
          this.queue.shift();
        }
        await this.writeBatch(batch);
      }
    } finally {
      this.flushing = false;
    }
  }

  private async writeBatch(batch: PendingWrite[]): Promise<void> {
    if (this.broken !== undefined) {
      for (const write of batch) write.reject(this.broken);
      return;
    }
    const bytes = Buffer.from(batch.map((w) => w.text).join(""), "utf8");
    const before = this.size;
    try {
      let offset = 0;
      while (offset < bytes.length) offset += (await this.handle.write(bytes, offset)).bytesWritten;
      if (batch.some((w) => w.sync)) await this.handle.datasync();
      this.size += bytes.length;
    } catch (error) {
      try {
        await this.handle.truncate(before);
      } catch {
        // The file may now hold part of this batch: refuse every later write rather than append after it.
        this.broken = error;
      }
      for (const write of batch) write.reject(error);
      return;
    }
    for (const write of batch) {
      write.onFlushed?.();
      write.resolve();
    }
  }

  /** Completed commits go at once; completed aborts stay for their retention. */
  private droppable(entry: Entry, now: number): boolean {
    const done = entry.completedAt;
    return (
      entry.flushed &&
      done !== undefined &&
      (entry.record.decision === "commit" || now - done >= this.abortRetentionMs)
    );
  }

  private async rewrite(): Promise<void> {
    const now = this.clock();
    if (![...this.entries.values()].some((entry) => this.droppable(entry, now))) return;
    const keep: string[] = [];
    for (const [gid, entry] of this.entries) {
      if (!entry.flushed) continue;
      if (this.droppable(entry, now)) {
        this.entries.delete(gid);
        continue;
      }
      const done = entry.completedAt;
      const r = entry.record;
      keep.push(
        encodeLine({
          v: 1,
          type: "decide",
          gid,
          decision: r.decision,
          participants: [...r.participants],
          at: r.decidedAt,
        }),
      );
      if (done !== undefined) keep.push(encodeLine({ v: 1, type: "complete", gid, at: done }));
    }
    const text = keep.join("");
    const temporary = `${this.path}.compact`;
    const out = await open(temporary, "w");
    try {
      await out.writeFile(text, "utf8");
      await out.datasync();
    } finally {
      await out.close();
    }
    await rename(temporary, this.path);
    await syncDirectory(this.path);
    await this.handle.close();
    this.handle = await open(this.path, "a");
    this.size = Buffer.byteLength(text, "utf8");
    this.completedSinceCompaction = 0;
  }
}

function parse(bytes: Buffer, path: string): { lines: Line[]; goodLength: number } {
  const lines: Line[] = [];
  let start = 0;
  let lineNumber = 0;
  let firstBad: { offset: number; line: number } | undefined;
  while (start < bytes.length) {
    lineNumber++;
    const end = bytes.indexOf(0x0a, start);
    const stop = end === -1 ? bytes.length : end;
    const line = end === -1 ? undefined : decodeLine(bytes.toString("utf8", start, stop));
    if (line === undefined) {
      firstBad ??= { offset: start, line: lineNumber };
    } else {
      // A good line after a bad one: the damage is not a torn tail, so the file was altered.
      if (firstBad !== undefined) throw decisionLogCorrupt(path, firstBad.line);
      lines.push(line);
    }
    start = stop + 1;
  }
  return { lines, goodLength: firstBad?.offset ?? bytes.length };
}

/** A new or renamed file is durable only once its directory entry is. */
async function syncDirectory(path: string): Promise<void> {
  const directory = await open(dirname(path), "r");
  try {
    await directory.sync();
  } finally {
    await directory.close();
  }
}

function assertNever(value: never): never {
  throw new Error(`unexpected decision log line ${JSON.stringify(value)}`);
}
