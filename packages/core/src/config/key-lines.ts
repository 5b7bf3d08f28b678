/**
 * Finds the line each key was written on, so validation errors can point at it. smol-toml gives
 * positions only for syntax errors, and the parsed object has none; a light scan of the text is
 * enough because the document already parsed: headers are `[a.b]` / `[[a.b]]`, assignments are
 * `key = ...`, and an inline table's fields are reported at the line of the key that holds it.
 */
export function keyLines(text: string): Map<string, number> {
  const lines = new Map<string, number>();
  const arrayCounts = new Map<string, number>();
  let prefix = "";
  const rows = text.split(/\r?\n/);
  for (let index = 0; index < rows.length; index++) {
    const row = rows[index]!.trim();
    const lineNumber = index + 1;
    if (row === "" || row.startsWith("#")) continue;
    const arrayHeader = /^\[\[\s*([^\]]+?)\s*\]\]/.exec(row);
    if (arrayHeader) {
      const name = normaliseDotted(arrayHeader[1]!);
      const next = (arrayCounts.get(name) ?? -1) + 1;
      arrayCounts.set(name, next);
      prefix = `${name}[${next}]`;
      setOnce(lines, prefix, lineNumber);
      setOnce(lines, name, lineNumber);
      continue;
    }
    const header = /^\[\s*([^\]]+?)\s*\]/.exec(row);
    if (header) {
      prefix = normaliseDotted(header[1]!);
      setOnce(lines, prefix, lineNumber);
      continue;
    }
    const assignment =
      /^((?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*=/.exec(row);
    if (assignment) {
      const key = normaliseDotted(assignment[1]!);
      setOnce(lines, prefix === "" ? key : `${prefix}.${key}`, lineNumber);
    }
  }
  return lines;
}

/** The line of `path`, or of its nearest enclosing key that has one. */
export function lineOf(lines: Map<string, number>, path: string): number | undefined {
  let candidate = path;
  for (;;) {
    const found = lines.get(candidate);
    if (found !== undefined) return found;
    const cut = Math.max(candidate.lastIndexOf("."), candidate.lastIndexOf("["));
    if (cut <= 0) return undefined;
    candidate = candidate.slice(0, cut);
  }
}

function normaliseDotted(raw: string): string {
  return raw
    .split(".")
    .map((part) => part.trim().replace(/^["']|["']$/g, ""))
    .join(".");
}

function setOnce(lines: Map<string, number>, key: string, line: number): void {
  if (!lines.has(key)) lines.set(key, line);
}
