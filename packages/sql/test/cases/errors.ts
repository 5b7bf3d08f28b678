import type { ErrorCase } from "../summarize.js";

/** What cannot be analysed is an error with PostgreSQL's SQLSTATE, never a guess. */
export const errorCases: ErrorCase[] = [
  { sql: "SELECT * FRM users", sqlstate: "42601", code: "syntax-error", position: 10 },
  { sql: "SELECT 'unterminated", sqlstate: "42601", code: "syntax-error", position: 8 },
  { sql: "SELEC 1", sqlstate: "42601", code: "syntax-error", position: 1 },
  { sql: "SELECT 1; SELECT 2", sqlstate: "42601", code: "multiple-commands" },
  { sql: "/* geo: */ SELECT 1", sqlstate: "42601", code: "unreadable-hint" },
  { sql: "/* geo: key */ SELECT 1", sqlstate: "42601", code: "unreadable-hint" },
  { sql: "/* geo: key= */ SELECT 1", sqlstate: "42601", code: "unreadable-hint" },
  { sql: "/* geo: shard=3 */ SELECT 1", sqlstate: "42601", code: "unreadable-hint" },
  { sql: "/* geo: key=a key=b */ SELECT 1", sqlstate: "42601", code: "unreadable-hint" },
  { sql: "/* geo: key=a region=b */ SELECT 1", sqlstate: "42601", code: "unreadable-hint" },
  { sql: "/* geo: primary=yes */ SELECT 1", sqlstate: "42601", code: "unreadable-hint" },
  { sql: "/* geo: key=a */ /* geo: key=b */ SELECT 1", sqlstate: "42601", code: "unreadable-hint" },
  {
    sql: "/* note */ -- GEO: key=a\n/* geo: region=x */ SELECT 1",
    sqlstate: "42601",
    code: "unreadable-hint",
  },
  { sql: "/* GEO: shard=3 */ SELECT 1", sqlstate: "42601", code: "unreadable-hint" },
  { sql: "/* geo: key=a */ SELECT * FRM users", sqlstate: "42601", code: "syntax-error" },
];
