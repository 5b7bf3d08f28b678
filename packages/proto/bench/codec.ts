/**
 * Framing + decoding throughput over a DataRow-heavy server stream, as a proxy sees it: the
 * stream arrives in 64 KiB socket-sized chunks, is cut into frames, and each DataRow is either
 * walked column by column without allocation (the routing path) or fully decoded.
 *
 * A last line measures the other direction: a client's Bind/Execute/Sync stream framed and each
 * Bind indexed with BindView to read its first parameter (what routing by key does).
 *
 *   pnpm run bench            (or: pnpm exec tsx bench/codec.ts [megabytes] [runs])
 *
 * Prints figures; asserts nothing.
 */
import {
  BackendCode,
  BackendFramer,
  BindView,
  DataRowCursor,
  decodeBackendMessage,
  encodeBind,
  encodeCommandComplete,
  encodeDataRow,
  encodeExecute,
  encodeReadyForQuery,
  encodeRowDescription,
  type Frame,
  FrontendCode,
  FrontendFramer,
  isProtocolFault,
  Messages,
  type ProtocolFault,
} from "../src/index.js";

const megabytes = Number(process.argv[2] ?? 64);
const runs = Number(process.argv[3] ?? 5);
const CHUNK = 64 * 1024;

function buildStream(targetBytes: number): { stream: Buffer; messages: number } {
  const parts: Buffer[] = [
    encodeRowDescription({
      fields: ["id", "email", "created_at", "balance", "note"].map((name, i) => ({
        name,
        tableOid: 16384,
        columnAttr: i + 1,
        typeOid: [20, 25, 1184, 1700, 25][i]!,
        typeSize: [8, -1, 8, -1, -1][i]!,
        typeModifier: -1,
        format: 0 as const,
      })),
    }),
  ];
  let size = parts[0]!.length;
  let id = 0;
  while (size < targetBytes) {
    id++;
    const row = encodeDataRow({
      values: [
        Buffer.from(String(id)),
        Buffer.from(`user${id}@example.com`),
        Buffer.from("2026-11-30 09:00:00.123456+00"),
        Buffer.from(`${id % 100000}.${id % 100}`),
        id % 3 === 0 ? null : Buffer.from("a short note"),
      ],
    });
    parts.push(row);
    size += row.length;
  }
  parts.push(encodeCommandComplete({ tag: `SELECT ${id}` }), encodeReadyForQuery({ status: "I" }));
  return { stream: Buffer.concat(parts), messages: id + 3 };
}

function chunksOf(stream: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < stream.length; at += CHUNK) out.push(stream.subarray(at, at + CHUNK));
  return out;
}

type Mode = "frame (bytes view)" | "frame + DataRow cursor" | "frame + full decode";

function run(chunks: Buffer[], mode: Mode): { ms: number; messages: number; checksum: number } {
  const framer = new BackendFramer();
  const cursor = new DataRowCursor();
  let messages = 0;
  let checksum = 0;
  const started = process.hrtime.bigint();
  for (const chunk of chunks) {
    framer.push(chunk);
    for (let item: Frame | ProtocolFault | null = framer.next(); item !== null; item = framer.next()) {
      if (isProtocolFault(item)) throw new Error(item.message);
      messages++;
      if (mode === "frame (bytes view)") {
        checksum += item.bytes.length;
      } else if (mode === "frame + DataRow cursor") {
        if (item.code === BackendCode.DataRow) {
          cursor.reset(item.payload);
          while (cursor.next()) checksum += cursor.length;
        }
      } else {
        const decoded = decodeBackendMessage(item);
        if (isProtocolFault(decoded)) throw new Error(decoded.message);
        if (decoded.type === "DataRow") checksum += decoded.values.length;
      }
    }
  }
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  return { ms, messages, checksum };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

const { stream, messages } = buildStream(megabytes * 1024 * 1024);
const chunks = chunksOf(stream);
const mb = stream.length / (1024 * 1024);
console.log(
  `@geo/proto codec benchmark: ${mb.toFixed(1)} MiB, ${messages.toLocaleString("en-US")} messages ` +
    `(DataRows of 5 columns, ${(stream.length / messages).toFixed(0)} B each), ${CHUNK / 1024} KiB chunks, ` +
    `median of ${runs} runs, Node ${process.version}`,
);
for (const mode of ["frame (bytes view)", "frame + DataRow cursor", "frame + full decode"] as const) {
  run(chunks, mode);
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const result = run(chunks, mode);
    if (result.messages !== messages) throw new Error(`framed ${result.messages} of ${messages} messages`);
    times.push(result.ms);
  }
  const ms = median(times);
  const mbPerS = mb / (ms / 1000);
  const msgPerS = messages / (ms / 1000);
  console.log(
    `${mode.padEnd(24)} ${mbPerS.toFixed(0).padStart(6)} MiB/s ${(msgPerS / 1e6).toFixed(2).padStart(6)} M msg/s  (${ms.toFixed(0)} ms)`,
  );
}

function buildClientStream(targetBytes: number): { stream: Buffer; messages: number } {
  const parts: Buffer[] = [];
  let size = 0;
  let messages = 0;
  for (let id = 1; size < targetBytes; id++) {
    const batch = Buffer.concat([
      encodeBind({
        portal: "",
        statement: "get_user",
        paramFormats: [],
        params: [Buffer.from(`user-${id}`), Buffer.from(String(id % 1000))],
        resultFormats: [1],
      }),
      encodeExecute({ portal: "", maxRows: 0 }),
      Messages.sync,
    ]);
    parts.push(batch);
    size += batch.length;
    messages += 3;
  }
  return { stream: Buffer.concat(parts), messages };
}

const client = buildClientStream(megabytes * 1024 * 1024);
const clientChunks = chunksOf(client.stream);
const clientMb = client.stream.length / (1024 * 1024);
const clientTimes: number[] = [];
for (let i = 0; i <= runs; i++) {
  const framer = new FrontendFramer();
  framer.markAuthenticated();
  let count = 0;
  let keyBytes = 0;
  const started = process.hrtime.bigint();
  for (const chunk of clientChunks) {
    framer.push(chunk);
    for (let item = framer.next(); item !== null; item = framer.next()) {
      if (isProtocolFault(item)) throw new Error(item.message);
      count++;
      if (item.code === FrontendCode.Bind) {
        const view = BindView.from(item.payload);
        if (isProtocolFault(view)) throw new Error(view.message);
        keyBytes += view.length(0);
      }
    }
  }
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (count !== client.messages || keyBytes === 0) throw new Error(`framed ${count} of ${client.messages}`);
  if (i > 0) clientTimes.push(ms);
}
const clientMs = median(clientTimes);
console.log(
  `${"client Bind + BindView".padEnd(24)} ${(clientMb / (clientMs / 1000)).toFixed(0).padStart(6)} MiB/s ${(
    client.messages /
    (clientMs / 1000) /
    1e6
  )
    .toFixed(2)
    .padStart(
      6,
    )} M msg/s  (${clientMs.toFixed(0)} ms, ${(client.stream.length / client.messages).toFixed(0)} B/msg)`,
);
