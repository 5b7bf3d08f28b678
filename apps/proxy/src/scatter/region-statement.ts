import {
  BackendCode,
  decodeCommandComplete,
  decodeParameterDescription,
  decodeRowDescription,
  encodeBind,
  encodeDescribe,
  encodeExecute,
  encodeParse,
  type FieldDescription,
  type FormatCode,
  isProtocolFault,
  Messages,
  type PgError,
} from "@geo/proto";
import { regionOutOfOrder } from "./errors.js";
import { errorOf, type Message, type RegionChannel } from "./region-channel.js";
import { StaleShape } from "./stale-shape.js";

/** The client's bound parameters, passed to every statement of the scatter as they were bound. */
export interface BoundParams {
  /** Parameter types PostgreSQL settled for the client's statement (its ParameterDescription). */
  readonly types: readonly number[];
  readonly formats: readonly FormatCode[];
  readonly values: readonly (Buffer | null)[];
}

export const NO_PARAMS: BoundParams = { types: [], formats: [], values: [] };

/** What Describe says about a statement: its parameter types and its columns (null: no rows). */
export interface StatementShape {
  readonly paramTypes: readonly number[];
  readonly fields: readonly FieldDescription[] | null;
}

/** Reads up to the ReadyForQuery of the channel's Syncs, then throws `error`. */
async function failAfterSync(channel: RegionChannel, error: PgError, synced: boolean): Promise<never> {
  if (!synced) channel.sync(Messages.sync);
  await channel.settle();
  throw error;
}

/**
 * Parse + Describe + Sync: the parameter types and row shape PostgreSQL gives `sql` there. Run on
 * the client's own statement it is the RowDescription one PostgreSQL would send.
 */
export async function describeStatement(
  channel: RegionChannel,
  sql: string,
  paramTypes: readonly number[],
): Promise<StatementShape> {
  channel.write([
    encodeParse({ name: "", sql, paramTypes: [...paramTypes] }),
    encodeDescribe({ target: "S", name: "" }),
  ]);
  channel.sync(Messages.sync);
  let types: readonly number[] = [];
  let fields: readonly FieldDescription[] | null = null;
  let error: PgError | null = null;
  while (channel.syncsPending > 0) {
    const message = await channel.next();
    switch (message.code) {
      case BackendCode.ErrorResponse:
        error ??= errorOf(message);
        break;
      case BackendCode.ParameterDescription: {
        const decoded = decodeParameterDescription(message.payload);
        if (!isProtocolFault(decoded)) types = decoded.typeOids;
        break;
      }
      case BackendCode.RowDescription: {
        const decoded = decodeRowDescription(message.payload);
        if (!isProtocolFault(decoded)) fields = decoded.fields;
        break;
      }
      default:
        break;
    }
  }
  if (error !== null) throw error;
  return { paramTypes: types, fields };
}

/**
 * One statement running in one region: Parse, Bind (the client's parameters, the formats asked
 * for), Execute, then Sync when it is the region's last. Rows are read one at a time, so the
 * channel's backpressure reaches the backend.
 */
export class RegionRows {
  private ended = false;
  rows = 0;

  private constructor(
    readonly channel: RegionChannel,
    readonly fields: readonly FieldDescription[],
    private readonly synced: boolean,
  ) {}

  static async start(
    channel: RegionChannel,
    sql: string,
    params: BoundParams,
    formats: readonly FormatCode[],
    last: boolean,
    /** The column types a cached description promised: a region answering others is stale. */
    expected?: readonly FieldDescription[] | null,
  ): Promise<RegionRows> {
    const messages = [
      encodeParse({ name: "", sql, paramTypes: [...params.types] }),
      encodeBind({
        portal: "",
        statement: "",
        paramFormats: [...params.formats],
        params: [...params.values],
        resultFormats: [...formats],
      }),
      encodeDescribe({ target: "P", name: "" }),
      encodeExecute({ portal: "", maxRows: 0 }),
    ];
    channel.write(messages);
    if (last) channel.sync(Messages.sync);
    else channel.write(Messages.flush);
    let fields: readonly FieldDescription[] | null = null;
    for (;;) {
      const message = await channel.next();
      switch (message.code) {
        case BackendCode.ParseComplete:
        case BackendCode.BindComplete:
          continue;
        case BackendCode.RowDescription: {
          const decoded = decodeRowDescription(message.payload);
          if (isProtocolFault(decoded))
            return failAfterSync(channel, regionOutOfOrder(channel.region, "a bad RowDescription"), last);
          fields = decoded.fields;
          const rows = new RegionRows(channel, fields, last);
          if (expected != null && !sameTypes(expected, fields)) {
            await rows.drain();
            throw new StaleShape(channel.region);
          }
          return rows;
        }
        case BackendCode.NoData:
          return failAfterSync(channel, regionOutOfOrder(channel.region, "NoData for a query"), last);
        case BackendCode.ErrorResponse:
          return failAfterSync(channel, errorOf(message), last);
        default:
          continue;
      }
    }
  }

  /** Rows (or the end) are already read from the region: `next` answers without waiting. */
  get ready(): boolean {
    return this.ended || this.channel.ready;
  }

  /** The next row's DataRow payload, or null once the region's CommandComplete arrived. */
  async next(): Promise<Buffer | null> {
    if (this.ended) return null;
    for (;;) {
      const message: Message = await this.channel.next();
      switch (message.code) {
        case BackendCode.DataRow:
          this.rows++;
          return message.payload;
        case BackendCode.CommandComplete:
        case BackendCode.EmptyQueryResponse:
        case BackendCode.PortalSuspended: {
          this.ended = true;
          if (message.code === BackendCode.CommandComplete) decodeCommandComplete(message.payload);
          if (this.synced) await this.channel.settle();
          return null;
        }
        case BackendCode.ErrorResponse:
          this.ended = true;
          return failAfterSync(this.channel, errorOf(message), this.synced);
        default:
          continue;
      }
    }
  }

  /** Reads and drops the rows left (they were described with stale column types). */
  async drain(): Promise<void> {
    let row = await this.next();
    while (row !== null) row = await this.next();
  }
}

function sameTypes(a: readonly FieldDescription[], b: readonly FieldDescription[]): boolean {
  return a.length === b.length && a.every((field, i) => field.typeOid === b[i]!.typeOid);
}
