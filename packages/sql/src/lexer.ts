/**
 * A small SQL lexer for the cache key: it lifts literals out of the text, drops comments, finds the
 * highest `$n` and the leading comment. It only needs to be exact about token boundaries (strings,
 * dollar quotes, comments, quoted identifiers); every shape it produces is checked against a full
 * analysis before it is trusted, so a wrong guess here costs a cache miss, never a wrong route.
 *
 * A literal is lifted only in a form whose value this lexer normalises exactly as PostgreSQL's
 * grammar does (plain decimal integers and numerics, standard '...' strings, dollar-quoted strings).
 * E'', U&'', B'', X'' and N'' strings, hex/octal/binary and underscored numbers stay in the key.
 */

export const LIFTED_LITERAL_KINDS = ["string", "integer", "numeric"] as const;
export type LiftedLiteralKind = (typeof LIFTED_LITERAL_KINDS)[number];

export interface LiftedLiteral {
  readonly kind: LiftedLiteralKind;
  /** The value as PostgreSQL's grammar holds it: string contents, or the number's normal text. */
  readonly text: string;
}

export interface Lexed {
  /** Text with comments removed and each lifted literal replaced by a NUL marker and its kind. */
  readonly shapeKey: string;
  readonly literals: readonly LiftedLiteral[];
  /** Highest `$n` outside strings and comments (0 when none). */
  readonly maxParam: number;
  /**
   * Content of a comment that comes before any token (without delimiters), if any: the first one
   * that reads as a hint (`geo:`, in any case), else the first one.
   */
  readonly leadingComment: string | undefined;
  /** How many comments before any token read as hints (more than one is an error). */
  readonly hintComments?: number;
  /** A `;` followed by more tokens: a batch of several statements. */
  readonly multiple: boolean;
  /** Unterminated string, comment or quoted identifier: let the real parser report it. */
  readonly broken: boolean;
}

const INT32_MAX = 2147483647;

/** Keywords after which a literal stands where a parameter may stand. */
const LIFT_AFTER_KEYWORDS = new Set([
  "select",
  "where",
  "and",
  "or",
  "not",
  "then",
  "else",
  "when",
  "case",
  "limit",
  "offset",
  "between",
  "like",
  "ilike",
  "by",
  "having",
  "returning",
  "on",
  "all",
  "any",
  "some",
  "escape",
  "from",
  "for",
  "in",
  "values",
]);

/** What came before a token, which decides whether a literal or minus there may be lifted. */
const PREV_START = 0;
const PREV_OPERATOR = 1;
const PREV_OPEN = 2;
const PREV_COMMA = 3;
const PREV_LIFT_KEYWORD = 4;
const PREV_OTHER = 5;

/** The keywords above grouped by length, matched case-insensitively without allocating. */
const KEYWORDS_BY_LENGTH: readonly (readonly string[])[] = (() => {
  const out: string[][] = [];
  for (const w of LIFT_AFTER_KEYWORDS) {
    const bucket = out[w.length] ?? [];
    bucket.push(w);
    out[w.length] = bucket;
  }
  return out;
})();

function isLiftKeyword(text: string, start: number, end: number): boolean {
  const candidates = KEYWORDS_BY_LENGTH[end - start];
  if (candidates === undefined) return false;
  outer: for (const word of candidates) {
    for (let k = 0; k < word.length; k++) {
      if ((text.charCodeAt(start + k) | 32) !== word.charCodeAt(k)) continue outer;
    }
    return true;
  }
  return false;
}

function isIdentStart(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || c >= 128;
}

function isIdentChar(c: number): boolean {
  return isIdentStart(c) || (c >= 48 && c <= 57) || c === 36;
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 9 || c === 13 || c === 12 || c === 11;
}

/** Operator characters of PostgreSQL's scanner. */
function isOpChar(c: number): boolean {
  switch (c) {
    case 43: // +
    case 45: // -
    case 42: // *
    case 47: // /
    case 60: // <
    case 62: // >
    case 61: // =
    case 126: // ~
    case 33: // !
    case 64: // @
    case 35: // #
    case 37: // %
    case 94: // ^
    case 38: // &
    case 124: // |
    case 96: // `
    case 63: // ?
      return true;
    default:
      return false;
  }
}

/** An operator that may not end in + or - (the scanner splits those off) unless it has one of these. */
function hasNonArithmeticOpChar(text: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (
      c === 126 ||
      c === 33 ||
      c === 64 ||
      c === 35 ||
      c === 37 ||
      c === 94 ||
      c === 38 ||
      c === 124 ||
      c === 96 ||
      c === 63
    ) {
      return true;
    }
  }
  return false;
}

