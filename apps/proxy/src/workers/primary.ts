import cluster, { type Worker } from "node:cluster";
import type { GeoConfig } from "@geo/core";
import type { Logger } from "../log.js";
import { readWorkerReport } from "./messages.js";
import { WORKER_ENV, workerNode } from "./worker-config.js";

export interface PrimaryOptions {
  readonly config: GeoConfig;
  /** Workers to keep running, 2..MAX_WORKERS. */
  readonly count: number;
  readonly log: Logger;
  /** The workers' own shutdown timeout; past it (and a margin) the primary kills what is left. */
  readonly shutdownTimeoutMs: number;
}

/** One worker's place: the process in it now, and how its recent lives went. */
interface Slot {
  readonly index: number;
  readonly node: string;
  worker: Worker | undefined;
  /** Reported `listening` in this life. */
  listening: boolean;
  startedAt: number;
  /** Consecutive short lives (under STEADY_MS): the restart backoff's exponent. */
  shortLives: number;
  /** Consecutive lives that ended before listening, after the first start. */
  failedStarts: number;
  restart: NodeJS.Timeout | undefined;
}

/** A worker restarted this long after it died, doubling per short life, up to MAX_BACKOFF_MS. */
const BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 30_000;
/** A life this long resets the backoff. */
const STEADY_MS = 30_000;
/** A restarted worker that fails at start this many times in a row stops the proxy. */
const MAX_FAILED_STARTS = 5;
/** Past the workers' shutdown timeout, how long the primary waits before killing them. */
const STOP_MARGIN_MS = 10_000;
/** The exit status when a worker that failed at start gave none (it was killed by a signal). */
const EX_SOFTWARE = 70;

/**
 * The primary of `geoproxy serve --workers N`: forks N workers onto the one port (node:cluster
 * hands each new connection to the next worker), the first alone and the others once it listens;
 * logs `geoproxy listening` once all listen, passes cancel requests between them, restarts one
 * that dies after a backoff, and on SIGTERM or SIGINT orders every worker to stop gracefully and
 * exits once they have. A worker failing at start stops the proxy with that worker's exit status.
 */
export class WorkerPrimary {
  private readonly slots: Slot[];
  private up = false;
  private stopping = false;
  private exitCode = 0;

  constructor(private readonly options: PrimaryOptions) {
    this.slots = Array.from({ length: options.count }, (_, i) => ({
      index: i + 1,
      node: workerNode(options.config.server.node, i + 1),
      worker: undefined,
      listening: false,
      startedAt: 0,
      shortLives: 0,
      failedStarts: 0,
      restart: undefined,
    }));
  }

  start(): void {
    process.on("SIGTERM", (signal) => this.signal(signal));
    process.on("SIGINT", (signal) => this.signal(signal));
    // The first worker alone first: a first start creates what is missing (the shared directory's
    // tables, a table decision log), and two creating the same table at once can both fail.
    this.fork(this.slots[0]!);
  }

  /** The workers' process ids now, by index (0 for one between lives). */
  get pids(): number[] {
    return this.slots.map((slot) => slot.worker?.process.pid ?? 0);
  }

  private fork(slot: Slot): void {
    slot.restart = undefined;
    slot.listening = false;
    slot.startedAt = Date.now();
    const worker = cluster.fork({ [WORKER_ENV]: String(slot.index) });
    slot.worker = worker;
    worker.on("message", (message: unknown) => this.report(slot, message));
    worker.on("exit", (code, signal) => this.exited(slot, worker, code, signal));
  }

  private report(slot: Slot, message: unknown): void {
    const report = readWorkerReport(message);
    if (report === null) return;
    switch (report.type) {
      case "geoproxy:listening":
        slot.listening = true;
        slot.failedStarts = 0;
        if (!this.up && slot.index === 1) for (const other of this.slots.slice(1)) this.fork(other);
        if (this.up) {
          this.options.log.info(
            { worker: slot.index, node: slot.node, pid: slot.worker?.process.pid },
            "worker restarted",
          );
          return;
        }
        if (this.slots.every((s) => s.listening)) {
          this.up = true;
          const { config, count } = this.options;
          this.options.log.info(
            {
              host: config.server.host,
              port: report.port,
              regions: config.regions.map((region) => region.id),
              workers: count,
              nodes: this.slots.map((s) => s.node),
              pids: this.pids,
            },
            "geoproxy listening",
          );
        }
        return;
      case "geoproxy:cancel": {
        // A key naming no worker, or one between lives, cancels nothing (as PostgreSQL, silently).
        const target = this.slots[report.worker - 1]?.worker;
        if (target?.isConnected())
          target.send({ type: "geoproxy:cancel", processId: report.processId, secretKey: report.secretKey });
        return;
      }
    }
  }

  private exited(slot: Slot, worker: Worker, code: number | null, signal: string | null): void {
    if (slot.worker !== worker) return;
    slot.worker = undefined;
    const fields = { worker: slot.index, node: slot.node, pid: worker.process.pid, code, signal };
    if (this.stopping) {
      this.options.log.info(fields, "worker stopped");
      if (code !== 0) this.exitCode = this.exitCode || 1;
      this.finishWhenDone();
      return;
    }
    if (!slot.listening) {
      slot.failedStarts++;
      if (!this.up || slot.failedStarts >= MAX_FAILED_STARTS) {
        this.options.log.error(
          { ...fields, failedStarts: slot.failedStarts },
          "worker failed at start: stopping every worker",
        );
        this.exitCode = code === null || code === 0 ? EX_SOFTWARE : code;
        this.stop();
        return;
      }
    }
    const lived = Date.now() - slot.startedAt;
    slot.shortLives = lived >= STEADY_MS ? 0 : slot.shortLives + 1;
    const delayMs = Math.min(MAX_BACKOFF_MS, BACKOFF_MS * 2 ** Math.max(0, slot.shortLives - 1));
    this.options.log.warn(
      { ...fields, livedMs: lived, restartInMs: delayMs },
      "worker exited: restarting it",
    );
    slot.restart = setTimeout(() => this.fork(slot), delayMs);
  }

  private signal(signal: NodeJS.Signals): void {
    if (this.stopping) {
      this.options.log.warn({ signal }, "second signal: exiting now");
      for (const slot of this.slots) slot.worker?.process.kill("SIGKILL");
      process.exit(1);
    }
    this.options.log.info({ signal }, "signal received");
    this.stop();
  }

  /** Orders every worker to stop gracefully; the primary exits once the last has. */
  private stop(): void {
    if (this.stopping) return;
    this.stopping = true;
    for (const slot of this.slots) {
      if (slot.restart !== undefined) clearTimeout(slot.restart);
      slot.restart = undefined;
      const worker = slot.worker;
      if (worker === undefined) continue;
      // One still starting has no handler yet: SIGTERM ends it where it stands.
      if (slot.listening && worker.isConnected()) worker.send({ type: "geoproxy:stop" });
      else worker.process.kill("SIGTERM");
    }
    setTimeout(() => {
      for (const slot of this.slots) {
        if (slot.worker === undefined) continue;
        this.options.log.warn(
          { worker: slot.index, node: slot.node },
          "worker did not stop in time: killing it",
        );
        slot.worker.process.kill("SIGKILL");
      }
    }, this.options.shutdownTimeoutMs + STOP_MARGIN_MS).unref();
    this.finishWhenDone();
  }

  private finishWhenDone(): void {
    if (this.slots.some((slot) => slot.worker !== undefined)) return;
    this.options.log.info({ exitCode: this.exitCode }, "geoproxy stopped");
    process.exit(this.exitCode);
  }
}
