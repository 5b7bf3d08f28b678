import type pg from "pg";
import { DIRECTORY_TABLE, INITIAL_BALANCE, KEYS, REGIONS } from "./bank.js";
import type { Increment, Transfer, WorkloadState, WriteOutcome } from "./workloads.js";

/** One workload's line of a scenario's result. */
export interface WorkloadResult {
  readonly attempted: number;
  readonly committed: number;
  readonly failed: number;
  readonly unknown: number;
  /** Writes the client saw commit that are missing (on a side, for a transfer). */
  readonly lost: number;
  /**
   * Writes applied that should not be, or applied in part: told failed and present, unknown and
   * on one side only, a counter that is not its increments' count, a key's rows in two regions or
   * none, money made or destroyed, a write stopped at a known point that ended the other way.
   */
  readonly wrong: number;
  /** The longest time any key went without a successful write of this workload, in ms. */
  readonly maxUnavailableMs: number;
  /** The key it was. */
  readonly worstKey: string | null;
  /** The same, for every key that had a write of this workload, in key order. */
  readonly unavailableByKey: Readonly<Record<string, number>>;
  /** Up to five of the lost or wrong writes, described. */
  readonly samples: readonly string[];
}

function counts<T extends { outcome: WriteOutcome }>(items: readonly T[]): Record<WriteOutcome, number> {
  const out: Record<WriteOutcome, number> = { committed: 0, failed: 0, unknown: 0 };
  for (const item of items) out[item.outcome]++;
  return out;
}

function worst(longest: Map<string, number>): { ms: number; key: string | null } {
  let ms = 0;
  let key: string | null = null;
  for (const [k, v] of longest) {
    if (v > ms) {
      ms = v;
      key = k;
    }
  }
  return { ms, key };
}

