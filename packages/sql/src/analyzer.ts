import type {
  Analysis,
  AnalyzerOptions,
  CacheStats,
  ConsoleCommand,
  ConsoleReader,
  Hints,
  KeyConstraint,
  KeyValue,
  SchemaInfo,
  TableRef,
} from "./analysis.js";
import { type AnalysisCore, classify, type InsertCore } from "./classify.js";
import { analysisFailed, consoleCommandInBatch, multipleCommands, SqlAnalysisError } from "./errors.js";
import { readHints } from "./hints.js";
import { ANY, valuesOf } from "./key-lattice.js";
import { arrayLiteralValues, canonicalKeyValues, type KeyType } from "./key-values.js";
import { type Lexed, type LiftedLiteral, lex, shapeSql } from "./lexer.js";
import { initSql, parseStatements } from "./parser.js";
import { ShapeCache } from "./shape-cache.js";
import { StatementAnalysis } from "./statement-analysis.js";
import { scanStatements } from "./statement-split.js";

export { initSql };

const DEFAULT_CACHE_SIZE = 4096;
const DOORKEEPER_MASK = (1 << 14) - 1;
/** Bulk statements are analysed without the caches, which would otherwise hold their whole text. */
const MAX_CACHED_TEXT = 16 * 1024;
const MAX_CACHED_SHAPE = 64 * 1024;

/** FNV-1a over UTF-16 units: cheap, and only used to tell a repeat from a first sighting. */
function textHash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * A cached shape: the analysis of the statement with its literals replaced by parameters numbered
 * from `firstSlot`, and which parts mention those parameters (so a hit rebuilds only those).
 */
interface ShapeEntry {
  readonly core: AnalysisCore;
  readonly firstSlot: number;
  readonly tablesWithSlots: readonly number[];
  readonly insertHasSlots: boolean;
  /** The keys' type: a literal put back in a slot is canonicalised as a cold analysis would. */
  readonly keyType: KeyType | undefined;
}

/** A shape whose normalised analysis disagreed with the original: always analysed cold. */
const UNCACHEABLE = "uncacheable" as const;

type CacheValue = ShapeEntry | typeof UNCACHEABLE;

/**
 * An exact text's analysis, and (for a text the lexer finds to be one statement) what
 * `analyzeBatch` returns for it, built once so a hit allocates nothing.
 */
interface TextEntry {
  readonly analysis: Analysis;
  readonly batch: readonly Analysis[] | undefined;
}

const NO_ANALYSES: readonly Analysis[] = Object.freeze([]);

const UNPARSED_CORE: AnalysisCore = {
  kind: "utility",
  command: "",
  readOnly: false,
  needsPrimary: "hint",
  transaction: undefined,
  sessionEffects: [],
  blocks: [],
  tables: [],
  links: [],
  crossJoins: [],
  flags: {
    assignsKey: false,
    volatileFunctions: [],
    userFunctions: [],
    locking: undefined,
    selectInto: false,
    writingCte: false,
    returning: false,
  },
  insertRows: undefined,
  paramCount: 0,
  explain: undefined,
  maintenance: undefined,
  mergeActions: undefined,
  inexactKeys: false,
};

/**
 * Text the parser or the analyser cannot read still runs, untouched, where a region hint sends it;
 * without a hint there is nowhere to send it, so the error stands.
 */
function runsUnparsed(error: unknown, hints: Hints): boolean {
  return (
    hints.region !== undefined &&
    error instanceof SqlAnalysisError &&
    (error.code === "syntax-error" || error.code === "analysis-failed")
  );
}

/**
 * Analyses statements against a fixed schema (key columns, user aggregates), with a shape cache.
 * The schema is fixed for the analyzer's life because cached analyses depend on it: build a new
 * analyzer when the placement changes. So is the console reader: console commands are the
 * embedding's (`AnalyzerOptions.console`), and without a reader there are none.
 *
 * @example
 * const analyzer = await Analyzer.create({ keyColumns: new Map([["users", "tenant_id"]]) });
 * const a = analyzer.analyze("SELECT * FROM users WHERE tenant_id = 'alice'");
 * a.tables[0]?.key; // { kind: "values", values: [{ kind: "literal", type: "string", text: "alice" }] }
 */
