import { Writable } from "node:stream";
import { type DirectoryStoreConfig, MemoryDirectory } from "@geo/core";
import { PgError } from "@geo/proto";
import { describe, expect, it } from "vitest";
import type { RegionRunner, SqlRows } from "../src/directory/region-runner.js";
import { SharedDirectory } from "../src/directory/shared-directory.js";
import { createLogger } from "../src/log.js";
import { HoldRegistry } from "../src/moves/hold-registry.js";

// A shared directory's visits against a scripted authority: the order in which its answers come
// back is chosen here, which a real server cannot be made to do on cue.

const STORE: DirectoryStoreConfig = {
  shared: true,
  authority: "eu-west",
  table: "geoproxy_directory",
  pollMs: 100,
  leaseMs: 600,
  recordNewKeys: true,
  guard: true,
  holdMs: 8000,
  lockTimeoutMs: 5000,
  batch: 100,
};

interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** The authority: visits answer from a queue the test fills; every statement is kept. */
class ScriptedAuthority {
  readonly statements: string[] = [];
  readonly visits: Array<{ readonly sql: string; readonly answer: Deferred<Record<string, string>> }> = [];
  #visitAsked = deferred<void>();

  runner(): RegionRunner {
    const run = (_region: string, sql: string): Promise<SqlRows> => this.run(sql);
    return { run, runWithin: run } as unknown as RegionRunner;
  }

  /** Resolves once a visit's read has been sent and waits for its answer. */
  async visitAsked(): Promise<Deferred<Record<string, string>>> {
    await this.#visitAsked.promise;
    this.#visitAsked = deferred();
    return this.visits.at(-1)!.answer;
  }

  private async run(sql: string): Promise<SqlRows> {
    this.statements.push(sql);
    if (sql.includes("pg_current_snapshot")) {
      const answer = deferred<Record<string, string>>();
      this.visits.push({ sql, answer });
      this.#visitAsked.resolve();
      return { rows: [await answer.promise], tag: "SELECT 1" };
    }
    return { rows: [], tag: "OK" };
  }
}

/** A visit's answer: entries as [key, region] (version 0) or [key, region, version]. */
function visitAnswer(
  entries: ([string, string] | [string, string, number])[],
  xmin: string,
): Record<string, string> {
  return { snapshot: `${xmin}:${xmin}:`, entries: JSON.stringify(entries), peers: "[]", moves: "[]" };
}

function sharedDirectory(
  authority: ScriptedAuthority,
  directory: MemoryDirectory,
  holds: HoldRegistry,
  settled: () => Promise<boolean> = async () => true,
): SharedDirectory {
  return new SharedDirectory({
    store: STORE,
    node: "mover",
    home: "eu-west",
    authority: "eu-west",
    regions: ["eu-west", "us-east"],
    everyRegion: ["eu-west", "us-east"],
    runner: authority.runner(),
    directory,
    holds,
    sessions: () => 0,
    decisionLog: "file",
    settled,
    log: createLogger("silent", new Writable({ write: (_chunk, _encoding, done) => done() })),
  });
}

