import type { RegionId } from "@geo/core";
import { PgError } from "@geo/proto";
import type { RegionRunner, SqlRows } from "./region-runner.js";

/** The SQL a quorum step runs: the same in every region, or one text per region. */
export type QuorumSql = string | ((region: RegionId) => string);

/** A step that fewer than `need` of several regions took: what each of the others said. */
export class QuorumError extends Error {
  constructor(
    readonly failures: ReadonlyMap<RegionId, unknown>,
    answered: number,
    need: number,
  ) {
    super(
      `${answered} of the ${need} regions needed answered (${[...failures]
        .map(([region, error]) => `${region}: ${error instanceof Error ? error.message : String(error)}`)
        .join("; ")})`,
    );
  }

  /** The first server error of this SQLSTATE any region gave, if one did. */
  serverError(code: string): PgError | undefined {
    for (const error of this.failures.values())
      if (error instanceof PgError && error.code === code) return error;
    return undefined;
  }
}

/**
 * Where the proxies of a shared directory agree: one authority region (`need` 1 of one region),
 * or a majority of every region. A step runs in each of the regions at once, each bounded by
 * lease_ms, and is taken once `need` of them committed it: any two sets of `need` regions share
 * one, so what one step wrote, a later step that reached `need` regions reads. The step resolves
 * at the `need`-th answer and does not wait for the others, so a region that is down or frozen
 * slows nothing; the late answers land (or fail) on their own.
 */
export class Quorum {
  readonly need: number;
  /**
   * Each region's outcome of the latest step sent there that settled, late answers included:
   * an older step that fails late does not hide that a newer one answered.
   */
  readonly #answering = new Map<RegionId, { readonly sent: number; readonly answered: boolean }>();
  #sent = 0;

  constructor(
    private readonly runner: RegionRunner,
    readonly regions: readonly RegionId[],
    readonly majority: boolean,
    private readonly stepMs: number,
  ) {
    this.need = Math.floor(regions.length / 2) + 1;
  }

  /** "region eu-west", or "a majority of regions (us-east, eu-west, ap-south)": for messages. */
  get where(): string {
    return this.majority ? `a majority of regions (${this.regions.join(", ")})` : `region ${this.regions[0]}`;
  }

  /**
   * Runs `sql` in every region, each bounded by the step time; resolves with the answers of the
   * first `need` regions that answered (more when they came at once). Rejects with a QuorumError
   * once so many failed that `need` cannot be reached. `counts`: which answers count.
   */
  run(sql: QuorumSql, counts?: (answer: SqlRows) => boolean): Promise<Map<RegionId, SqlRows>> {
    return this.each(async (region) => {
      const answer = await this.runner.runWithin(
        region,
        typeof sql === "string" ? sql : sql(region),
        this.stepMs,
      );
      // An answer that does not count (an update that found no row there) is as no answer.
      if (counts !== undefined && !counts(answer)) throw new Error(`region ${region} did not take the step`);
      return answer;
    });
  }

  /** `run` for work of several statements in each region (each statement bounded on its own). */
  each<T>(work: (region: RegionId) => Promise<T>): Promise<Map<RegionId, T>> {
    const answered = new Map<RegionId, T>();
    const failures = new Map<RegionId, unknown>();
    const total = this.regions.length;
    const sent = ++this.#sent;
    return new Promise((resolve, reject) => {
      let settled = false;
      for (const region of this.regions) {
        work(region).then(
          (answer) => {
            this.#outcome(region, sent, true);
            if (settled) return;
            answered.set(region, answer);
            if (answered.size >= this.need) {
              settled = true;
              resolve(answered);
            }
          },
          (error: unknown) => {
            this.#outcome(region, sent, false);
            if (settled) return;
            failures.set(region, error);
            if (total - failures.size < this.need) {
              settled = true;
              // One authority region: its own error, as a statement there would give it.
              reject(total === 1 ? error : new QuorumError(failures, answered.size, this.need));
            }
          },
        );
      }
    });
  }

  /** The regions whose latest settled step answered (a late answer counts: it came). */
  answering(): Set<RegionId> {
    return new Set(this.regions.filter((region) => this.#answering.get(region)?.answered === true));
  }

  #outcome(region: RegionId, sent: number, answered: boolean): void {
    const last = this.#answering.get(region);
    if (last === undefined || last.sent <= sent) this.#answering.set(region, { sent, answered });
  }

  /** One statement in one region, bounded as every step is. */
  in(region: RegionId, sql: string): Promise<SqlRows> {
    return this.runner.runWithin(region, sql, this.stepMs);
  }

  /** `run`, for an answer every region gives alike (the first one that came). */
  async one(sql: QuorumSql): Promise<SqlRows> {
    const answers = await this.run(sql);
    return answers.values().next().value as SqlRows;
  }
}

/** The server error of SQLSTATE `code` a step failed with: its own, or any region's of a quorum. */
export function serverErrorOf(error: unknown, code: string): PgError | undefined {
  if (error instanceof PgError) return error.code === code ? error : undefined;
  return error instanceof QuorumError ? error.serverError(code) : undefined;
}
