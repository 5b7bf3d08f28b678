import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OneRegion, startOneRegion } from "./support/one-region.js";

// psql's large-object commands use the fastpath FunctionCall message (libpq's PQfn). With one
// region every statement of a session meets it on one server, so it is relayed as it is.
let region: OneRegion;
const dir = mkdtempSync(join(tmpdir(), "geo-fastpath-"));

beforeAll(async () => {
  region = await startOneRegion();
});
afterAll(() => region?.close());

const run = promisify(execFile);

/** Runs psql through the proxy (asynchronously: the proxy answers from this test's event loop). */
async function psql(command: string): Promise<string> {
  const { stdout } = await run(
    "psql",
    [
      "-X",
      "-A",
      "-t",
      "-h",
      "127.0.0.1",
      "-p",
      String(region.proxy.port),
      "-U",
      "postgres",
      "-d",
      "postgres",
      "-c",
      command,
    ],
    { encoding: "utf8", env: { ...process.env, PGSSLMODE: "disable" } },
  );
  return stdout;
}

describe("the fastpath function call interface", () => {
  it("imports, reads back and exports a large object through psql as on one server", async () => {
    const source = join(dir, "in.bin");
    const bytes = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 31) % 256));
    writeFileSync(source, bytes);
    const imported = await psql(`\\lo_import '${source}'`);
    const oid = Number(/lo_import (\d+)/.exec(imported)?.[1]);
    expect(oid).toBeGreaterThan(0);
    const client = new pg.Client({
      host: "127.0.0.1",
      port: region.proxy.port,
      user: "postgres",
      database: "postgres",
    });
    await client.connect();
    try {
      const { rows } = await client.query("SELECT lo_get($1::oid) AS data", [oid]);
      expect(Buffer.compare(rows[0].data as Buffer, bytes)).toBe(0);
    } finally {
      await client.end();
    }
    const target = join(dir, "out.bin");
    await psql(`\\lo_export ${oid} '${target}'`);
    expect(Buffer.compare(readFileSync(target), bytes)).toBe(0);
    await psql(`\\lo_unlink ${oid}`);
    expect((await psql(`SELECT count(*) FROM pg_largeobject_metadata WHERE oid = ${oid}`)).trim()).toBe("0");
  });
});