export class Analyzer {
  readonly #schema: SchemaInfo;
  readonly #console: ConsoleReader | undefined;
  readonly #cache: ShapeCache<CacheValue>;
  /** Exact texts seen recently: a statement sent again verbatim skips even the lexer. */
  readonly #texts: ShapeCache<TextEntry>;
  #uncacheable = 0;
  #textHits = 0;
  readonly #doorkeeper = new Uint32Array(DOORKEEPER_MASK + 1);

  /** Requires `await initSql()` first; `Analyzer.create` does both. */
  constructor(options: AnalyzerOptions) {
    this.#schema = {
      keyColumns: new Map(options.keyColumns),
      ...(options.aggregates === undefined
        ? {}
        : { aggregates: new Set([...options.aggregates].map((a) => a.toLowerCase())) }),
      ...(options.keyType === undefined ? {} : { keyType: options.keyType }),
    };
    this.#console = options.console;
    this.#cache = new ShapeCache(options.cacheSize ?? DEFAULT_CACHE_SIZE);
    this.#texts = new ShapeCache(options.cacheSize ?? DEFAULT_CACHE_SIZE);
  }

  static async create(options: AnalyzerOptions): Promise<Analyzer> {
    await initSql();
    return new Analyzer(options);
  }

  /**
   * Analyses one statement (what a Parse message carries). Throws `SqlAnalysisError`: 42601 for a
   * syntax error (PostgreSQL's message and position), an unreadable hint or several statements.
   */
  analyze(text: string): Analysis {
    const seen = this.#texts.peek(text);
    if (seen !== undefined) {
      this.#textHits++;
      return seen.analysis;
    }
    const lexed = lex(text);
    return this.#remember(text, lexed, this.#analyzeText(text, lexed)).analysis;
  }

  /**
   * Admits a text on its second sighting only: a stream of ever-new literals would otherwise churn
   * the exact-text map for nothing. The doorkeeper remembers one hash per slot.
   */
  #remember(text: string, lexed: Lexed, analysis: Analysis): TextEntry {
    const entry: TextEntry = {
      analysis,
      batch: lexed.multiple ? undefined : analysis.kind === "empty" ? NO_ANALYSES : [analysis],
    };
    if (text.length > MAX_CACHED_TEXT) return entry;
    const h = textHash(text);
    const slot = h & DOORKEEPER_MASK;
    if (this.#doorkeeper[slot] === h) this.#texts.set(text, entry);
    else this.#doorkeeper[slot] = h;
    return entry;
  }

  #analyzeText(text: string, lexed: Lexed): Analysis {
    const consoleCommand = this.#console?.read(text);
    if (consoleCommand !== undefined) {
      if (lexed.multiple) throw multipleCommands();
      return this.#consoleAnalysis(text, consoleCommand);
    }
    const hints = readHints(lexed.leadingComment, lexed.hintComments);
    if (lexed.multiple) {
      const statements = this.#parseOrUnparsed(text, hints);
      if (statements === undefined) return this.#unparsed(text, hints);
      if (statements.length > 1) throw multipleCommands();
    }
    if (lexed.broken) return this.#cold(text, hints);
    return this.#cached(text, lexed, hints);
  }

  /**
   * Every statement of a simple-query string, in order (an empty string gives no statements). The
   * exact-text map is consulted before anything else, so a repeated statement is not even lexed;
   * a miss lexes once. Session settings do not enter the key because they do not enter the
   * analysis: the lexer and PostgreSQL's parser read every string as standard_conforming_strings
   * = on, whatever the session's setting.
   */
  analyzeBatch(text: string): readonly Analysis[] {
    const seen = this.#texts.peek(text);
    if (seen?.batch !== undefined) {
      this.#textHits++;
      return seen.batch;
    }
    const lexed = lex(text);
    if (!lexed.multiple)
      return this.#remember(text, lexed, this.#analyzeText(text, lexed)).batch ?? NO_ANALYSES;
    const hints = readHints(lexed.leadingComment, lexed.hintComments);
    if (this.#console?.mayHold(text) === true) {
      const withConsole = this.#batchWithConsole(text, hints);
      if (withConsole !== undefined) return withConsole;
    }
    return this.#sqlBatch(text, hints);
  }

  #sqlBatch(text: string, hints: Hints): Analysis[] {
    const statements = this.#parseOrUnparsed(text, hints);
    if (statements === undefined) return [this.#unparsed(text, hints)];
    return statements.filter((s) => s.node !== undefined).map((s) => this.#withHints(s.text, hints));
  }

  /**
   * A batch holding console commands: each runs in its place, and each run of SQL statements
   * between them is parsed whole. Commands that change the proxy's state are refused in a batch:
   * they cannot be undone with the implicit transaction of the statements around them.
   * Undefined when the batch holds no console command after all.
   */
  #batchWithConsole(text: string, hints: Hints): Analysis[] | undefined {
    const pieces = scanStatements(text);
    if (pieces === undefined) return undefined;
    const consoles = pieces.map((piece) => this.#consolePiece(piece.text));
    if (consoles.every((console) => console === undefined)) return undefined;
    for (const console of consoles) {
      const command = console?.console;
      if (command?.changesProxyState === true) throw consoleCommandInBatch(command.command);
    }
    const analyses: Analysis[] = [];
    let sqlStart = -1;
    let sqlEnd = -1;
    const flushSql = (): void => {
      if (sqlStart < 0) return;
      analyses.push(...this.#sqlBatch(text.slice(sqlStart, sqlEnd), hints));
      sqlStart = -1;
    };
    for (const [i, piece] of pieces.entries()) {
      const console = consoles[i];
      if (console === undefined) {
        if (sqlStart < 0) sqlStart = piece.start;
        sqlEnd = piece.end;
        continue;
      }
      flushSql();
      analyses.push(console);
    }
    flushSql();
    return analyses;
  }

  stats(): CacheStats {
    return {
      hits: this.#cache.hits + this.#textHits,
      misses: this.#cache.misses,
      uncacheable: this.#uncacheable,
      size: this.#cache.size,
      capacity: this.#cache.capacity,
    };
  }

  /** Analyses without the cache (what every cache hit must equal). */
  analyzeCold(text: string): Analysis {
    const consoleCommand = this.#console?.read(text);
    if (consoleCommand !== undefined) return this.#consoleAnalysis(text, consoleCommand);
    const lexed = lex(text);
    return this.#cold(text, readHints(lexed.leadingComment, lexed.hintComments));
  }

  /** Later statements of a batch carry the batch's leading hint too. */
  #withHints(text: string, hints: Hints): Analysis {
    const lexed = lex(text);
    const own = readHints(lexed.leadingComment, lexed.hintComments);
    const merged = own.key === undefined && own.region === undefined && !own.primary ? hints : own;
    return this.#cached(text, lexed, merged);
  }

  #parseOrUnparsed(text: string, hints: Hints): ReturnType<typeof parseStatements> | undefined {
    try {
      return parseStatements(text);
    } catch (error) {
      if (runsUnparsed(error, hints)) return undefined;
      throw error;
    }
  }

  /** A batch piece's console analysis, or undefined for SQL (parsed, and reported, with its run). */
  #consolePiece(text: string): Analysis | undefined {
    const command = this.#console?.read(text);
    return command === undefined ? undefined : this.#consoleAnalysis(text, command);
  }

  #consoleAnalysis(text: string, command: ConsoleCommand): Analysis {
    const core: AnalysisCore = {
      ...UNPARSED_CORE,
      kind: "console",
      command: "CONSOLE",
      readOnly: true,
      needsPrimary: undefined,
    };
    return new StatementAnalysis(core, text, { primary: false }, this.#schema, { console: command });
  }

  #unparsed(text: string, hints: Hints): Analysis {
    return new StatementAnalysis(UNPARSED_CORE, text, hints, this.#schema, { unparsed: true });
  }

  #coldCore(text: string): AnalysisCore {
    const statements = parseStatements(text);
    if (statements.length > 1) throw multipleCommands();
    try {
      return classify(statements[0]?.node, this.#schema);
    } catch (error) {
      throw analysisFailed(error);
    }
  }

  #coreOrUnparsed(text: string, hints: Hints): AnalysisCore | undefined {
    try {
      return this.#coldCore(text);
    } catch (error) {
      if (runsUnparsed(error, hints)) return undefined;
      throw error;
    }
  }

  #cold(text: string, hints: Hints): Analysis {
    const core = this.#coreOrUnparsed(text, hints);
    if (core === undefined) return this.#unparsed(text, hints);
    return new StatementAnalysis(core, text, hints, this.#schema);
  }

  #cached(text: string, lexed: Lexed, hints: Hints): Analysis {
    const hit = this.#cache.get(lexed.shapeKey);
    if (hit === UNCACHEABLE) return this.#cold(text, hints);
    if (hit !== undefined)
      return new StatementAnalysis(
        hit.core,
        text,
        hints,
        this.#schema,
        undefined,
        instantiateParts(hit, lexed.literals),
      );
    const core = this.#coreOrUnparsed(text, hints);
    if (core === undefined) return this.#unparsed(text, hints);
    this.#learn(lexed, core);
    return new StatementAnalysis(core, text, hints, this.#schema);
  }

  /**
   * On a miss: analyse the normalised statement too, and trust the shape only if, with this
   * statement's literals put back, it gives exactly the original's analysis. A normaliser mistake
   * (a sign, a literal that changes the grammar) then costs a miss, never a wrong answer.
   */
  #learn(lexed: Lexed, originalCore: AnalysisCore): void {
    const firstSlot = lexed.maxParam + 1;
    let shapeCore: AnalysisCore;
    if (lexed.literals.length === 0) {
      shapeCore = originalCore;
    } else {
      try {
        shapeCore = this.#coldCore(shapeSql(lexed.shapeKey, firstSlot));
      } catch {
        this.#markUncacheable(lexed.shapeKey);
        return;
      }
    }
    const entry = makeEntry(shapeCore, firstSlot, lexed.maxParam, this.#schema.keyType);
    if (!deepEqual(instantiate(entry, lexed.literals), originalCore)) {
      this.#markUncacheable(lexed.shapeKey);
      return;
    }
    if (lexed.shapeKey.length <= MAX_CACHED_SHAPE) this.#cache.set(lexed.shapeKey, entry);
  }

  #markUncacheable(key: string): void {
    this.#uncacheable++;
    this.#cache.set(key, UNCACHEABLE);
  }
}

