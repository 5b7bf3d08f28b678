import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { findPostgresBinaries } from "@geo/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningDemo, startDemo } from "../scripts/demo.js";

/** The console's documentation: every `shop=> ` example in it is run here and its output compared. */
const CONSOLE_DOC = fileURLToPath(new URL("../../../docs/console.md", import.meta.url));

/** One example: the statement after the prompt and the lines the docs show for it. */
interface Example {
  readonly statement: string;
  readonly lines: readonly string[];
}

/** psql's aligned output (or its error), reduced to what is compared. */
interface Answer {
  readonly columns: readonly string[];
  readonly rows: readonly (readonly string[])[];
  /** `(n rows)` as printed. */
  readonly count: number | null;
  /** `ERROR:` and `HINT:` lines. */
  readonly error: readonly string[];
}

function examples(markdown: string): Example[] {
  const out: Example[] = [];
  const blocks = markdown.split(/^```.*$/m).filter((_, i) => i % 2 === 1);
  for (const block of blocks) {
    let current: { statement: string; lines: string[] } | undefined;
    for (const line of block.split("\n")) {
      if (line.startsWith("shop=> ")) {
        current = { statement: line.slice("shop=> ".length), lines: [] };
        out.push(current);
      } else if (current !== undefined && line.trim() !== "") current.lines.push(line);
    }
  }
  return out;
}

/** Parses psql's aligned output, as the docs print it and as psql prints it. */
function parse(lines: readonly string[]): Answer {
  const error = lines.filter((line) => /^(ERROR|HINT):/.test(line)).map((line) => line.replace(/\s+/g, " "));
  if (error.length > 0) return { columns: [], rows: [], count: null, error };
  const cells = (line: string): string[] => line.split("|").map((cell) => cell.trim());
  const [header, , ...rest] = lines;
  const rows: string[][] = [];
  let count: number | null = null;
  for (const line of rest) {
    const done = /^\((\d+) rows?\)$/.exec(line.trim());
    if (done !== null) {
      count = Number(done[1]);
      break;
    }
    rows.push(cells(line));
  }
  return { columns: header === undefined ? [] : cells(header), rows, count, error };
}

/** The demo's servers listen on free ports here; the docs show the example's 5433-5435. */
function withoutPorts(text: string): string {
  return text.replace(/127\.0\.0\.1:\d+/g, "127.0.0.1:<port>");
}

type Rule = "exact" | { readonly leading: number } | "stats" | "columns";

/**
 * How much of each documented answer is stable enough to compare, by the statement's start:
 * everything, the row count and the leading columns, or the column names alone (alerts and
 * clients depend on the moment).
 */
const RULES: readonly (readonly [RegExp, Rule])[] = [
  [/^SHOW (REGIONS|PLACEMENT|DIRECTORY \d+);$/, "exact"],
  [/^SHOW POOLS;$/, { leading: 5 }],
  [/^SHOW HEALTH;$/, { leading: 4 }],
  [/^SHOW STATS;$/, "stats"],
  [/^SHOW (ALERTS|CLIENTS);$/, "columns"],
  [/^(WHERE IS|ROUTE) /, "exact"],
  [/^SHOW (HEALTH now|PEERS);$/, "exact"],
];

let demo: RunningDemo;
let psqlPath: string;

beforeAll(async () => {
  const { bindir } = findPostgresBinaries();
  psqlPath = existsSync(join(bindir, "psql")) ? join(bindir, "psql") : "psql";
  demo = await startDemo({ ports: "random" });
});
afterAll(() => demo?.stop());

/** One statement through psql, aligned as in a terminal. Asynchronous: the proxy runs in this process. */
function psql(statement: string, before: readonly string[] = []): Promise<string[]> {
  const args = ["-X", "-P", "pager=off", "-h", demo.proxy.host, "-p", String(demo.proxy.port)];
  const child = spawn(psqlPath, [...args, "-U", "postgres", "-d", "shop", ...before, "-c", statement], {
    env: { ...process.env, PGCONNECT_TIMEOUT: "10", PGTZ: "UTC" },
  });
  let output = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    output += chunk;
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    output += chunk;
  });
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", () => resolve(output.split("\n").filter((line) => line.trim() !== "")));
  });
}

const documented = examples(readFileSync(CONSOLE_DOC, "utf8"));

describe("docs/console.md against the proxy over the demo's three PostgreSQL regions", () => {
  it("has console examples, each with a rule saying what of its output is compared", () => {
    expect(documented.length).toBeGreaterThanOrEqual(14);
    for (const example of documented) {
      expect(
        RULES.some(([pattern]) => pattern.test(example.statement)),
        example.statement,
      ).toBe(true);
    }
  });

  for (const example of documented) {
    it(`answers ${example.statement} as the docs show`, async () => {
      const rule = RULES.find(([pattern]) => pattern.test(example.statement))?.[1];
      const docs = parse(example.lines.map(withoutPorts));
      const real = parse((await psql(example.statement)).map(withoutPorts));
      expect(real.error, "the error").toEqual(docs.error);
      expect(real.columns, "the columns").toEqual(docs.columns);
      if (rule === "exact") {
        expect(real.rows).toEqual(docs.rows);
        expect(real.count).toBe(docs.count);
      } else if (rule === "stats") {
        // Every kind and name the docs list, except the SQLSTATEs seen, which depend on the run.
        const names = (answer: Answer) =>
          answer.rows.filter((row) => row[0] !== "error").map((row) => `${row[0]} ${row[1]}`);
        expect(names(real)).toEqual(names(docs));
      } else if (typeof rule === "object") {
        expect(real.count).toBe(docs.count);
        const leading = (answer: Answer) => answer.rows.map((row) => row.slice(0, rule.leading));
        expect(leading(real)).toEqual(leading(docs));
      }
    });
  }

  for (const statement of ["SHOW HEALTH now", "SHOW ALERTS x", "SHOW IN DOUBT x", "SHOW REGIONS x"]) {
    it(`refuses ${statement} with 42601 and a hint naming the command's form`, async () => {
      const lines = await psql(statement, ["-c", "\\set VERBOSITY verbose"]);
      const command = statement.slice(0, statement.lastIndexOf(" "));
      expect(lines.find((line) => line.startsWith("ERROR:"))).toMatch(/^ERROR:\s+42601:/);
      expect(lines.find((line) => line.startsWith("HINT:"))).toContain(command);
    });
  }
});
