import { connect, type Socket } from "node:net";
import {
  BackendFramer,
  type BackendMessage,
  decodeBackendMessage,
  encodeQuery,
  encodeSASLInitialResponse,
  encodeSASLResponse,
  encodeStartupMessage,
  encodeTerminate,
  isProtocolFault,
  isScramFailure,
  PgError,
  ScramClient,
  type TransactionStatus,
} from "@geo/proto";

export interface RawConnectOptions {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  /** Defaults to the user name, as PostgreSQL does. */
  readonly database?: string;
  /** Needed when the server asks for SCRAM-SHA-256. */
  readonly password?: string;
  /** Extra StartupMessage parameters (application_name, options...). */
  readonly parameters?: Readonly<Record<string, string>>;
  /** Per-message wait limit (default 10 s). */
  readonly timeoutMs?: number;
}

/** What one simple Query produced, collected up to ReadyForQuery. */
export interface RawQueryResult {
  /** Column names of the last RowDescription. */
  readonly columns: readonly string[];
  /** Rows of every statement, as text (null for NULL). */
  readonly rows: readonly (readonly (string | null)[])[];
  /** One CommandComplete tag per statement that completed. */
  readonly tags: readonly string[];
  readonly error: PgError | undefined;
  readonly status: TransactionStatus;
}

/**
 * A bare protocol 3.0 client on a raw socket, built only from @geo/proto: for tests that need to see
 * exact messages (a proxy's or the fake's), or to log in with SCRAM without any driver.
 *
 * @example
 * const client = await RawClient.connect({ host, port, user: "alice", password: "secret" });
 * const { rows } = await client.query("SELECT current_user");
 * await client.close();
 */
export class RawClient {
  /** ParameterStatus values received so far. */
  readonly parameters: Record<string, string> = {};
  processId = 0;
  secretKey: Buffer = Buffer.alloc(0);
  /** "trust" when the server sent AuthenticationOk straight away. */
  authMethod: "trust" | "scram-sha-256" = "trust";
  /** True when SCRAM ran and the server proved it holds the verifier. */
  serverVerified = false;
  private readonly framer = new BackendFramer();
  private readonly inbox: BackendMessage[] = [];
  private waiter: ((message: BackendMessage | Error) => void) | undefined;
  private ended: Error | undefined;

  private constructor(
    private readonly socket: Socket,
    private readonly timeoutMs: number,
  ) {
    socket.setNoDelay(true);
    socket.on("data", (chunk: Buffer) => this.receive(chunk));
    socket.on("error", (error) => this.end(error));
    socket.on("close", () => this.end(new Error("connection closed by the server")));
  }