function hasSlot(values: readonly (KeyValue | undefined)[], firstSlot: number): boolean {
  return values.some((v) => v !== undefined && v.kind !== "literal" && v.index >= firstSlot);
}

function makeEntry(
  core: AnalysisCore,
  firstSlot: number,
  maxParam: number,
  keyType: KeyType | undefined,
): ShapeEntry {
  const tablesWithSlots: number[] = [];
  core.tables.forEach((t, i) => {
    if (t.key.kind === "values" && hasSlot(t.key.values, firstSlot)) tablesWithSlots.push(i);
  });
  const insertHasSlots = core.insertRows !== undefined && hasSlot(core.insertRows.rowKeys, firstSlot);
  const normalised = core.paramCount === maxParam ? core : { ...core, paramCount: maxParam };
  return { core: normalised, firstSlot, tablesWithSlots, insertHasSlots, keyType };
}

function scalarFor(slot: KeyValue, literal: LiftedLiteral): KeyValue {
  return slot.cast === undefined
    ? { kind: "literal", type: literal.kind, text: literal.text }
    : { kind: "literal", type: literal.kind, text: literal.text, cast: slot.cast };
}

function literalFor(
  slot: KeyValue,
  literal: LiftedLiteral | undefined,
  keyType: KeyType | undefined,
): KeyValue[] | undefined {
  if (literal === undefined) return undefined;
  const values =
    slot.kind === "param-array"
      ? literal.kind === "string"
        ? arrayLiteralValues(literal.text, slot.cast)
        : undefined
      : [scalarFor(slot, literal)];
  if (values === undefined || keyType === undefined) return values;
  return canonicalKeyValues(values, keyType);
}

