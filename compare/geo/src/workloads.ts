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

/** The workloads, in report order. Every statement carries its key as a bound parameter, as drivers send it. */
export const WORKLOADS: readonly Workload[] = [
  {
    id: "home-read",
    title: () => `read a key at home (${HOME})`,
    run: async (client, i, context) => {
      await client.query(READ, [key(HOME, i, context), row(i)]);
    },
  },
  {
    id: "home-write",
    title: () => `write a key at home (${HOME})`,
    run: async (client, i, context) => {
      await client.query(WRITE, [key(HOME, i, context), row(i)]);
    },
  },
  {
    id: "remote-read",
    title: (context) => `read a key in ${context.remoteRegion}`,
    run: async (client, i, context) => {
      await client.query(READ, [key(context.remoteRegion, i, context), row(i)]);
    },
  },
  {
    id: "count-all",
    title: (context) => `count over every region (${context.regions.length})`,
    run: async (client) => {
      await client.query("SELECT count(*) FROM accounts");
    },
  },
  {
    id: "two-region-tx",
    title: (context) => `transaction writing ${HOME} and ${context.remoteRegion}`,
    run: async (client, i, context) => {
      await client.query("BEGIN");
      try {
        await client.query(WRITE, [key(HOME, i, context), row(i)]);
        await client.query(WRITE, [key(context.remoteRegion, i, context), row(i)]);
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
      await client.query("INSERT INTO accounts (tenant_id, id, balance) VALUES ($1, 1, 0)", [
        `${context.newKeyPrefix}-${i}`,
      ]);
    },
  },
];
