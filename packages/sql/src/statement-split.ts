import { scanSync } from "libpg-query";
import { byteToCharOffset, isAscii } from "./parser.js";

/** One statement of a batch, cut at a top-level semicolon by PostgreSQL's own scanner. */
export interface ScannedStatement {
  /** The statement's text, without its semicolon and the space around it. */
  readonly text: string;
  /** Where `text` starts in the batch, and where it ends (UTF-16 units). */
  readonly start: number;
  readonly end: number;
}

const COMMENT_TOKENS = new Set(["C_COMMENT", "SQL_COMMENT"]);

/**
 * Splits a batch at its top-level semicolons without parsing it, so statements PostgreSQL's
 * grammar does not know (the console's) can be told apart from SQL. The scanner knows strings,
 * dollar quotes, quoted identifiers and comments exactly. It does not know `BEGIN ATOMIC ... END`
 * bodies, whose inner semicolons it would cut at: callers give runs of SQL pieces to the parser
 * whole. Undefined when the scanner fails (an unterminated string): the parser reports that.
 */
export function scanStatements(text: string): ScannedStatement[] | undefined {
  let tokens: ReturnType<typeof scanSync>["tokens"];
  try {
    tokens = scanSync(text).tokens;
  } catch {
    return undefined;
  }
  const ascii = isAscii(text);
  const at = (byte: number): number => (ascii ? byte : byteToCharOffset(text, byte));
  const statements: ScannedStatement[] = [];
  let pieceStart = 0;
  let hasCode = false;
  const cut = (end: number): void => {
    if (hasCode) {
      const raw = text.slice(pieceStart, end);
      const lead = raw.length - raw.trimStart().length;
      const trimmed = raw.trim();
      statements.push({ text: trimmed, start: pieceStart + lead, end: pieceStart + lead + trimmed.length });
    }
    hasCode = false;
  };
  for (const token of tokens) {
    if (token.text === ";" && token.tokenName === "ASCII_59") {
      const start = at(token.start);
      cut(start);
      pieceStart = start + 1;
      continue;
    }
    if (!COMMENT_TOKENS.has(token.tokenName)) hasCode = true;
  }
  cut(text.length);
  return statements;
}