/** A table occurrence with another key constraint (written out: this is the cache's hot path). */
function withKey(t: TableRef, key: KeyConstraint): TableRef {
  const out: { -readonly [K in keyof TableRef]: TableRef[K] } = {
    name: t.name,
    only: t.only,
    block: t.block,
    access: t.access,
    key,
  };
  if (t.schema !== undefined) out.schema = t.schema;
  if (t.alias !== undefined) out.alias = t.alias;
  if (t.keyColumn !== undefined) out.keyColumn = t.keyColumn;
  return out;
}

function instantiateValues(
  values: readonly KeyValue[],
  entry: ShapeEntry,
  literals: readonly LiftedLiteral[],
): KeyConstraint {
  const only = values[0];
  if (values.length === 1 && only !== undefined && only.kind === "param" && only.index >= entry.firstSlot) {
    const replaced = literalFor(only, literals[only.index - entry.firstSlot], entry.keyType);
    return replaced === undefined ? ANY : { kind: "values", values: replaced };
  }
  const out: KeyValue[] = [];
  for (const v of values) {
    if (v.kind === "literal" || v.index < entry.firstSlot) {
      out.push(v);
      continue;
    }
    const replaced = literalFor(v, literals[v.index - entry.firstSlot], entry.keyType);
    if (replaced === undefined) return ANY;
    out.push(...replaced);
  }
  return valuesOf(out);
}

