import type { Case } from "../summarize.js";

/** Statements whose effect outlives them on the server connection. */
export const sessionEffects: Case[] = [
  {
    sql: "SET search_path TO app, public",
    expect: { kind: "session", readOnly: true, effects: ["set search_path =app"] },
  },
  { sql: "SET statement_timeout = 5000", expect: { effects: ["set statement_timeout =5000"] } },
  { sql: "SET LOCAL statement_timeout = '5s'", expect: { effects: ["set local statement_timeout =5s"] } },
  { sql: "SET SESSION application_name = 'worker'", expect: { effects: ["set application_name =worker"] } },
  { sql: "SET TIME ZONE 'UTC'", expect: { effects: ["set timezone =UTC"] } },
  { sql: "SET search_path TO DEFAULT", expect: { effects: ["set search_path =default"] } },
  { sql: "SET ROLE reader", expect: { effects: ["set role =reader"] } },
  { sql: "RESET search_path", expect: { effects: ["reset search_path"] } },
  { sql: "RESET ALL", expect: { effects: ["reset"] } },
  {
    sql: "SELECT set_config('search_path', 'app', false)",
    expect: { kind: "select", effects: ["set-config search_path =app"] },
  },
  {
    sql: "SELECT set_config('search_path', 'app', true)",
    expect: { effects: ["set-config local search_path =app"] },
  },
  { sql: "SELECT set_config($1, $2, false)", expect: { effects: ["set-config"], params: 2 } },
  { sql: "LISTEN jobs", expect: { kind: "session", effects: ["listen jobs"], primary: "listen-notify" } },
  { sql: "UNLISTEN jobs", expect: { effects: ["unlisten jobs"], readOnly: true } },
  { sql: "UNLISTEN *", expect: { effects: ["unlisten"] } },
  {
    sql: "PREPARE q1 AS SELECT * FROM users WHERE tenant_id = $1",
    expect: { kind: "session", effects: ["prepare q1"], readOnly: true },
  },
  {
    sql: "EXECUTE q1('alice')",
    expect: { kind: "session", effects: ["execute q1"], primary: "unknown-statement" },
  },
  { sql: "DEALLOCATE q1", expect: { effects: ["deallocate q1"] } },
  { sql: "DEALLOCATE ALL", expect: { effects: ["deallocate"] } },
  { sql: "DEALLOCATE PREPARE q1", expect: { effects: ["deallocate q1"] } },
  {
    sql: "DECLARE c CURSOR WITH HOLD FOR SELECT * FROM users WHERE tenant_id = 'a'",
    expect: { kind: "utility", effects: ["declare-with-hold c"], keys: ["'a'"], readOnly: true },
  },
  { sql: "DECLARE c CURSOR FOR SELECT * FROM users", expect: { effects: [], tables: ["users@0"] } },
  { sql: "CLOSE c", expect: { kind: "utility", effects: ["close-cursor c"], readOnly: true } },
  { sql: "CLOSE ALL", expect: { effects: ["close-cursor"] } },
  {
    sql: "SELECT pg_advisory_unlock_all()",
    expect: { effects: ["advisory-lock pg_advisory_unlock_all"] },
  },
  { sql: "DECLARE c CURSOR FOR SELECT * FROM users FOR UPDATE", expect: { primary: "locking-clause" } },
  { sql: "CREATE TEMP TABLE scratch (id int)", expect: { kind: "ddl", effects: ["create-temp scratch"] } },
  { sql: "CREATE TEMPORARY TABLE scratch AS SELECT 1", expect: { effects: ["create-temp scratch"] } },
  { sql: "CREATE UNLOGGED TABLE scratch (id int)", expect: { effects: [] } },
  { sql: "DISCARD ALL", expect: { kind: "session", effects: ["discard =all"] } },
  { sql: "DISCARD PLANS", expect: { effects: ["discard =plans"] } },
  { sql: "DISCARD TEMP", expect: { effects: ["discard =temp"] } },
  { sql: "DISCARD SEQUENCES", expect: { effects: ["discard =sequences"] } },
  { sql: "LOAD 'auto_explain'", expect: { effects: ["load auto_explain"] } },
  {
    sql: "SELECT pg_advisory_lock_shared(7)",
    expect: { effects: ["advisory-lock pg_advisory_lock_shared"] },
  },
];
