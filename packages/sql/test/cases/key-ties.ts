import type { Case } from "../summarize.js";

// Which key equalities tie occurrences into one region (src/key-groups.ts): outright where both
// rows are always present, otherwise only the dependent side to the one group it depends on.
// Table numbers follow the order of the FROM lists, outer first.
export const keyTies: readonly Case[] = [
  {
    sql: "SELECT * FROM users u JOIN orders o ON o.tenant_id = u.tenant_id JOIN payments p ON p.tenant_id = o.tenant_id",
    expect: { links: ["0-1", "1-2"], cross: [] },
  },
  {
    sql: "SELECT * FROM users a JOIN users b ON a.id = b.id WHERE EXISTS (SELECT 1 FROM orders o WHERE o.tenant_id = a.tenant_id AND o.tenant_id = b.tenant_id)",
    expect: { links: ["0-2", "1-2"], cross: [] },
  },
  {
    sql: "SELECT * FROM users a JOIN users b ON a.id = b.id WHERE a.tenant_id IN (SELECT o.tenant_id FROM orders o WHERE o.tenant_id = b.tenant_id)",
    expect: { links: ["0-2", "1-2"], cross: [] },
  },
  {
    // Pairs of a and b with unequal keys are the rows NOT EXISTS keeps.
    sql: "SELECT * FROM users a JOIN users b ON a.id = b.id WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.tenant_id = a.tenant_id AND o.tenant_id = b.tenant_id)",
    expect: { links: [], cross: ["0-1", "0-2", "1-2"] },
  },
  {
    sql: "SELECT * FROM users a JOIN users b ON a.id = b.id WHERE NOT (a.tenant_id IN (SELECT o.tenant_id FROM orders o WHERE o.tenant_id = b.tenant_id))",
    expect: { links: [], cross: ["0-1", "0-2", "1-2"] },
  },
  {
    sql: "SELECT (SELECT count(*) FROM orders o WHERE o.tenant_id = a.tenant_id AND o.tenant_id = b.tenant_id) FROM users a JOIN users b ON a.id = b.id",
    expect: { links: [], cross: ["0-1", "0-2", "1-2"] },
  },
  {
    sql: "SELECT * FROM users a JOIN users b ON a.id = b.id WHERE a.id > 2 OR EXISTS (SELECT 1 FROM orders o WHERE o.tenant_id = a.tenant_id AND o.tenant_id = b.tenant_id)",
    expect: { links: [], cross: ["0-1", "0-2", "1-2"] },
  },
  {
    sql: "SELECT * FROM users a JOIN users b ON a.id = b.id WHERE NOT EXISTS (SELECT 1 WHERE a.tenant_id = b.tenant_id)",
    expect: { links: [], cross: ["0-1"] },
  },
  {
    sql: "SELECT * FROM users a JOIN users b ON a.id = b.id, LATERAL (SELECT count(*) FROM orders o WHERE o.tenant_id = a.tenant_id AND o.tenant_id = b.tenant_id) x",
    expect: { links: [], cross: ["0-1", "0-2", "1-2"] },
  },
  {
    // A correlated sub-query that depends on one group joins it.
    sql: "SELECT (SELECT count(*) FROM orders o WHERE o.tenant_id = a.tenant_id AND o.tenant_id = b.tenant_id) FROM users a JOIN users b ON a.tenant_id = b.tenant_id",
    expect: { links: ["0-1", "0-2", "1-2"], cross: [] },
  },
  {
    // c is null where the pair's keys differ: nothing ties a to b.
    sql: "SELECT * FROM users a JOIN users b ON a.id = b.id LEFT JOIN orders c ON c.tenant_id = a.tenant_id AND c.tenant_id = b.tenant_id",
    expect: { links: [], cross: ["0-1", "0-2", "1-2"] },
  },
  {
    sql: "SELECT * FROM users a JOIN users b ON a.tenant_id = b.tenant_id LEFT JOIN orders c ON c.tenant_id = a.tenant_id AND c.tenant_id = b.tenant_id",
    expect: { links: ["0-1", "0-2", "1-2"], cross: [] },
  },
  {
    sql: "SELECT * FROM users a FULL JOIN orders o ON o.tenant_id = a.tenant_id",
    expect: { links: ["0-1"], cross: [] },
  },
  {
    sql: "SELECT * FROM (users a JOIN users b ON a.id = b.id) FULL JOIN orders c ON c.tenant_id = a.tenant_id AND c.tenant_id = b.tenant_id",
    expect: { links: [], cross: ["0-1", "0-2", "1-2"] },
  },
  {
    sql: "SELECT * FROM users a LEFT JOIN (orders o JOIN payments p ON p.tenant_id = o.tenant_id) ON o.tenant_id = a.tenant_id",
    expect: { links: ["1-2", "0-1"], cross: [] },
  },
];
