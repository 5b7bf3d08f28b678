import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import madge from "madge";
import { describe, expect, it } from "vitest";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const SRC = join(ROOT, "src");

/** A file may be longer than this only when its first line says why. */
const MAX_LINES = 400;
/** The marker a long file's first line starts with, followed by its reason (a sentence at least). */
const LONG_FILE_MARKER = "// Long file:";

/** Every .ts file under src, tests included, relative to src. */
function sources(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...sources(path));
    else if (entry.name.endsWith(".ts")) found.push(relative(SRC, path));
  }
  return found.sort();
}

/** The files over the limit whose first line does not give a reason. */
function longWithoutReason(files: readonly string[]): string[] {
  const offending: string[] = [];
  for (const file of files) {
    const text = readFileSync(join(SRC, file), "utf8");
    const lines = text.split("\n");
    if (lines.at(-1) === "") lines.pop();
    if (lines.length <= MAX_LINES) continue;
    const first = lines[0] ?? "";
    const reason = first.startsWith(LONG_FILE_MARKER) ? first.slice(LONG_FILE_MARKER.length).trim() : "";
    if (reason.length < 20) offending.push(`${file} (${lines.length} lines)`);
  }
  return offending;
}

describe("the proxy's source tree", () => {
  it(`keeps every file at most ${MAX_LINES} lines, or says at its top why it is longer`, () => {
    const files = sources(SRC);
    // Sanity: the walk reads the real tree.
    expect(files).toContain("session/session.ts");
    expect(longWithoutReason(files)).toEqual([]);
  });

  it("has no import cycle between its modules, type-only imports included", async () => {
    const graph = await madge(SRC, {
      fileExtensions: ["ts"],
      tsConfig: join(ROOT, "tsconfig.json"),
      excludeRegExp: [/\.test\.ts$/],
      detectiveOptions: { ts: { skipTypeImports: false, skipAsyncImports: false } },
    });
    const modules = graph.obj();
    // Sanity: madge resolved the `.js` suffixes to the .ts files, type-only imports included
    // (session.ts imports engine/session-port.ts for its types only).
    expect(modules["session/session.ts"]).toContain("engine/leg-set.ts");
    expect(modules["session/session.ts"]).toContain("engine/session-port.ts");
    // An import madge could not resolve could hide a cycle.
    expect(graph.warnings().skipped).toEqual([]);
    expect(graph.circular()).toEqual([]);
  });
});