describe("a shared directory's visit", () => {
  it("leaves a key this proxy moved after the visit was sent, and reads it again at the next visit", async () => {
    const authority = new ScriptedAuthority();
    const directory = new MemoryDirectory([["k", "us-east"]]);
    const shared = sharedDirectory(authority, directory, new HoldRegistry());
    const first = shared.visit();
    const answer = await authority.visitAsked();
    // The move commits and points the key at eu-west while the visit's snapshot, older, is on its way.
    directory.assign("k", "eu-west");
    shared.assignedHere(["k"]);
    answer.resolve(visitAnswer([["k", "us-east", 1]], "100"));
    await first;
    expect(directory.lookup("k")).toBe("eu-west");

    const second = shared.visit();
    const again = await authority.visitAsked();
    // From snapshot 100, and the key skipped above whatever that snapshot saw.
    expect(authority.visits[1]!.sql).toContain("'100:100:'::pg_catalog.pg_snapshot");
    expect(authority.visits[1]!.sql).toMatch(/OR key = ANY\(ARRAY\[E?'k'\]/);
    again.resolve(visitAnswer([["k", "eu-west", 2]], "120"));
    await second;
    expect(directory.lookup("k")).toBe("eu-west");

    const third = shared.visit();
    (await authority.visitAsked()).resolve(visitAnswer([["k", "us-east", 3]], "130"));
    await third;
    expect(authority.visits[2]!.sql).toContain("'120:120:'::pg_catalog.pg_snapshot");
    expect(authority.visits[2]!.sql).not.toContain("OR key = ANY");
    // A later visit's entry wins again: it is newer than the local change.
    expect(directory.lookup("k")).toBe("us-east");
  });

  it("withdraws only the moves queued before the recovery pass, holds their keys until the visit after, and never waits for it", async () => {
    const authority = new ScriptedAuthority();
    const holds = new HoldRegistry();
    const pass = deferred<boolean>();
    let passes = 0;
    const shared = sharedDirectory(authority, new MemoryDirectory(), holds, () => {
      passes++;
      return pass.promise;
    });
    shared.withdrawLater("7", ["i"]);
    const held = await holds.admit({ kind: "keys", keys: ["i"] }, 30, false);
    expect(held).toBeInstanceOf(PgError);

    const visit = shared.visit();
    (await authority.visitAsked()).resolve(visitAnswer([], "5"));
    // The visit ends while the recovery pass is still running.
    await visit;
    expect(passes).toBe(1);
    // Queued after the pass began: that pass may have scanned before this move prepared.
    shared.withdrawLater("8", ["j"]);
    pass.resolve(true);
    await new Promise((resolve) => setTimeout(resolve, 10));

    const withdrawals = authority.statements.filter((sql) => sql.startsWith("DELETE FROM"));
    expect(withdrawals).toHaveLength(1);
    expect(withdrawals[0]).toContain("'7'::bigint");
    expect(withdrawals[0]).not.toContain("'8'");
    // Key i is let go by the next visit, once it has applied what the settled move committed.
    expect(await holds.admit({ kind: "keys", keys: ["i"] }, 30, false)).toBeInstanceOf(PgError);
    const next = shared.visit();
    (await authority.visitAsked()).resolve(visitAnswer([["i", "us-east"]], "6"));
    await next;
    const free = await holds.admit({ kind: "keys", keys: ["i"] }, 30, false);
    expect(free).not.toBeInstanceOf(PgError);
    expect(await holds.admit({ kind: "keys", keys: ["j"] }, 30, false)).toBeInstanceOf(PgError);
  });

  it("keeps holding its own move in doubt when a visit's snapshot predates the announcement", async () => {
    const authority = new ScriptedAuthority();
    const holds = new HoldRegistry();
    const shared = sharedDirectory(authority, new MemoryDirectory(), holds, async () => false);
    shared.withdrawLater("9", ["m"]);
    const visit = shared.visit();
    (await authority.visitAsked()).resolve(visitAnswer([], "5"));
    await visit;
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await holds.admit({ kind: "keys", keys: ["m"] }, 30, false)).toBeInstanceOf(PgError);
    expect(authority.statements.some((sql) => sql.startsWith("DELETE FROM"))).toBe(false);
  });

  it("reads the whole directory again when the authority's snapshot went back, keeps the newer entries it read before, and writes them back", async () => {
    const authority = new ScriptedAuthority();
    const directory = new MemoryDirectory();
    const shared = sharedDirectory(authority, directory, new HoldRegistry());
    const first = shared.visit();
    (await authority.visitAsked()).resolve(visitAnswer([["k", "us-east", 3]], "200"));
    await first;
    const second = shared.visit();
    // Restored from a backup, or a promoted replica that was behind: ids below the last xmin, and
    // k's last move lost there (its rows moved to us-east all the same).
    (await authority.visitAsked()).resolve(visitAnswer([], "150"));
    (await authority.visitAsked()).resolve(
      visitAnswer(
        [
          ["k", "ap-south", 1],
          ["n", "eu-west", 0],
        ],
        "150",
      ),
    );
    await second;
    expect(authority.visits[1]!.sql).toContain("'200:200:'");
    expect(authority.visits[2]!.sql).toContain("written_xid IS NOT NULL");
    expect(directory.lookup("k")).toBe("us-east");
    expect(directory.lookup("n")).toBe("eu-west");
    await new Promise((resolve) => setTimeout(resolve, 10));
    const written = authority.statements.find((sql) => sql.includes("WHERE d.version < EXCLUDED.version"));
    expect(written).toContain("'k'");
    expect(written).toContain("ARRAY[3]::bigint[]");
  });
});
