/**
 * Splits a simple-query string into statements at top-level semicolons, the way the server sees
 * them: semicolons inside quotes, dollar quotes, quoted identifiers and comments do not split.
 * Empty statements are dropped; an all-empty string yields no statements (EmptyQueryResponse).
 */
export function splitStatements(text: string): string[] {
  const statements: string[] = [];
  let start = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const ch = text[i]!;
    if (ch === "'" || ch === '"') {
      i = skipQuoted(text, i, ch);
    } else if (ch === "-" && text[i + 1] === "-") {
      const end = text.indexOf("\n", i);
      i = end === -1 ? n : end + 1;
    } else if (ch === "/" && text[i + 1] === "*") {
      i = skipBlockComment(text, i);
    } else if (ch === "$") {
      const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(text.slice(i));
      if (tag !== null && !isIdentifierChar(text[i - 1])) {
        const close = text.indexOf(tag[0], i + tag[0].length);
        i = close === -1 ? n : close + tag[0].length;
      } else {
        i++;
      }
    } else if (ch === ";") {
      pushStatement(statements, text.slice(start, i));
      i++;
      start = i;
    } else {
      i++;
    }
  }
  pushStatement(statements, text.slice(start));
  return statements;
}

function pushStatement(statements: string[], candidate: string): void {
  const trimmed = candidate.trim();
  if (trimmed !== "" && !isOnlyComments(trimmed)) statements.push(trimmed);
}

function isOnlyComments(text: string): boolean {
  return (
    text
      .replace(/--[^\n]*(\n|$)/g, "")
      .replace(/\/\*[\s\S]*?\*\//g, "")
      .trim() === ""
  );
}

function isIdentifierChar(ch: string | undefined): boolean {
  return ch !== undefined && /[A-Za-z0-9_]/.test(ch);
}

function skipQuoted(text: string, open: number, quote: string): number {
  let i = open + 1;
  while (i < text.length) {
    if (text[i] === quote) {
      if (text[i + 1] === quote) {
        i += 2;
        continue;
      }
      return i + 1;
    }
    i++;
  }
  return text.length;
}

function skipBlockComment(text: string, open: number): number {
  // Block comments nest in PostgreSQL.
  let depth = 0;
  let i = open;
  while (i < text.length) {
    if (text[i] === "/" && text[i + 1] === "*") {
      depth++;
      i += 2;
    } else if (text[i] === "*" && text[i + 1] === "/") {
      depth--;
      i += 2;
      if (depth === 0) return i;
    } else {
      i++;
    }
  }
  return text.length;
}

/** Statement text with comments removed, whitespace collapsed and no trailing semicolon, for matching. */
export function normalizeStatement(sql: string): string {
  return sql
    .replace(/--[^\n]*(\n|$)/g, " ")
    .replace(/\/\*[\s\S]*?\*\//g, " ")
    .replace(/\s+/g, " ")
    .trim()
    .replace(/;$/, "")
    .trim();
}
