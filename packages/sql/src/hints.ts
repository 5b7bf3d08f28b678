import type { Hints } from "./analysis.js";
import { unreadableHint } from "./errors.js";

export const NO_HINTS: Hints = Object.freeze({ primary: false });

const HINT_PREFIX = "geo:";

/**
 * Reads the hints of a leading comment. Only a comment whose text begins with `geo:` (in any case) is a hint; any
 * other comment is ignored. A `geo:` comment that does not parse is an error, never ignored: a hint
 * that silently did nothing would route the statement somewhere the application did not ask for.
 */
export function readHints(leadingComment: string | undefined, hintComments = 1): Hints {
  if (leadingComment === undefined) return NO_HINTS;
  const body = leadingComment.trim();
  if (body.slice(0, HINT_PREFIX.length).toLowerCase() !== HINT_PREFIX) return NO_HINTS;
  // Which of two would win is not for the proxy to guess: both are refused.
  if (hintComments > 1)
    throw unreadableHint(body, "a statement takes one geo: comment, and this one has several");
  const words = hintWords(body.slice(HINT_PREFIX.length));
  if (words === undefined) throw unreadableHint(body, "a quoted value is not closed");
  if (words.length === 0) throw unreadableHint(body, "it says nothing");
  let key: string | undefined;
  let region: string | undefined;
  let primary = false;
  for (const word of words) {
    const eq = word.indexOf("=");
    const name = (eq < 0 ? word : word.slice(0, eq)).toLowerCase();
    const value = eq < 0 ? undefined : unquote(word.slice(eq + 1));
    switch (name) {
      case "primary":
        if (value !== undefined) throw unreadableHint(body, "primary takes no value");
        primary = true;
        break;
      case "key":
        if (value === undefined || value.length === 0) throw unreadableHint(body, "key needs a value");
        if (key !== undefined) throw unreadableHint(body, "key is given twice");
        key = value;
        break;
      case "region":
        if (value === undefined || value.length === 0) throw unreadableHint(body, "region needs a value");
        if (region !== undefined) throw unreadableHint(body, "region is given twice");
        region = value;
        break;
      default:
        throw unreadableHint(body, `unknown word ${JSON.stringify(word)}`);
    }
  }
  if (key !== undefined && region !== undefined)
    throw unreadableHint(body, "key and region cannot both be given");
  return {
    primary,
    ...(key === undefined ? {} : { key }),
    ...(region === undefined ? {} : { region }),
  };
}

function unquote(value: string): string {
  if (value.length >= 2) {
    const q = value[0];
    if ((q === "'" || q === '"') && value[value.length - 1] === q) return value.slice(1, -1);
  }
  return value;
}

/** Splits hint words on spaces and commas, keeping quoted values ('bob smith') whole. */
function hintWords(text: string): string[] | undefined {
  const words: string[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i] ?? "";
    if (c === " " || c === "," || c === "\t" || c === "\n" || c === "\r") {
      i++;
      continue;
    }
    let word = "";
    while (i < text.length) {
      const d = text[i] ?? "";
      if (d === " " || d === "," || d === "\t" || d === "\n" || d === "\r") break;
      if (d === "'" || d === '"') {
        const close = text.indexOf(d, i + 1);
        if (close < 0) return undefined;
        word += text.slice(i, close + 1);
        i = close + 1;
        continue;
      }
      word += d;
      i++;
    }
    words.push(word);
  }
  return words;
}