  /** Connects, authenticates (trust or SCRAM-SHA-256) and waits for the first ReadyForQuery. */
  static async connect(options: RawConnectOptions): Promise<RawClient> {
    const socket = connect(options.port, options.host);
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", resolve);
      socket.once("error", reject);
    });
    const client = new RawClient(socket, options.timeoutMs ?? 10_000);
    try {
      await client.startup(options);
    } catch (error) {
      socket.destroy();
      throw error;
    }
    return client;
  }

  get isClosed(): boolean {
    return this.ended !== undefined;
  }

  /** Sends raw bytes (any encoded message). */
  send(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  /** The next message from the server; rejects when the connection ends or nothing arrives in time. */
  next(): Promise<BackendMessage> {
    const queued = this.inbox.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    if (this.ended !== undefined) return Promise.reject(this.ended);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = undefined;
        reject(new Error(`no message from the server within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      this.waiter = (message) => {
        clearTimeout(timer);
        this.waiter = undefined;
        if (message instanceof Error) reject(message);
        else resolve(message);
      };
    });
  }

  /** Runs a simple Query and collects everything up to ReadyForQuery. */
  async query(sql: string): Promise<RawQueryResult> {
    this.send(encodeQuery({ sql }));
    return this.collect();
  }

  /** Collects the messages of one exchange up to ReadyForQuery. */
  async collect(): Promise<RawQueryResult> {
    let columns: string[] = [];
    const rows: (string | null)[][] = [];
    const tags: string[] = [];
    let error: PgError | undefined;
    for (;;) {
      const message = await this.next();
      switch (message.type) {
        case "RowDescription":
          columns = message.fields.map((field) => field.name);
          break;
        case "DataRow":
          rows.push(message.values.map((value) => (value === null ? null : value.toString("utf8"))));
          break;
        case "CommandComplete":
          tags.push(message.tag);
          break;
        case "ErrorResponse":
          error = PgError.fromFields(message.fields);
          break;
        case "ParameterStatus":
          this.parameters[message.name] = message.value;
          break;
        case "ReadyForQuery":
          return { columns, rows, tags, error, status: message.status };
        default:
          break;
      }
    }
  }

  /** Sends Terminate and closes the socket. */
  async close(): Promise<void> {
    if (this.ended !== undefined) return;
    const closed = new Promise<void>((resolve) => this.socket.once("close", () => resolve()));
    this.socket.end(encodeTerminate());
    await closed;
  }

  /** Resolves once the server has closed the connection. */
  async closedByServer(): Promise<void> {
    if (this.ended !== undefined) return;
    await new Promise<void>((resolve) => this.socket.once("close", () => resolve()));
  }

  private receive(chunk: Buffer): void {
    this.framer.push(chunk);
    for (let frame = this.framer.next(); frame !== null; frame = this.framer.next()) {
      if (isProtocolFault(frame)) {
        this.end(new Error(`unreadable bytes from the server: ${frame.message}`));
        this.socket.destroy();
        return;
      }
      const message = decodeBackendMessage(frame);
      if (isProtocolFault(message)) {
        this.end(new Error(`unreadable message from the server: ${message.message}`));
        this.socket.destroy();
        return;
      }
      // Decoded payloads are views into the chunk; the framer never rewrites them, so keeping them is safe.
      if (this.waiter !== undefined) this.waiter(message);
      else this.inbox.push(message);
    }
  }

  private end(error: Error): void {
    if (this.ended !== undefined) return;
    this.ended = error;
    this.waiter?.(error);
  }

  private async startup(options: RawConnectOptions): Promise<void> {
    this.send(
      encodeStartupMessage({
        parameters: { ...options.parameters, user: options.user, database: options.database ?? options.user },
      }),
    );
    let scram: ScramClient | undefined;
    for (;;) {
      const message = await this.next();
      switch (message.type) {
        case "AuthenticationSASL": {
          if (!message.mechanisms.includes("SCRAM-SHA-256")) {
            throw new Error(`server offers no SCRAM-SHA-256 (offers ${message.mechanisms.join(", ")})`);
          }
          if (options.password === undefined)
            throw new Error("server asks for a password and none was given");
          this.authMethod = "scram-sha-256";
          scram = new ScramClient({ password: options.password });
          this.send(encodeSASLInitialResponse({ mechanism: scram.mechanism, data: scram.clientFirst() }));
          break;
        }
        case "AuthenticationSASLContinue": {
          const final = scram?.serverFirst(message.data);
          if (final === undefined) throw new Error("SASLContinue without a SASL exchange");
          if (isScramFailure(final)) throw new Error(`SCRAM: ${final.message}`);
          this.send(encodeSASLResponse({ data: final }));
          break;
        }
        case "AuthenticationSASLFinal": {
          const failure = scram?.serverFinal(message.data);
          if (failure !== null)
            throw new Error(`SCRAM: ${failure?.message ?? "SASLFinal without a SASL exchange"}`);
          this.serverVerified = scram?.serverVerified ?? false;
          break;
        }
        case "AuthenticationOk":
          break;
        case "ParameterStatus":
          this.parameters[message.name] = message.value;
          break;
        case "BackendKeyData":
          this.processId = message.processId;
          this.secretKey = Buffer.from(message.secretKey);
          break;
        case "ErrorResponse":
          throw PgError.fromFields(message.fields);
        case "ReadyForQuery":
          return;
        case "NoticeResponse":
        case "NegotiateProtocolVersion":
          break;
        default:
          throw new Error(`unexpected ${message.type} during startup`);
      }
    }
  }
}