interface InstantiatedParts {
  readonly tables: readonly TableRef[];
  readonly insertRows: InsertCore | undefined;
}

/** The shape's analysis with this statement's literals in place of the shape's parameters. */
function instantiate(entry: ShapeEntry, literals: readonly LiftedLiteral[]): AnalysisCore {
  const parts = instantiateParts(entry, literals);
  const core = entry.core;
  return parts.tables === core.tables && parts.insertRows === core.insertRows ? core : { ...core, ...parts };
}

/** Only the parts of a cached shape that mention its literals, rebuilt with this statement's values. */
function instantiateParts(entry: ShapeEntry, literals: readonly LiftedLiteral[]): InstantiatedParts {
  const core = entry.core;
  if (entry.tablesWithSlots.length === 0 && !entry.insertHasSlots) return core as InstantiatedParts;
  let tables = core.tables;
  if (entry.tablesWithSlots.length > 0) {
    const copy = tables.slice();
    for (const i of entry.tablesWithSlots) {
      const t = copy[i] as TableRef;
      if (t.key.kind !== "values") continue;
      copy[i] = withKey(t, instantiateValues(t.key.values, entry, literals));
    }
    tables = copy;
  }
  let insertRows: InsertCore | undefined = core.insertRows;
  if (entry.insertHasSlots && insertRows !== undefined) {
    insertRows = {
      ...insertRows,
      rowKeys: insertRows.rowKeys.map((k) => {
        if (k === undefined || k.kind === "literal" || k.index < entry.firstSlot) return k;
        const replaced = literalFor(k, literals[k.index - entry.firstSlot], entry.keyType);
        return replaced?.length === 1 ? replaced[0] : undefined;
      }),
    };
  }
  return { tables, insertRows };
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  const ka = Object.keys(ra).filter((k) => ra[k] !== undefined);
  const kb = Object.keys(rb).filter((k) => rb[k] !== undefined);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => deepEqual(ra[k], rb[k]));
}
