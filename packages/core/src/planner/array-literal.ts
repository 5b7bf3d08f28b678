/**
 * Elements of a one-dimensional PostgreSQL array literal in text form (`{alice,"bob smith",NULL}`),
 * as a parameter bound to `= ANY($1)` arrives in text format. Returns undefined for anything it
 * does not read exactly (nested arrays, bounds decorations), and the planner then assumes any key.
 */
export function parseArrayLiteral(text: string): (string | null)[] | undefined {
  const source = text.trim();
  if (!source.startsWith("{") || !source.endsWith("}")) return undefined;
  const items: (string | null)[] = [];
  let index = 1;
  const end = source.length - 1;
  if (source.slice(1, end).trim() === "") return items;
  while (index <= end) {
    while (source[index] === " ") index++;
    let value = "";
    let quoted = false;
    if (source[index] === '"') {
      quoted = true;
      index++;
      while (index < end && source[index] !== '"') {
        if (source[index] === "\\") index++;
        value += source[index] ?? "";
        index++;
      }
      if (source[index] !== '"') return undefined;
      index++;
    } else {
      while (index < end && source[index] !== ",") {
        const char = source[index]!;
        if (char === "{" || char === '"') return undefined;
        if (char === "\\") index++;
        value += source[index] ?? "";
        index++;
      }
      value = value.trim();
    }
    while (source[index] === " ") index++;
    items.push(!quoted && value.toUpperCase() === "NULL" ? null : value);
    if (index === end) return items;
    if (source[index] !== ",") return undefined;
    index++;
  }
  return undefined;
}
