import { ConfigError } from "../errors/config-error.js";
import type { FieldReader } from "./field-reader.js";
import type { DirectoryStoreConfig, GeoConfig, TxnConfig, WorkerCount } from "./types.js";

/**
 * The most worker processes one proxy runs: a worker's index travels in four bits of every cancel
 * key it issues, so a CancelRequest landing on another worker can be sent on to the right one.
 */
export const MAX_WORKERS = 16;

/** `[server] workers`: an integer 1..MAX_WORKERS, or `"auto"` (one per core). */
export function readWorkers(reader: FieldReader, fallback: WorkerCount): WorkerCount {
  const value = reader.object["workers"];
  if (value === "auto") return "auto";
  if (typeof value === "string")
    reader.fail("invalid_value", "workers", `unknown value ${JSON.stringify(value)}`, [
      `1..${MAX_WORKERS}`,
      '"auto"',
    ]);
  return reader.integer("workers", typeof fallback === "number" ? fallback : 1, 1, MAX_WORKERS);
}

/**
 * How many workers `count` means on a machine with `cores` cores (os.availableParallelism()):
 * `"auto"` is one per core, at most MAX_WORKERS.
 *
 * @example
 * resolveWorkers("auto", 4); // 4
 * resolveWorkers(2, 64); // 2
 */
export function resolveWorkers(count: WorkerCount, cores: number): number {
  return count === "auto" ? Math.max(1, Math.min(MAX_WORKERS, Math.floor(cores))) : count;
}

/** A field that cannot stand beside several workers, and what to change. */
export interface WorkersConflict {
  /** Dotted path of the field at fault (`directory_store.shared`). */
  readonly path: string;
  readonly detail: string;
}

/**
 * Why `config` cannot run `count` worker processes (as `given` wrote it: `workers = 2`,
 * `--workers 2`), or null. Each worker is a proxy of its own, so what one proxy alone may hold is
 * refused: a `[directory_store]` that is not shared (its claim admits one process over the
 * store), and a fixed `[txn] log_path` (one file, locked by one process).
 * `"auto"` counts as several whatever the machine, so a configuration is valid or not everywhere.
 */
export function workersConflict(
  config: { readonly directoryStore?: DirectoryStoreConfig | undefined; readonly txn: TxnConfig },
  count: WorkerCount,
  given: string,
): WorkersConflict | null {
  if (count === 1) return null;
  const store = config.directoryStore;
  if (store !== undefined && !store.shared)
    return {
      path: "directory_store.shared",
      detail: `${given} runs several worker processes, each a proxy of its own, and a directory store that is not shared admits one proxy: set shared = true (each worker then joins the shared directory as <node>-w<i>), or run one worker`,
    };
  if (config.txn.logPath !== undefined)
    return {
      path: "txn.log_path",
      detail: `${given} runs several worker processes, each with a decision log of its own, and log_path names one file: remove log_path (worker i writes <data_dir>/<node>-w<i>.decisions.log), or run one worker`,
    };
  return null;
}

/**
 * Throws the ConfigError of {@link workersConflict} for a count given outside the file (the
 * command line's `--workers`): it names the file and the field to change.
 */
export function checkWorkers(config: GeoConfig, count: WorkerCount, given: string): void {
  const conflict = workersConflict(config, count, given);
  if (conflict !== null)
    throw new ConfigError({
      code: "invalid_value",
      file: config.file,
      path: conflict.path,
      detail: conflict.detail,
    });
}
