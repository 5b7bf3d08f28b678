import pg from "pg";

/** What one step returned, in the form graded: every value as PostgreSQL's text, or null. */
export interface StepResult {
  readonly kind: "rows";
  readonly command: string;
  readonly rowCount: number | null;
  readonly columns: readonly { readonly name: string; readonly typeOid: number }[];
  readonly rows: readonly (readonly (string | null)[])[];
}

export interface StepError {
  readonly kind: "error";
  readonly sqlstate: string;
  readonly message: string;
}

/** A script's outcome: the results of the steps that ran, and the error that stopped it, if any. */
export interface ScriptOutcome {
  readonly results: readonly StepResult[];
  readonly error?: StepError;
  /** Index of the step that failed. */
  readonly failedStep?: number;
}

/** How statements reach the server: one Query message, or Parse/Bind/Execute with literals as parameters. */
export const PROTOCOLS = ["simple", "extended"] as const;
export type Protocol = (typeof PROTOCOLS)[number];

const STRING_LITERAL = /'(?:[^']|'')*'/g;

/**
 * The statement with every string literal lifted into a parameter ($1, $2, ... in order), as a
 * driver sends it: the key then arrives at Bind, which is where the proxy must route it.
 * Parameters are sent untyped, so PostgreSQL infers each one's type from where it stands, exactly
 * as it types the literal. Generated statements have no comments or dollar quotes, so a literal
 * is always a quoted string.
 */
export function liftLiterals(sql: string): { text: string; values: string[] } {
  const values: string[] = [];
  const text = sql.replace(STRING_LITERAL, (literal) => {
    values.push(literal.slice(1, -1).replaceAll("''", "'"));
    return `$${values.length}`;
  });
  return { text, values };
}

// Every value stays the text PostgreSQL sent: comparing text is exact, parsing is not (numeric, float8).
const asText = { getTypeParser: () => (value: string) => value };

/** One connection that runs scripts with the simple query protocol and reports text results. */
export class ScriptClient {
  private client: pg.Client | undefined;
  private closing = false;
  private droppedWith: string | undefined;
  private lastSql: string | undefined;
  /** Connections found dropped after a statement had answered: that statement, and why. */
  readonly lost: { readonly after: string; readonly message: string }[] = [];

  constructor(
    private readonly target: {
      host: string;
      port: number;
      user: string;
      database: string;
      options?: string | undefined;
    },
    private readonly protocol: Protocol = "simple",
    private readonly queryTimeoutMs = 30_000,
  ) {}

  private async connection(): Promise<pg.Client> {
    if (this.client !== undefined) return this.client;
    const client = new pg.Client({
      host: this.target.host,
      port: this.target.port,
      user: this.target.user,
      database: this.target.database,
      ...(this.target.options === undefined ? {} : { options: this.target.options }),
      types: asText,
      query_timeout: this.queryTimeoutMs,
      application_name: "geo-oracle",
    });
    // A dropped connection is reported by the query that needed it; this keeps it from being thrown.
    // One that drops between statements is noted against the statement before (see `lost`).
    client.on("error", (error: Error) => {
      if (this.client === client && !this.closing) this.droppedWith ??= error.message;
    });
    client.on("end", () => {
      if (this.client === client && !this.closing) this.droppedWith ??= "the server closed the connection";
    });
    await client.connect();
    this.client = client;
    return client;
  }

  /** Runs the steps in order, stopping at the first error; a transaction left open is rolled back. */
  async run(
    steps: readonly (string | { readonly sql: string; readonly values?: readonly string[] | undefined })[],
  ): Promise<ScriptOutcome> {
    const results: StepResult[] = [];
    let inTransaction = false;
    for (let index = 0; index < steps.length; index++) {
      const step = steps[index]!;
      const sql = typeof step === "string" ? step : step.sql;
      const values = typeof step === "string" ? undefined : step.values;
      if (this.droppedWith !== undefined && !inTransaction) {
        // Dropped after the last statement answered: note it, and run this one on a new connection.
        this.lost.push({ after: this.lastSql ?? "(nothing)", message: this.droppedWith });
        await this.reset();
      }
      this.lastSql = sql;
      try {
        const client = await this.connection();
        const result =
          values !== undefined && values.length > 0
            ? // Parameters given with the statement: bound as text, untyped (node-postgres' default).
              await client.query({ text: sql, values: [...values], rowMode: "array" })
            : this.protocol === "simple"
              ? await client.query({ text: sql, rowMode: "array" })
              : await client.query({
                  ...liftLiterals(sql),
                  rowMode: "array",
                  queryMode: "extended",
                } as pg.QueryArrayConfig);
        // A string of several statements answers with one result each: they are kept as one
        // step, each row tagged with the number of the statement that returned it.
        const parts = (Array.isArray(result) ? result : [result]) as pg.QueryArrayResult[];
        results.push(
          parts.length === 1
            ? {
                kind: "rows",
                command: result.command,
                rowCount: result.rowCount,
                columns: (result.fields ?? []).map((field) => ({
                  name: field.name,
                  typeOid: field.dataTypeID,
                })),
                rows: (result.rows as (string | null)[][]) ?? [],
              }
            : {
                kind: "rows",
                command: parts.map((part) => `${part.command} ${part.rowCount ?? ""}`).join("; "),
                rowCount: null,
                columns: parts.flatMap((part, i) =>
                  (part.fields ?? []).map((field) => ({
                    name: `${i}.${field.name}`,
                    typeOid: field.dataTypeID,
                  })),
                ),
                rows: parts.flatMap((part, i) =>
                  ((part.rows as (string | null)[][]) ?? []).map((row) => [String(i), ...row]),
                ),
              },
        );
        if (/^\s*BEGIN\b/i.test(sql)) inTransaction = true;
        if (/^\s*(ROLLBACK|COMMIT)\b/i.test(sql)) inTransaction = false;
      } catch (error) {
        const failure = toStepError(error);
        if (inTransaction) await this.rollbackQuietly();
        if (failure.sqlstate === "connection") await this.reset();
        return { results, error: failure, failedStep: index };
      }
    }
    return { results };
  }

  private async rollbackQuietly(): Promise<void> {
    try {
      await this.client?.query("ROLLBACK");
    } catch {
      await this.reset();
    }
  }

  /** Drops the connection; the next script opens a new one. */
  async reset(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.droppedWith = undefined;
    this.closing = true;
    await client?.end().catch(() => {});
    this.closing = false;
  }

  async close(): Promise<void> {
    await this.reset();
  }
}

function toStepError(error: unknown): StepError {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) {
      return { kind: "error", sqlstate: code, message: error.message };
    }
    // No SQLSTATE: the connection broke or timed out, which no grading treats as a refusal.
    return { kind: "error", sqlstate: "connection", message: error.message };
  }
  return { kind: "error", sqlstate: "connection", message: String(error) };
}
