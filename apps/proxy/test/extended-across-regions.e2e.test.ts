import { encodeBind, encodeClose, encodeDescribe, encodeExecute, encodeParse, encodeSync } from "@geo/proto";
import { describe, expect, it } from "vitest";
import { referencePair } from "./support/reference-pair.js";

// Batches of Parse/Bind/Describe/Execute/Sync over statements that span regions, sent to the
// proxy and to the reference database holding every row: the answers must match message for
// message (the Sync count tells how many ReadyForQuery to read).
const world = referencePair();

const int4 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
const cases: [string, Buffer][] = [
  [
    "suspends a portal over several regions at each Execute row limit",
    Buffer.concat([
      encodeParse({
        name: "",
        sql: "SELECT tenant_id, id FROM orders ORDER BY tenant_id, id",
        paramTypes: [],
      }),
      encodeBind({ portal: "", statement: "", paramFormats: [], params: [], resultFormats: [] }),
      encodeExecute({ portal: "", maxRows: 2 }),
      encodeExecute({ portal: "", maxRows: 3 }),
      encodeSync(),
    ]),
  ],
  [
    "describes and suspends a named portal of a partial aggregate with binary results",
    Buffer.concat([
      encodeParse({ name: "s1", sql: "SELECT count(*), sum(total) FROM orders", paramTypes: [] }),
      encodeDescribe({ target: "S", name: "s1" }),
      encodeBind({ portal: "p1", statement: "s1", paramFormats: [], params: [], resultFormats: [1] }),
      encodeDescribe({ target: "P", name: "p1" }),
      encodeExecute({ portal: "p1", maxRows: 1 }),
      encodeExecute({ portal: "p1", maxRows: 1 }),
      encodeClose({ target: "S", name: "s1" }),
      encodeSync(),
    ]),
  ],
  [
    "binds a typed binary parameter of a read over every region",
    Buffer.concat([
      encodeParse({ name: "", sql: "SELECT count(*) FROM users WHERE age > $1", paramTypes: [23] }),
      encodeBind({ portal: "", statement: "", paramFormats: [1], params: [int4(30)], resultFormats: [1] }),
      encodeExecute({ portal: "", maxRows: 0 }),
      encodeSync(),
    ]),
  ],
  [
    "binds untyped binary parameters, the LIMIT count among them",
    Buffer.concat([
      encodeParse({
        name: "",
        sql: "SELECT tenant_id, id FROM users WHERE age > $1 ORDER BY 1, 2 LIMIT $2",
        paramTypes: [],
      }),
      encodeBind({
        portal: "",
        statement: "",
        paramFormats: [1],
        params: [int4(30), Buffer.from([0, 0, 0, 0, 0, 0, 0, 4])],
        resultFormats: [],
      }),
      encodeExecute({ portal: "", maxRows: 0 }),
      encodeSync(),
    ]),
  ],
  [
    "skips to Sync after an error in a pipeline of reads over every region",
    Buffer.concat([
      encodeParse({ name: "", sql: "SELECT count(*) FROM orders", paramTypes: [] }),
      encodeBind({ portal: "", statement: "", paramFormats: [], params: [], resultFormats: [] }),
      encodeExecute({ portal: "", maxRows: 0 }),
      encodeSync(),
      encodeParse({ name: "", sql: "SELECT 1/(count(*)-count(*)) FROM orders", paramTypes: [] }),
      encodeBind({ portal: "", statement: "", paramFormats: [], params: [], resultFormats: [] }),
      encodeExecute({ portal: "", maxRows: 0 }),
      encodeParse({ name: "", sql: "SELECT max(total) FROM orders", paramTypes: [] }),
      encodeBind({ portal: "", statement: "", paramFormats: [], params: [], resultFormats: [] }),
      encodeExecute({ portal: "", maxRows: 0 }),
      encodeSync(),
      encodeParse({ name: "", sql: "SELECT min(total) FROM orders", paramTypes: [] }),
      encodeBind({ portal: "", statement: "", paramFormats: [], params: [], resultFormats: [] }),
      encodeExecute({ portal: "", maxRows: 0 }),
      encodeSync(),
    ]),
  ],
  [
    "keeps the ties of a WITH TIES count bound as a parameter",
    Buffer.concat([
      encodeParse({
        name: "",
        sql: "SELECT status FROM orders ORDER BY status FETCH FIRST $1 ROWS WITH TIES",
        paramTypes: [],
      }),
      encodeBind({
        portal: "",
        statement: "",
        paramFormats: [0],
        params: [Buffer.from("2")],
        resultFormats: [],
      }),
      encodeExecute({ portal: "", maxRows: 0 }),
      encodeSync(),
    ]),
  ],
  [
    "reads its own keyed write inside one extended batch",
    Buffer.concat([
      encodeParse({ name: "", sql: "BEGIN", paramTypes: [] }),
      encodeBind({ portal: "", statement: "", paramFormats: [], params: [], resultFormats: [] }),
      encodeExecute({ portal: "", maxRows: 0 }),
      encodeParse({
        name: "",
        sql: "UPDATE orders SET total = total + 1 WHERE tenant_id = $1",
        paramTypes: [],
      }),
      encodeBind({
        portal: "",
        statement: "",
        paramFormats: [],
        params: [Buffer.from("bob")],
        resultFormats: [],
      }),
      encodeExecute({ portal: "", maxRows: 0 }),
      encodeParse({ name: "", sql: "SELECT sum(total) FROM orders", paramTypes: [] }),
      encodeBind({ portal: "", statement: "", paramFormats: [], params: [], resultFormats: [] }),
      encodeExecute({ portal: "", maxRows: 0 }),
      encodeParse({ name: "", sql: "ROLLBACK", paramTypes: [] }),
      encodeBind({ portal: "", statement: "", paramFormats: [], params: [], resultFormats: [] }),
      encodeExecute({ portal: "", maxRows: 0 }),
      encodeSync(),
    ]),
  ],
  [
    "orders a join over every region by values sent in binary",
    Buffer.concat([
      encodeParse({
        name: "",
        sql: "SELECT name, orders.created_at, total FROM users JOIN orders USING (tenant_id) WHERE users.id = orders.user_id ORDER BY total DESC, name LIMIT 5",
        paramTypes: [],
      }),
      encodeBind({ portal: "", statement: "", paramFormats: [], params: [], resultFormats: [1] }),
      encodeExecute({ portal: "", maxRows: 0 }),
      encodeSync(),
    ]),
  ],
];

describe("the extended protocol over several regions", () => {
  it.each(cases)("%s, as one PostgreSQL holding every row does", async (_name, bytes) => {
    const readies = countSyncs(bytes);
    const [direct, proxied] = await world.pair.both(bytes, readies);
    expect(proxied).toEqual(direct);
  });
});

/** The Sync messages of a batch (code 'S', length 4), counted by walking the frames. */
function countSyncs(bytes: Buffer): number {
  let syncs = 0;
  for (let at = 0; at < bytes.length; at += 1 + bytes.readInt32BE(at + 1))
    if (bytes[at] === 0x53 && bytes.readInt32BE(at + 1) === 4) syncs++;
  return syncs;
}
