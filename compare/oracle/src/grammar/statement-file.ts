import { readFileSync } from "node:fs";
import type { GrammarStatement } from "./generate.js";

/**
 * Statements written by hand, graded in the grammar world like generated ones: so a shape the
 * generator does not draw can be checked against the reference without teaching it first.
 *
 * The file holds one statement per paragraph (statements are separated by blank lines). A
 * paragraph whose first line is `-- int` runs in the integer-keyed world; `-- ordered` compares
 * rows in order (otherwise as a multiset); `-- steps` runs each `;`-separated statement as a step
 * of its own (so an error stops the script and its transaction is rolled back before the next
 * paragraph, as for generated writes). Other `--` lines are comments.
 */
export function readStatementFile(file: string): GrammarStatement[] {
  const paragraphs = readFileSync(file, "utf8").split(/\n\s*\n/);
  const statements: GrammarStatement[] = [];
  for (const paragraph of paragraphs) {
    const lines = paragraph.split("\n");
    const marks = new Set(lines.filter((line) => line.startsWith("--")).map((line) => line.slice(2).trim()));
    const sql = lines
      .filter((line) => !line.startsWith("--"))
      .join("\n")
      .trim()
      .replace(/;$/, "");
    if (sql === "") continue;
    statements.push({
      seed: 0,
      index: statements.length,
      kind: "select",
      world: marks.has("int") ? "int" : "text",
      steps: (marks.has("steps") ? sql.split(/;\s*/) : [sql]).map((part) => ({
        sql: part,
        ordered: marks.has("ordered"),
      })),
    });
  }
  return statements;
}