/** Reads every region directly and grades both workloads. `direct` is one client per region. */
export async function checkWorkloads(
  direct: readonly pg.Client[],
  state: WorkloadState,
  stoppedAt: number,
): Promise<{ keyed: WorkloadResult; transfers: WorkloadResult }> {
  const transferSides = new Map<string, Set<string>>();
  const incrementsFound = new Set<string>();
  const incrementCount = new Map<string, number>();
  const counter = new Map<string, number>();
  const accountHomes = new Map<string, number>();
  const counterHomes = new Map<string, number>();
  const counterRegion = new Map<string, string>();
  const directoryEntries: { region: string; key: string; names: string }[] = [];
  let totalAfter = 0;
  let unbalanced = 0;
  for (const [index, client] of direct.entries()) {
    const transfers = await client.query<{ tenant_id: string; id: string }>(
      "SELECT tenant_id, id FROM transfers",
    );
    for (const row of transfers.rows) {
      const sides = transferSides.get(row.id) ?? new Set<string>();
      sides.add(row.tenant_id);
      transferSides.set(row.id, sides);
    }
    const accounts = await client.query<{ tenant_id: string; balance: string; moved: string }>(
      `SELECT a.tenant_id, a.balance, coalesce((SELECT sum(t.amount) FROM transfers t WHERE t.tenant_id = a.tenant_id), 0) AS moved
         FROM accounts a`,
    );
    for (const row of accounts.rows) {
      totalAfter += Number(row.balance);
      if (Number(row.balance) !== INITIAL_BALANCE + Number(row.moved)) unbalanced++;
      accountHomes.set(row.tenant_id, (accountHomes.get(row.tenant_id) ?? 0) + 1);
    }
    const counters = await client.query<{ tenant_id: string; n: string }>(
      "SELECT tenant_id, n FROM counters",
    );
    for (const row of counters.rows) {
      counter.set(row.tenant_id, (counter.get(row.tenant_id) ?? 0) + Number(row.n));
      counterHomes.set(row.tenant_id, (counterHomes.get(row.tenant_id) ?? 0) + 1);
      counterRegion.set(row.tenant_id, REGIONS[index]!);
    }
    const entries = await client.query<{ key: string; region: string }>(
      `SELECT key, region FROM ${DIRECTORY_TABLE}`,
    );
    for (const row of entries.rows)
      directoryEntries.push({ region: REGIONS[index]!, key: row.key, names: row.region });
    const increments = await client.query<{ tenant_id: string; id: string }>(
      "SELECT tenant_id, id FROM increments",
    );
    for (const row of increments.rows) {
      incrementsFound.add(row.id);
      incrementCount.set(row.tenant_id, (incrementCount.get(row.tenant_id) ?? 0) + 1);
    }
  }

  const keyedSamples: string[] = [];
  let keyedLost = 0;
  let keyedWrong = 0;
  const noteIncrement = (increment: Increment, what: string): void => {
    if (keyedSamples.length < 5)
      keyedSamples.push(
        `increment ${increment.id} of ${increment.key}: told ${increment.outcome}${increment.error === undefined ? "" : ` (${increment.error})`}, ${what}`,
      );
  };
  for (const increment of state.increments) {
    const found = incrementsFound.has(increment.id);
    if (increment.outcome === "committed" && !found) {
      keyedLost++;
      noteIncrement(increment, "missing");
    } else if (increment.outcome === "failed" && found) {
      keyedWrong++;
      noteIncrement(increment, "applied");
    }
  }
  for (const { key } of KEYS) {
    const n = counter.get(key) ?? 0;
    const recorded = incrementCount.get(key) ?? 0;
    if (n !== recorded) {
      keyedWrong++;
      if (keyedSamples.length < 5)
        keyedSamples.push(`counter ${key} is ${n} with ${recorded} increments recorded`);
    }
    if ((counterHomes.get(key) ?? 0) !== 1) {
      keyedWrong++;
      if (keyedSamples.length < 5)
        keyedSamples.push(`counter ${key} is in ${counterHomes.get(key) ?? 0} regions`);
    }
  }

  // Every region's directory names the region that holds the key's rows (moves change both at once).
  for (const entry of directoryEntries) {
    const holder = counterRegion.get(entry.key);
    if (holder !== undefined && holder !== entry.names) {
      keyedWrong++;
      if (keyedSamples.length < 5)
        keyedSamples.push(
          `${entry.region}'s directory puts ${entry.key} in ${entry.names}; its rows are in ${holder}`,
        );
    }
  }

  const transferSamples: string[] = [];
  let transfersLost = 0;
  let transfersWrong = 0;
  const noteTransfer = (transfer: Transfer, sides: Set<string>, what: string): void => {
    if (transferSamples.length < 5)
      transferSamples.push(
        `transfer ${transfer.id} ${transfer.from}->${transfer.to}: told ${transfer.outcome}${transfer.error === undefined ? "" : ` (${transfer.error})`}, found on [${[...sides].join(", ")}]${what === "" ? "" : `, ${what}`}`,
      );
  };
  for (const transfer of state.transfers) {
    const sides = transferSides.get(transfer.id) ?? new Set<string>();
    const both = sides.has(transfer.from) && sides.has(transfer.to);
    if (transfer.outcome === "committed" && !both) {
      transfersLost++;
      noteTransfer(transfer, sides, "");
    } else if (transfer.outcome === "failed" && sides.size > 0) {
      transfersWrong++;
      noteTransfer(transfer, sides, "");
    } else if (transfer.outcome === "unknown" && sides.size > 0 && !both) {
      transfersWrong++;
      noteTransfer(transfer, sides, "half applied");
    } else if (transfer.expect === "both" && !both) {
      transfersWrong++;
      noteTransfer(transfer, sides, "expected on both sides");
    } else if (transfer.expect === "neither" && sides.size > 0) {
      transfersWrong++;
      noteTransfer(transfer, sides, "expected on neither side");
    }
  }
  const totalBefore = KEYS.length * INITIAL_BALANCE;
  if (totalAfter !== totalBefore) {
    transfersWrong++;
    transferSamples.push(`total balance ${totalBefore} -> ${totalAfter}`);
  }
  if (unbalanced > 0) {
    transfersWrong += unbalanced;
    transferSamples.push(`${unbalanced} accounts do not equal their opening balance plus their transfers`);
  }
  for (const { key } of KEYS) {
    if ((accountHomes.get(key) ?? 0) !== 1) {
      transfersWrong++;
      transferSamples.push(`account ${key} is in ${accountHomes.get(key) ?? 0} regions`);
    }
  }

  const keyedLongest = state.keyedAvailability.close(stoppedAt);
  const transferLongest = state.transferAvailability.close(stoppedAt);
  const keyedWorst = worst(keyedLongest);
  const transferWorst = worst(transferLongest);
  const byKey = (longest: Map<string, number>): Record<string, number> =>
    Object.fromEntries(KEYS.filter(({ key }) => longest.has(key)).map(({ key }) => [key, longest.get(key)!]));
  const keyedCounts = counts(state.increments);
  const transferCounts = counts(state.transfers);
  return {
    keyed: {
      attempted: state.increments.length,
      ...keyedCounts,
      lost: keyedLost,
      wrong: keyedWrong,
      maxUnavailableMs: keyedWorst.ms,
      worstKey: keyedWorst.key,
      unavailableByKey: byKey(keyedLongest),
      samples: keyedSamples,
    },
    transfers: {
      attempted: state.transfers.length,
      ...transferCounts,
      lost: transfersLost,
      wrong: transfersWrong,
      maxUnavailableMs: transferWorst.ms,
      worstKey: transferWorst.key,
      unavailableByKey: byKey(transferLongest),
      samples: transferSamples.slice(0, 5),
    },
  };
}

export async function countPrepared(clients: readonly pg.Client[]): Promise<number> {
  let total = 0;
  for (const client of clients) {
    const result = await client.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_prepared_xacts");
    total += result.rows[0]?.n ?? 0;
  }
  return total;
}
