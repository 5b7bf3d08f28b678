/**
 * What a guard costs per written row: pgbench single-row updates on a geo-partitioned table,
 * with and without the guard trigger, in interleaved rounds with a VACUUM before each.
 *
 *   pnpm exec tsx bench/guard.ts            (ROUNDS=3 SECONDS=5 to change the run)
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startCluster } from "@geo/testkit";
import pg from "pg";
import { DirectoryTable } from "../src/directory/directory-table.js";
import { dropGuardSql, guardFunctionSql, guardTriggerSql } from "../src/directory/guard-sql.js";

const ROUNDS = Number(process.env["ROUNDS"] ?? 3);
const SECONDS = Number(process.env["SECONDS"] ?? 5);
const KEYS = 1000;
const PGBENCH = "/usr/lib/postgresql/15/bin/pgbench";

const cluster = await startCluster({ count: 1 });
const server = cluster.servers[0]!;
const client = new pg.Client({
  host: server.host,
  port: server.port,
  user: "postgres",
  database: "postgres",
});
await client.connect();
const directory = new DirectoryTable("geoproxy_directory");
await client.query(`CREATE TABLE users (tenant_id text NOT NULL, id bigint NOT NULL, n bigint NOT NULL DEFAULT 0, PRIMARY KEY (tenant_id, id));
INSERT INTO users (tenant_id, id) SELECT 'k' || i, 1 FROM generate_series(1, ${KEYS}) AS i;
${directory.createSql()};
INSERT INTO geoproxy_directory (key, region) SELECT 'k' || i, 'eu-west' FROM generate_series(1, ${KEYS}) AS i;
${guardFunctionSql("geoproxy_directory", "users", "tenant_id", "eu-west")};`);

const dir = mkdtempSync(join(tmpdir(), "guard-bench-"));
const script = join(dir, "update.sql");
writeFileSync(
  script,
  `\\set k random(1, ${KEYS})\nUPDATE users SET n = n + 1 WHERE tenant_id = 'k' || :k AND id = 1;\n`,
);

function run(clients: number): number {
  const output = execFileSync(
    PGBENCH,
    [
      "-n",
      "-h",
      server.host,
      "-p",
      String(server.port),
      "-U",
      "postgres",
      "-c",
      String(clients),
      "-j",
      String(clients),
      "-T",
      String(SECONDS),
      "-f",
      script,
      "postgres",
    ],
    { encoding: "utf8" },
  );
  const match = /tps = ([\d.]+)/.exec(output);
  if (match === null) throw new Error(`pgbench said: ${output}`);
  return Number(match[1]);
}

const results: Record<string, number[]> = {};
for (const clients of [1, 4]) {
  for (let round = 0; round < ROUNDS; round++) {
    for (const guarded of [false, true]) {
      await client.query(guarded ? guardTriggerSql("users") : dropGuardSql("users"));
      await client.query("VACUUM users");
      const tps = run(clients);
      const name = `${clients} client${clients === 1 ? "" : "s"} ${guarded ? "guard" : "no guard"}`;
      const list = results[name] ?? [];
      list.push(tps);
      results[name] = list;
    }
  }
}
// Inside the server, without the network or pgbench: a PL/pgSQL loop of single-row updates.
const LOOP = 20_000;
const loopSql = `DO $$ BEGIN FOR i IN 1..${LOOP} LOOP UPDATE users SET n = n + 1 WHERE tenant_id = 'k' || (i % ${KEYS} + 1) AND id = 1; END LOOP; END $$`;
const inServer: Record<string, number[]> = { "no guard": [], guard: [] };
for (let round = 0; round < ROUNDS; round++) {
  for (const guarded of [false, true]) {
    await client.query(guarded ? guardTriggerSql("users") : dropGuardSql("users"));
    await client.query("VACUUM users");
    const started = performance.now();
    await client.query(loopSql);
    inServer[guarded ? "guard" : "no guard"]!.push(((performance.now() - started) * 1000) / LOOP);
  }
}
await client.end();
await cluster.stop();

const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
console.log(
  `guard cost, pgbench single-row UPDATE, PostgreSQL 15 over loopback, ${ROUNDS} rounds of ${SECONDS} s, median tps:`,
);
for (const clients of [1, 4]) {
  const plain = median(results[`${clients} client${clients === 1 ? "" : "s"} no guard`]!);
  const guarded = median(results[`${clients} client${clients === 1 ? "" : "s"} guard`]!);
  const perRowUs = (1e6 / guarded - 1e6 / plain) * clients;
  console.log(
    `  ${clients} client(s): ${plain.toFixed(0)} tps without, ${guarded.toFixed(0)} tps with the guard: ${((1 - guarded / plain) * 100).toFixed(1)}% fewer, about ${perRowUs.toFixed(1)} us more per written row`,
  );
}
const plainUs = median(inServer["no guard"]!);
const guardUs = median(inServer["guard"]!);
console.log(
  `  in the server (PL/pgSQL loop of ${LOOP} updates): ${plainUs.toFixed(1)} us without, ${guardUs.toFixed(1)} us with the guard: ${(guardUs - plainUs).toFixed(1)} us more per written row`,
);