/** Is the next token `::` or `[` (which bind tighter than a unary minus)? */
function bindsTighterThanMinus(text: string, from: number): boolean {
  let i = from;
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  const c = text.charCodeAt(i);
  return c === 91 || (c === 58 && text.charCodeAt(i + 1) === 58);
}

/** End of a '...' body starting after the opening quote; -1 when unterminated. `''` is a quote. */
function endOfQuoted(text: string, from: number, quote: number, backslashEscapes: boolean): number {
  const n = text.length;
  let i = from;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (backslashEscapes && c === 92) {
      i += 2;
      continue;
    }
    if (c === quote) {
      if (text.charCodeAt(i + 1) === quote) {
        i += 2;
        continue;
      }
      return i;
    }
    i++;
  }
  return -1;
}

/** `$tag$` at `i`: returns the tag's end (index after the second `$`) or -1. */
function dollarTagEnd(text: string, i: number): number {
  let j = i + 1;
  const first = text.charCodeAt(j);
  if (first === 36) return j + 1;
  if (!isIdentStart(first)) return -1;
  j++;
  while (j < text.length) {
    const c = text.charCodeAt(j);
    if (c === 36) return j + 1;
    if (!(isIdentStart(c) || isDigit(c))) return -1;
    j++;
  }
  return -1;
}

function endOfBlockComment(text: string, from: number): number {
  let depth = 1;
  let i = from;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 42 && text.charCodeAt(i + 1) === 47) {
      depth--;
      i += 2;
      if (depth === 0) return i;
      continue;
    }
    if (c === 47 && text.charCodeAt(i + 1) === 42) {
      depth++;
      i += 2;
      continue;
    }
    i++;
  }
  return -1;
}

/**
 * A decimal number starting at `i` (digits, optional fraction, optional exponent). Returns its end
 * and whether it is a plain integer, or -1 when the form is not one this lexer lifts.
 */
function scanNumber(text: string, i: number): { end: number; integer: boolean; liftable: boolean } {
  const n = text.length;
  let j = i;
  let integer = true;
  let liftable = true;
  if (text.charCodeAt(j) === 48 && j + 1 < n) {
    const x = text.charCodeAt(j + 1) | 32;
    if (x === 120 || x === 111 || x === 98) liftable = false;
  }
  while (j < n && (isDigit(text.charCodeAt(j)) || text.charCodeAt(j) === 95)) {
    if (text.charCodeAt(j) === 95) liftable = false;
    j++;
  }
  if (text.charCodeAt(j) === 46 && text.charCodeAt(j + 1) !== 46) {
    integer = false;
    j++;
    while (j < n && (isDigit(text.charCodeAt(j)) || text.charCodeAt(j) === 95)) {
      if (text.charCodeAt(j) === 95) liftable = false;
      j++;
    }
  }
  const e = text.charCodeAt(j) | 32;
  if (e === 101) {
    let k = j + 1;
    const sign = text.charCodeAt(k);
    if (sign === 43 || sign === 45) k++;
    if (isDigit(text.charCodeAt(k))) {
      integer = false;
      j = k;
      while (j < n && isDigit(text.charCodeAt(j))) j++;
    }
  }
  // Trailing identifier characters (hex forms, junk) are read by the real parser, not here.
  while (j < n && isIdentChar(text.charCodeAt(j))) {
    liftable = false;
    j++;
  }
  return { end: j, integer, liftable };
}

function normaliseInteger(digits: string, negative: boolean): LiftedLiteral {
  let k = 0;
  while (k < digits.length - 1 && digits.charCodeAt(k) === 48) k++;
  const trimmed = digits.slice(k);
  // PostgreSQL keeps an integer in an int node only when it fits in 32 bits; otherwise it is a
  // numeric constant holding the text as written (sign folded in).
  if (trimmed.length <= 10 && Number(trimmed) <= INT32_MAX) {
    const value = Number(trimmed);
    return { kind: "integer", text: negative && value !== 0 ? `-${value}` : `${value}` };
  }
  return { kind: "numeric", text: negative ? `-${digits}` : digits };
}

/** Builds the shape key by copying the text between lifted literals and dropped comments. */
class KeyBuilder {
  readonly literals: LiftedLiteral[] = [];
  #key = "";
  #copiedUpTo = 0;
  readonly #text: string;

  constructor(text: string) {
    this.#text = text;
  }

