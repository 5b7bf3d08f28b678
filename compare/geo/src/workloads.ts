import type pg from "pg";
import { HOME, regionKey } from "./geo-world.js";

/** What a workload needs to pick its keys. */
export interface WorkloadContext {
  readonly keysPerRegion: number;
  /** The region a "remote" read goes to, and the one a two-region transaction writes besides home. */
  readonly remoteRegion: string;
  /** The region the count's farthest leg goes to (for the description only). */
  readonly regions: readonly string[];
  /** Unique per run and target, so a new key is new every time. */
  readonly newKeyPrefix: string;
  readonly protocol: Protocol;
}

/** How statements travel: bound parameters (Parse/Bind/Execute, what drivers send) or literals in one Query. */
export const PROTOCOLS = ["extended", "simple"] as const;
export type Protocol = (typeof PROTOCOLS)[number];

function literal(value: string | number): string {
  return typeof value === "number" ? String(value) : `'${value.replaceAll("'", "''")}'`;
}

/** Sends one statement in the context's protocol; in simple mode each $n becomes its value's literal. */
async function send(
  client: pg.Client,
  context: WorkloadContext,
  text: string,
  values: readonly (string | number)[] = [],
): Promise<void> {
  if (context.protocol === "simple") {
    await client.query(text.replace(/\$(\d+)/g, (_, n: string) => literal(values[Number(n) - 1]!)));
  } else {
    // queryMode: node-postgres sends a statement without parameters as a simple Query unless told.
    await client.query({ text, values: [...values], queryMode: "extended" } as pg.QueryConfig);
  }
}

export interface Workload {
  readonly id: string;
  readonly title: (context: WorkloadContext) => string;
  /** One measured operation; `i` varies the key and row. */
  readonly run: (client: pg.Client, i: number, context: WorkloadContext) => Promise<void>;
}

const key = (region: string, i: number, context: WorkloadContext) =>
  regionKey(region, i % context.keysPerRegion);
const row = (i: number) => (i % 10) + 1;

const READ = "SELECT balance FROM accounts WHERE tenant_id = $1 AND id = $2";
const WRITE = "UPDATE accounts SET balance = balance + 1 WHERE tenant_id = $1 AND id = $2";

/** The workloads, in report order. Keys travel as bound parameters, or as literals with the simple protocol. */
export const WORKLOADS: readonly Workload[] = [
  {
    id: "home-read",
    title: () => `read a key at home (${HOME})`,
    run: async (client, i, context) => {
      await send(client, context, READ, [key(HOME, i, context), row(i)]);
    },
  },
  {
    id: "home-write",
    title: () => `write a key at home (${HOME})`,
    run: async (client, i, context) => {
      await send(client, context, WRITE, [key(HOME, i, context), row(i)]);
    },
  },
  {
    id: "remote-read",
    title: (context) => `read a key in ${context.remoteRegion}`,
    run: async (client, i, context) => {
      await send(client, context, READ, [key(context.remoteRegion, i, context), row(i)]);
    },
  },
  {
    id: "count-all",
    title: (context) => `count over every region (${context.regions.length})`,
    run: async (client, _i, context) => {
      await send(client, context, "SELECT count(*) FROM accounts");
    },
  },
  {
    id: "two-region-tx",
    title: (context) => `transaction writing ${HOME} and ${context.remoteRegion}`,
    run: async (client, i, context) => {
      await client.query("BEGIN");
      try {
        await send(client, context, WRITE, [key(HOME, i, context), row(i)]);
        await send(client, context, WRITE, [key(context.remoteRegion, i, context), row(i)]);
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK").catch(() => {});
        throw error;
      }
    },
  },
  {
    id: "new-key-write",
    title: () => "first write of a new key",
    run: async (client, i, context) => {
      await send(client, context, "INSERT INTO accounts (tenant_id, id, balance) VALUES ($1, 1, 0)", [
        `${context.newKeyPrefix}-${i}`,
      ]);
    },
  },
];
