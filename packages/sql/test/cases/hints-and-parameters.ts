import type { Case } from "../summarize.js";

/** Hints come only from a leading `geo:` comment; parameters stay symbolic. */
export const hintsAndParameters: Case[] = [
  { sql: "/* geo: key=alice */ SELECT * FROM users", expect: { hints: "key=alice", keys: ["any"] } },
  { sql: "/*geo:key=alice*/ SELECT 1", expect: { hints: "key=alice" } },
  { sql: "/* GEO: key=alice */ SELECT 1", expect: { hints: "key=alice" } },
  // Another comment before the hint does not hide it.
  { sql: "/* note */ /* Geo: key=alice */ SELECT 1", expect: { hints: "key=alice" } },
  { sql: "/* geo: key='bob smith' */ SELECT 1", expect: { hints: "key=bob smith" } },
  { sql: "/* geo: region=us-east */ SELECT * FROM users", expect: { hints: "region=us-east" } },
  {
    sql: "/* geo: primary */ SELECT * FROM users",
    expect: { hints: "primary", readOnly: false, primary: "hint" },
  },
  { sql: "/* geo: primary key=a */ SELECT 1", expect: { hints: "key=a primary" } },
  { sql: "/* geo: primary */ UPDATE users SET a = 1", expect: { primary: "writes" } },
  { sql: "-- geo: key=alice\nSELECT 1", expect: { hints: "key=alice" } },
  { sql: "/* a comment */ SELECT 1", expect: { hints: "" } },
  { sql: "/* not geo: key=a */ SELECT 1", expect: { hints: "" } },
  { sql: "SELECT 1 /* geo: key=alice */", expect: { hints: "" } },
  { sql: "SELECT '/* geo: key=alice */'", expect: { hints: "" } },
  {
    sql: "/* geo: region=eu-west */ THIS IS NOT SQL",
    expect: { hints: "region=eu-west", kind: "utility", readOnly: false, primary: "hint" },
  },
  { sql: "SELECT * FROM users WHERE tenant_id = $1 AND name = $2", expect: { params: 2, keys: ["$1"] } },
  { sql: "SELECT $$ $9 $$ FROM users WHERE tenant_id = $1", expect: { params: 1, keys: ["$1"] } },
  {
    sql: "SELECT $tag$ $9 $tag$, '$8', \"$7\" FROM users WHERE tenant_id = $2",
    expect: { params: 2, keys: ["$2"] },
  },
  { sql: "SELECT 1 -- $5\nFROM users WHERE tenant_id = $1", expect: { params: 1 } },
  { sql: "SELECT * FROM users WHERE tenant_id = $12", expect: { params: 12, keys: ["$12"] } },
  { sql: "SELECT * FROM users LIMIT $1 OFFSET $2", expect: { params: 2, merge: "concat" } },
];
