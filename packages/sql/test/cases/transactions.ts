import type { Case } from "../summarize.js";

/** Transaction control: what starts, ends and names a transaction, and its characteristics. */
export const transactions: Case[] = [
  { sql: "BEGIN", expect: { kind: "transaction", tx: "begin", readOnly: true, primary: null } },
  { sql: "BEGIN READ ONLY", expect: { tx: "begin read-only", readOnly: true } },
  {
    sql: "BEGIN READ WRITE",
    expect: { tx: "begin read-write", readOnly: false, primary: "transaction-control" },
  },
  {
    sql: "BEGIN ISOLATION LEVEL SERIALIZABLE READ ONLY DEFERRABLE",
    expect: { tx: "begin serializable read-only deferrable" },
  },
  {
    sql: "START TRANSACTION ISOLATION LEVEL REPEATABLE READ",
    expect: { tx: "begin repeatable-read", command: "START TRANSACTION" },
  },
  { sql: "BEGIN ISOLATION LEVEL READ COMMITTED", expect: { tx: "begin read-committed" } },
  { sql: "BEGIN TRANSACTION ISOLATION LEVEL READ UNCOMMITTED", expect: { tx: "begin read-uncommitted" } },
  { sql: "COMMIT", expect: { tx: "commit", command: "COMMIT" } },
  { sql: "END", expect: { tx: "commit", command: "COMMIT" } },
  { sql: "COMMIT AND CHAIN", expect: { tx: "commit chain" } },
  { sql: "ROLLBACK", expect: { tx: "rollback" } },
  { sql: "ABORT", expect: { tx: "rollback", command: "ROLLBACK" } },
  { sql: "ROLLBACK AND CHAIN", expect: { tx: "rollback chain" } },
  { sql: "SAVEPOINT sp1", expect: { tx: "savepoint sp1", command: "SAVEPOINT" } },
  { sql: "RELEASE SAVEPOINT sp1", expect: { tx: "release sp1" } },
  { sql: "RELEASE sp1", expect: { tx: "release sp1" } },
  { sql: "ROLLBACK TO SAVEPOINT sp1", expect: { tx: "rollback-to sp1" } },
  { sql: "ROLLBACK TO sp1", expect: { tx: "rollback-to sp1" } },
  { sql: "PREPARE TRANSACTION 'geo_1'", expect: { tx: "prepare geo_1", primary: "transaction-control" } },
  { sql: "COMMIT PREPARED 'geo_1'", expect: { tx: "commit-prepared geo_1", primary: "transaction-control" } },
  {
    sql: "ROLLBACK PREPARED 'geo_1'",
    expect: { tx: "rollback-prepared geo_1", primary: "transaction-control" },
  },
  {
    sql: "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE",
    expect: { kind: "session", effects: ["set local transaction"] },
  },
  {
    sql: "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY",
    expect: { effects: ["set session_characteristics"] },
  },
];