  lift(start: number, end: number, literal: LiftedLiteral, marker: string): void {
    this.#key += this.#text.slice(this.#copiedUpTo, start) + marker;
    this.#copiedUpTo = end;
    this.literals.push(literal);
  }

  drop(start: number, end: number): void {
    this.#key += `${this.#text.slice(this.#copiedUpTo, start)} `;
    this.#copiedUpTo = end;
  }

  finish(): string {
    return this.#copiedUpTo === 0 ? this.#text : this.#key + this.#text.slice(this.#copiedUpTo);
  }
}

function brokenLex(
  text: string,
  maxParam: number,
  leadingComment: string | undefined,
  multiple: boolean,
): Lexed {
  return { shapeKey: text, literals: [], maxParam, leadingComment, multiple, broken: true };
}

/**
 * Lexes one statement text for the cache. Never throws.
 */
export function lex(text: string): Lexed {
  const n = text.length;
  let maxParam = 0;
  let leadingComment: string | undefined;
  let sawToken = false;
  let sawSemicolon = false;
  let multiple = false;
  let prev = PREV_START;
  let i = 0;

  const out = new KeyBuilder(text);
  let hintComments = 0;
  let hintSeen = false;
  const noteLeading = (comment: string): void => {
    if (looksLikeHint(comment)) {
      hintComments++;
      if (!hintSeen) leadingComment = comment;
      hintSeen = true;
    } else if (leadingComment === undefined) leadingComment = comment;
  };

  while (i < n) {
    const c = text.charCodeAt(i);
    if (isSpace(c)) {
      i++;
      continue;
    }
    // Comments: dropped from the key (hints included, which is what keeps them out of it).
    if (c === 45 && text.charCodeAt(i + 1) === 45) {
      let j = i + 2;
      while (j < n && text.charCodeAt(j) !== 10 && text.charCodeAt(j) !== 13) j++;
      if (!sawToken) noteLeading(text.slice(i + 2, j));
      out.drop(i, j);
      i = j;
      continue;
    }
    if (c === 47 && text.charCodeAt(i + 1) === 42) {
      const j = endOfBlockComment(text, i + 2);
      if (j < 0) return brokenLex(text, maxParam, leadingComment, multiple);
      if (!sawToken) noteLeading(text.slice(i + 2, j - 2));
      out.drop(i, j);
      i = j;
      continue;
    }
    if (sawSemicolon) multiple = true;
    sawToken = true;
    if (c === 39) {
      const end = endOfQuoted(text, i + 1, 39, false);
      if (end < 0) return brokenLex(text, maxParam, leadingComment, multiple);
      if (prev !== PREV_OTHER) {
        out.lift(i, end + 1, { kind: "string", text: text.slice(i + 1, end).replaceAll("''", "'") }, "\0s");
      }
      i = end + 1;
      prev = PREV_OTHER;
      continue;
    }
    if (c === 34) {
      const end = endOfQuoted(text, i + 1, 34, false);
      if (end < 0) return brokenLex(text, maxParam, leadingComment, multiple);
      i = end + 1;
      prev = PREV_OTHER;
      continue;
    }
    if (c === 36) {
      const next = text.charCodeAt(i + 1);
      if (isDigit(next)) {
        let j = i + 1;
        let value = 0;
        while (j < n && isDigit(text.charCodeAt(j))) {
          value = value * 10 + (text.charCodeAt(j) - 48);
          j++;
        }
        if (value > maxParam) maxParam = value;
        i = j;
        prev = PREV_OTHER;
        continue;
      }
      const tagEnd = dollarTagEnd(text, i);
      if (tagEnd > 0) {
        const tag = text.slice(i, tagEnd);
        const close = text.indexOf(tag, tagEnd);
        if (close < 0) return brokenLex(text, maxParam, leadingComment, multiple);
        if (prev !== PREV_OTHER)
          out.lift(i, close + tag.length, { kind: "string", text: text.slice(tagEnd, close) }, "\0d");
        i = close + tag.length;
        prev = PREV_OTHER;
        continue;
      }
      i++;
      prev = PREV_OTHER;
      continue;
    }
    if (isIdentStart(c)) {
      let j = i + 1;
      while (j < n && isIdentChar(text.charCodeAt(j))) j++;
      const next = text.charCodeAt(j);
      if (next === 39 && j - i <= 2) {
        // Prefixed strings (E'', B'', X'', N'', U&'' is handled below): kept in the key verbatim.
        const word = text.slice(i, j).toLowerCase();
        if (word === "e" || word === "b" || word === "x" || word === "n") {
          const end = endOfQuoted(text, j + 1, 39, word === "e");
          if (end < 0) return brokenLex(text, maxParam, leadingComment, multiple);
          i = end + 1;
          prev = PREV_OTHER;
          continue;
        }
      }
      if (next === 38 && j - i === 1 && (c | 32) === 117) {
        const quote = text.charCodeAt(j + 1);
        if (quote === 39 || quote === 34) {
          const end = endOfQuoted(text, j + 2, quote, false);
          if (end < 0) return brokenLex(text, maxParam, leadingComment, multiple);
          i = end + 1;
          prev = PREV_OTHER;
          continue;
        }
      }
      prev = isLiftKeyword(text, i, j) ? PREV_LIFT_KEYWORD : PREV_OTHER;
      i = j;
      continue;
    }
    if (isDigit(c) || (c === 46 && isDigit(text.charCodeAt(i + 1)))) {
      const num = scanNumber(text, i);
      if (num.liftable && prev !== PREV_OTHER) {
        const written = text.slice(i, num.end);
        out.lift(
          i,
          num.end,
          num.integer ? normaliseInteger(written, false) : { kind: "numeric", text: written },
          num.integer ? "\0i" : "\0n",
        );
      }
      i = num.end;
      prev = PREV_OTHER;
      continue;
    }
    if (isOpChar(c)) {
      let j = i;
      while (j < n && isOpChar(text.charCodeAt(j))) {
        const d = text.charCodeAt(j);
        const e = text.charCodeAt(j + 1);
        if ((d === 45 && e === 45) || (d === 47 && e === 42)) break;
        j++;
      }
      if (j === i) {
        // A comment starts right here; the loop head handles it.
        continue;
      }
      // The scanner gives a trailing '-' its own token unless the operator has one of ~!@#%^&|`?.
      const last = text.charCodeAt(j - 1);
      const unaryMinus =
        last === 45 &&
        (isDigit(text.charCodeAt(j)) || (text.charCodeAt(j) === 46 && isDigit(text.charCodeAt(j + 1)))) &&
        (j - 1 === i ? prev !== PREV_OTHER : !hasNonArithmeticOpChar(text, i, j - 1));
      if (unaryMinus) {
        const num = scanNumber(text, j);
        // `::` and `[` bind tighter than unary minus: -1::int8 is -(1::int8), not a constant.
        if (num.liftable && !bindsTighterThanMinus(text, num.end)) {
          const written = text.slice(j, num.end);
          out.lift(
            j - 1,
            num.end,
            num.integer ? normaliseInteger(written, true) : { kind: "numeric", text: `-${written}` },
            num.integer ? "\0i" : "\0n",
          );
          i = num.end;
          prev = PREV_OTHER;
          continue;
        }
      }
      i = j;
      prev = PREV_OPERATOR;
      continue;
    }
    switch (c) {
      case 59: // ;
        sawSemicolon = true;
        sawToken = true;
        prev = PREV_START;
        i++;
        continue;
      case 40: // (
      case 91: // [
        prev = PREV_OPEN;
        i++;
        continue;
      case 44: // ,
        prev = PREV_COMMA;
        i++;
        continue;
      case 58: // : (and ::, := which precede type names / values)
        prev = text.charCodeAt(i + 1) === 58 ? PREV_OTHER : PREV_OPERATOR;
        i += text.charCodeAt(i + 1) === 58 ? 2 : 1;
        continue;
      default:
        prev = PREV_OTHER;
        i++;
    }
  }
  return {
    shapeKey: out.finish(),
    literals: out.literals,
    maxParam,
    leadingComment,
    ...(hintComments > 1 ? { hintComments } : {}),
    multiple,
    broken: false,
  };
}

/** A comment that reads as a hint: `geo:` after any spaces, in any case. */
export function looksLikeHint(comment: string): boolean {
  return comment.trimStart().slice(0, 4).toLowerCase() === "geo:";
}

/** Rebuilds parseable SQL from a shape key: literal markers become `$k`, numbered after `firstParam - 1`. */
export function shapeSql(shapeKey: string, firstParam: number): string {
  let out = "";
  let next = firstParam;
  let from = 0;
  for (;;) {
    const at = shapeKey.indexOf("\0", from);
    if (at < 0) break;
    out += `${shapeKey.slice(from, at)}$${next}`;
    next++;
    from = at + 2;
  }
  return out + shapeKey.slice(from);
}
