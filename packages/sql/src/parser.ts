import { hasSqlDetails, loadModule, parseSync } from "libpg-query";
import type { Node, RawStmt } from "./ast.js";
import { parserNotLoaded, syntaxError } from "./errors.js";

let loading: Promise<void> | undefined;
let loaded = false;

/** Loads PostgreSQL's parser (WebAssembly) once; later calls return the same promise. */
export function initSql(): Promise<void> {
  loading ??= loadModule().then(() => {
    loaded = true;
  });
  return loading;
}

export function isParserLoaded(): boolean {
  return loaded;
}

export interface ParsedStatement {
  readonly node: Node | undefined;
  /** The statement's own text, without the batch's separators. */
  readonly text: string;
  /** Offset of `text` in the whole string (UTF-16 units). */
  readonly offset: number;
}

/**
 * Parses a text into its statements. PostgreSQL reports statement locations in bytes of UTF-8, so
 * they are converted back to string offsets here.
 */
export function parseStatements(text: string): ParsedStatement[] {
  if (!loaded) throw parserNotLoaded();
  // The parser refuses an empty string; PostgreSQL answers it with EmptyQueryResponse.
  if (text.length === 0) return [];
  let stmts: RawStmt[];
  try {
    stmts = (parseSync(text).stmts ?? []) as RawStmt[];
  } catch (error) {
    if (hasSqlDetails(error) && error.sqlDetails !== undefined) {
      // The cursor is a 0-based character offset (statement locations, below, are bytes).
      throw syntaxError(error.sqlDetails.message, error.sqlDetails.cursorPosition + 1, error);
    }
    throw syntaxError(error instanceof Error ? error.message : String(error), undefined, error);
  }
  const ascii = isAscii(text);
  return stmts.map((raw) => {
    const startByte = raw.stmt_location ?? 0;
    const start = ascii ? startByte : byteToCharOffset(text, startByte);
    const end =
      raw.stmt_len === undefined || raw.stmt_len === 0
        ? text.length
        : ascii
          ? startByte + raw.stmt_len
          : byteToCharOffset(text, startByte + raw.stmt_len);
    return { node: raw.stmt, text: text.slice(start, end), offset: start };
  });
}

/** Parses text known to hold one statement (a rewrite's output, a verified shape). */
export function parseOne(text: string): Node | undefined {
  const all = parseStatements(text);
  return all[0]?.node;
}

export function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 127) return false;
  return true;
}

/** A UTF-8 byte offset (as PostgreSQL reports locations) as an offset in the string. */
export function byteToCharOffset(text: string, byteOffset: number): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    if (bytes >= byteOffset) return i;
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return text.length;
}
