import { type BackendMessage, PgError } from "@geo/proto";
import { RawClient } from "@geo/testkit";

/** One backend message as a comparable line: its type and what a client reads from it. */
export function describeMessage(message: BackendMessage): string {
  switch (message.type) {
    case "ErrorResponse":
    case "NoticeResponse": {
      const error = PgError.fromFields(message.fields);
      return `${message.type} ${error.code}`;
    }
    case "CommandComplete":
      return `CommandComplete ${message.tag}`;
    case "DataRow":
      return `DataRow ${JSON.stringify(message.values.map((v) => (v === null ? null : v.toString("utf8"))))}`;
    case "RowDescription":
      return `RowDescription ${message.fields.map((f) => `${f.name}:${f.typeOid}`).join(",")}`;
    case "ParameterDescription":
      return `ParameterDescription ${message.typeOids.join(",")}`;
    case "ReadyForQuery":
      return `ReadyForQuery ${message.status}`;
    case "CopyData":
      return `CopyData ${JSON.stringify(message.data.toString("utf8"))}`;
    case "ParameterStatus":
      return `ParameterStatus ${message.name}=${message.value}`;
    default:
      return message.type;
  }
}

/** Sends `bytes` and reads messages until `readies` ReadyForQuery have arrived. */
export async function exchange(client: RawClient, bytes: Buffer, readies = 1): Promise<string[]> {
  client.send(bytes);
  const lines: string[] = [];
  while (readies > 0) {
    let message: BackendMessage;
    try {
      message = await client.next();
    } catch (error) {
      // A hang or a close is part of the answer: the other side's lines show what was expected.
      lines.push(`(${(error as Error).message})`);
      return lines;
    }
    lines.push(describeMessage(message));
    if (message.type === "ReadyForQuery") readies--;
  }
  return lines;
}

export interface SideBySide {
  readonly direct: RawClient;
  readonly proxied: RawClient;
  /** The same exchange both ways: returns [direct, proxied] message lines. */
  both(bytes: Buffer, readies?: number): Promise<[string[], string[]]>;
  close(): Promise<void>;
}

/**
 * A raw client straight to the server and another through the proxy, same user and database
 * (or, with `directDatabase`, the server's database holding every row of a multi-region world).
 */
export async function sideBySide(
  server: { host: string; port: number },
  proxyPort: number,
  options: {
    user?: string;
    database?: string;
    directDatabase?: string;
    parameters?: Record<string, string>;
  } = {},
): Promise<SideBySide> {
  const common = {
    user: options.user ?? "postgres",
    database: options.database ?? "postgres",
    timeoutMs: 5_000,
    ...(options.parameters === undefined ? {} : { parameters: options.parameters }),
  };
  const direct = await RawClient.connect({
    host: server.host,
    port: server.port,
    ...common,
    database: options.directDatabase ?? common.database,
  });
  const proxied = await RawClient.connect({ host: "127.0.0.1", port: proxyPort, ...common });
  return {
    direct,
    proxied,
    async both(bytes, readies = 1) {
      const a = await exchange(direct, bytes, readies);
      const b = await exchange(proxied, bytes, readies);
      return [a, b];
    },
    async close() {
      await Promise.all([direct.close(), proxied.close()]);
    },
  };
}
