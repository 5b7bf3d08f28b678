import { encodeCommandComplete, encodeRowDescription, type FieldDescription, Messages } from "@geo/proto";
import type { SessionPort } from "../engine/session-port.js";
import { dataRowFrame } from "./data-row.js";
import type { RowSource } from "./row-source.js";

/** Rows are written to the client in chunks of about this many bytes. */
const CHUNK_BYTES = 64 * 1024;

export function rowDescriptionFrame(fields: readonly FieldDescription[] | null): Buffer {
  return fields === null ? Messages.noData : encodeRowDescription({ fields: [...fields] });
}

export type SendOutcome =
  | { readonly kind: "complete"; readonly rows: number }
  | { readonly kind: "suspended"; readonly rows: number };

/**
 * Sends rows to the client in order, waiting whenever its socket is full (so the regions wait
 * too), and ends with CommandComplete (`SELECT n`, n the rows this call sent, as PostgreSQL counts
 * an Execute) or, when `maxRows` rows went out, with PortalSuspended. Throws what the source
 * throws, after the rows sent so far.
 */
export async function sendRows(
  session: SessionPort,
  source: RowSource,
  maxRows: number,
): Promise<SendOutcome> {
  let chunk: Buffer[] = [];
  let chunkBytes = 0;
  let sent = 0;
  const flush = async (): Promise<void> => {
    if (chunk.length === 0) return;
    session.relay.local({ bytes: chunk.length === 1 ? chunk[0]! : Buffer.concat(chunk, chunkBytes) });
    chunk = [];
    chunkBytes = 0;
    if (session.writer.socket.writableNeedDrain) {
      await new Promise<void>((resolve) => session.writer.onDrain(resolve));
    }
  };
  try {
    for (;;) {
      if (maxRows > 0 && sent >= maxRows) {
        await flush();
        session.relay.local({ bytes: Messages.portalSuspended });
        return { kind: "suspended", rows: sent };
      }
      const row = await source.next();
      if (row === null) break;
      const frame = dataRowFrame(row);
      chunk.push(frame);
      chunkBytes += frame.length;
      sent++;
      if (chunkBytes >= CHUNK_BYTES) await flush();
    }
  } finally {
    await flush();
  }
  session.relay.local({ bytes: encodeCommandComplete({ tag: `SELECT ${sent}` }) });
  return { kind: "complete", rows: sent };
}
