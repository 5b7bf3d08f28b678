/** Longest shape kept; a longer one is cut and ends with `…`. */
export const MAX_SHAPE_LENGTH = 400;

/**
 * A statement's text with its literals lifted out, for display: every string, number and
 * dollar-quoted constant becomes `$n`, numbered after the statement's own parameters, and runs of
 * whitespace become one space. Comments (hints among them) and quoted identifiers stay as written.
 *
 * It runs once per new analysis (see `RouteBook`), never on a cache hit of a shape already seen.
 *
 * @example
 * ```ts
 * statementShape("SELECT * FROM users WHERE tenant_id = 'bob' AND id > 3", 0);
 * // "SELECT * FROM users WHERE tenant_id = $1 AND id > $2"
 * ```
 */
export function statementShape(text: string, paramCount: number): string {
  let out = "";
  let next = paramCount + 1;
  let i = 0;
  const n = text.length;
  let space = false;
  const emit = (piece: string): void => {
    if (space && out.length > 0) out += " ";
    space = false;
    out += piece;
  };
  while (i < n && out.length < MAX_SHAPE_LENGTH) {
    const c = text.charCodeAt(i);
    if (c === 32 || c === 9 || c === 10 || c === 13 || c === 12) {
      space = true;
      i++;
      continue;
    }
    // -- comment to the end of the line
    if (c === 45 && text.charCodeAt(i + 1) === 45) {
      const end = text.indexOf("\n", i);
      const stop = end === -1 ? n : end;
      emit(text.slice(i, stop));
      space = true;
      i = stop;
      continue;
    }
    // /* comment */, nested as PostgreSQL nests them
    if (c === 47 && text.charCodeAt(i + 1) === 42) {
      let depth = 1;
      let j = i + 2;
      while (j < n && depth > 0) {
        if (text.charCodeAt(j) === 47 && text.charCodeAt(j + 1) === 42) {
          depth++;
          j += 2;
        } else if (text.charCodeAt(j) === 42 && text.charCodeAt(j + 1) === 47) {
          depth--;
          j += 2;
        } else j++;
      }
      emit(text.slice(i, j));
      i = j;
      continue;
    }
    // "quoted identifier"
    if (c === 34) {
      const j = closeQuote(text, i + 1, 34, false);
      emit(text.slice(i, j));
      i = j;
      continue;
    }
    // 'string', E'string', B'bits', X'hex', N'national'
    if (
      c === 39 ||
      (isStringPrefix(c) && text.charCodeAt(i + 1) === 39 && !isWordChar(text.charCodeAt(i - 1)))
    ) {
      const escapes = c === 69 || c === 101;
      const start = c === 39 ? i + 1 : i + 2;
      i = closeQuote(text, start, 39, escapes);
      emit(`$${next++}`);
      continue;
    }
    // $n parameter, or $tag$ ... $tag$
    if (c === 36) {
      let j = i + 1;
      while (j < n && isDigit(text.charCodeAt(j))) j++;
      if (j > i + 1) {
        emit(text.slice(i, j));
        i = j;
        continue;
      }
      while (j < n && isWordChar(text.charCodeAt(j))) j++;
      if (text.charCodeAt(j) === 36) {
        const tag = text.slice(i, j + 1);
        const end = text.indexOf(tag, j + 1);
        i = end === -1 ? n : end + tag.length;
        emit(`$${next++}`);
        continue;
      }
      emit("$");
      i++;
      continue;
    }
    // a number not inside a word: 12, 1.5, .5, 1e-3
    if (
      (isDigit(c) || (c === 46 && isDigit(text.charCodeAt(i + 1)))) &&
      !isWordChar(text.charCodeAt(i - 1))
    ) {
      let j = i;
      while (j < n && (isDigit(text.charCodeAt(j)) || text.charCodeAt(j) === 46 || text.charCodeAt(j) === 95))
        j++;
      const e = text.charCodeAt(j);
      if (e === 69 || e === 101) {
        let k = j + 1;
        const sign = text.charCodeAt(k);
        if (sign === 43 || sign === 45) k++;
        if (isDigit(text.charCodeAt(k))) {
          while (k < n && isDigit(text.charCodeAt(k))) k++;
          j = k;
        }
      }
      emit(`$${next++}`);
      i = j;
      continue;
    }
    let j = i + 1;
    while (j < n && isWordChar(text.charCodeAt(j)) && isWordChar(c)) j++;
    emit(text.slice(i, j));
    i = j;
  }
  if (out.length > MAX_SHAPE_LENGTH) return `${out.slice(0, MAX_SHAPE_LENGTH - 1)}…`;
  return i < n ? `${out}…` : out;
}

/** The index after the closing quote; a doubled quote stays inside, as does `\'` with escapes on. */
function closeQuote(text: string, from: number, quote: number, escapes: boolean): number {
  let j = from;
  while (j < text.length) {
    const c = text.charCodeAt(j);
    if (escapes && c === 92) {
      j += 2;
      continue;
    }
    if (c === quote) {
      if (text.charCodeAt(j + 1) === quote) {
        j += 2;
        continue;
      }
      return j + 1;
    }
    j++;
  }
  return text.length;
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

function isStringPrefix(c: number): boolean {
  // E, B, X, N in either case
  return c === 69 || c === 101 || c === 66 || c === 98 || c === 88 || c === 120 || c === 78 || c === 110;
}

function isWordChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c > 127;
}
