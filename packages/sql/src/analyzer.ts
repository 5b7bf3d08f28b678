import type { Analysis, AnalyzerOptions, CacheStats } from "./analysis.js";
import { parserNotLoaded } from "./errors.js";

/** Loads PostgreSQL's parser (WebAssembly) once; later calls return the same promise. */
export async function initSql(): Promise<void> {}

/**
 * Analyses statements against a fixed schema (key columns, user aggregates), with a shape cache.
 *
 * @example
 * const analyzer = await Analyzer.create({ keyColumns: new Map([["users", "tenant_id"]]) });
 * const a = analyzer.analyze("SELECT * FROM users WHERE tenant_id = 'alice'");
 * a.tables[0]?.key; // { kind: "values", values: [{ kind: "literal", type: "string", text: "alice" }] }
 */
export class Analyzer {
  readonly #options: AnalyzerOptions;

  constructor(options: AnalyzerOptions) {
    this.#options = options;
  }

  static async create(options: AnalyzerOptions): Promise<Analyzer> {
    await initSql();
    return new Analyzer(options);
  }

  /** One statement (as a Parse message carries). Several statements are a 42601 error. */
  analyze(_text: string): Analysis {
    throw parserNotLoaded();
  }

  /** Every statement of a simple-query string, in order. */
  analyzeBatch(_text: string): readonly Analysis[] {
    throw parserNotLoaded();
  }

  stats(): CacheStats {
    return { hits: 0, misses: 0, uncacheable: 0, size: 0, capacity: this.#options.cacheSize ?? 4096 };
  }
}
