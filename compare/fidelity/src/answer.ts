import { encodeBind, encodeDescribe, encodeExecute, encodeParse, encodeSync, PgError } from "@geo/proto";
import { RawClient } from "@geo/testkit";
import pg from "pg";
import type { FidelityStatement } from "./statements.js";
import type { Endpoint } from "./world.js";

/** The parts of an error the grading looks at. */
export interface AnswerError {
  readonly sqlstate: string;
  readonly message: string;
  readonly hint: string | undefined;
}

/**
 * One answer in comparable form: a header line per column and one string per row. Text answers
 * keep PostgreSQL's text of each value; binary answers keep each value's bytes as hex.
 */
export interface Answer {
  readonly columns: readonly string[];
  readonly rows: readonly string[];
  readonly tag: string;
  readonly error?: AnswerError;
}

// Values stay exactly the text PostgreSQL sent: parsing numeric or float8 would blur differences.
const asText = { getTypeParser: () => (value: string) => value };

/** A pg connection answering statements as text: simple protocol, or extended when there are parameters. */
export class TextSession {
  private constructor(private readonly client: pg.Client) {}

  static async open(target: Endpoint): Promise<TextSession> {
    const client = new pg.Client({ ...target, types: asText, query_timeout: 30_000 });
    client.on("error", () => {});
    await client.connect();
    return new TextSession(client);
  }

  async answer(statement: FidelityStatement): Promise<Answer> {
    try {
      const config: pg.QueryArrayConfig = { text: statement.sql, rowMode: "array" };
      if (statement.params !== undefined) config.values = [...statement.params];
      const result = await this.client.query(config);
      return {
        columns: (result.fields ?? []).map(
          (field) => `${field.name}:${field.dataTypeID}:${field.dataTypeModifier}`,
        ),
        rows: (result.rows as unknown[][]).map((row) => JSON.stringify(row)),
        tag: `${result.command} ${result.rowCount ?? ""}`,
      };
    } catch (error) {
      return errorAnswer(error);
    }
  }

  async close(): Promise<void> {
    await this.client.end().catch(() => {});
  }
}

function errorAnswer(error: unknown): Answer {
  const code = (error as { code?: unknown }).code;
  const hint = (error as { hint?: unknown }).hint;
  return {
    columns: [],
    rows: [],
    tag: "",
    error: {
      sqlstate: typeof code === "string" ? code : "connection",
      message: error instanceof Error ? error.message : String(error),
      hint: typeof hint === "string" && hint !== "" ? hint : undefined,
    },
  };
}

/**
 * A raw protocol connection answering through Parse/Bind(result format 1 for every column)/
 * Describe/Execute/Sync. Column headers keep name, type OID, type modifier, size and format;
 * rows keep every value's bytes, so the comparison is byte for byte.
 */
export class BinarySession {
  private constructor(private readonly client: RawClient) {}

  static async open(target: Endpoint): Promise<BinarySession> {
    return new BinarySession(await RawClient.connect({ ...target, timeoutMs: 30_000 }));
  }

  async answer(statement: FidelityStatement): Promise<Answer> {
    try {
      return await this.exchange(statement);
    } catch (error) {
      // No SQLSTATE: the connection broke or went silent; the caller opens a new one.
      return errorAnswer(error);
    }
  }

  private async exchange(statement: FidelityStatement): Promise<Answer> {
    const params = (statement.params ?? []).map((value) =>
      value === null ? null : Buffer.from(value, "utf8"),
    );
    this.client.send(
      Buffer.concat([
        encodeParse({ name: "", sql: statement.sql, paramTypes: [] }),
        encodeBind({ portal: "", statement: "", paramFormats: [], params, resultFormats: [1] }),
        encodeDescribe({ target: "P", name: "" }),
        encodeExecute({ portal: "", maxRows: 0 }),
        encodeSync(),
      ]),
    );
    let columns: string[] = [];
    const rows: string[] = [];
    let tag = "";
    let error: AnswerError | undefined;
    for (;;) {
      const message = await this.client.next();
      switch (message.type) {
        case "RowDescription":
          columns = message.fields.map(
            (f) => `${f.name}:${f.typeOid}:${f.typeModifier}:${f.typeSize}:${f.format}`,
          );
          break;
        case "DataRow":
          rows.push(
            message.values.map((value) => (value === null ? "NULL" : value.toString("hex"))).join(","),
          );
          break;
        case "CommandComplete":
          tag = message.tag;
          break;
        case "ErrorResponse": {
          const failure = PgError.fromFields(message.fields);
          error = { sqlstate: failure.code, message: failure.message, hint: failure.hint };
          break;
        }
        case "ReadyForQuery":
          return error === undefined ? { columns, rows, tag } : { columns, rows, tag, error };
        default:
          break;
      }
    }
  }

  async close(): Promise<void> {
    await this.client.close().catch(() => {});
  }
}
