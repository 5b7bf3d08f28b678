import type { LimitSpec, RowCount } from "@geo/sql";
import { invalidLimitParam, unreadableLimitParam } from "./errors.js";
import type { BoundParams } from "./region-statement.js";

/** LIMIT/OFFSET applied once by the proxy over the regions' rows. `count` null: no limit. */
export interface LimitWindow {
  readonly offset: number;
  readonly count: number | null;
}

export const NO_LIMIT: LimitWindow = { offset: 0, count: null };

function resolve(count: RowCount | undefined, params: BoundParams): number | null {
  if (count === undefined) return null;
  if (count.kind === "constant") return count.value;
  const index = count.index - 1;
  const value = params.values[index] ?? null;
  if (value === null) return null;
  if ((params.formats[index] ?? 0) === 0) {
    const text = value.toString("utf8").trim();
    const parsed = Number(text);
    if (!Number.isFinite(parsed)) {
      throw invalidLimitParam(text);
    }
    return Math.trunc(parsed);
  }
  switch (value.length) {
    case 2:
      return value.readInt16BE(0);
    case 4:
      return value.readInt32BE(0);
    case 8:
      return Number(value.readBigInt64BE(0));
    default:
      throw unreadableLimitParam(count.index, params.types[index] ?? 0);
  }
}

/**
 * The window a statement's LIMIT/OFFSET cuts. The regions already refused negative values (each
 * ran `LIMIT count + offset` with the same parameters), so only NULL (no limit, no offset) needs care.
 */
export function limitWindow(spec: LimitSpec | undefined, params: BoundParams): LimitWindow {
  if (spec === undefined) return NO_LIMIT;
  const offset = resolve(spec.offset, params) ?? 0;
  const count = resolve(spec.count, params);
  return { offset: Math.max(0, offset), count: count === null ? null : Math.max(0, count) };
}
