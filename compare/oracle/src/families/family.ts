import type { Draw } from "../draw.js";
import type { Step } from "../statement.js";

/** What a family draws: its shape label and the steps to run. */
export interface Drawn {
  readonly shape: string;
  readonly steps: readonly Step[];
}

export type FamilyGenerator = (draw: Draw) => Drawn;

/** A read whose ORDER BY makes its order unique. */
export function ordered(sql: string): Step {
  return { sql, ordered: true };
}

/** A statement returning at most one row, or rows whose order PostgreSQL does not define. */
export function unordered(sql: string): Step {
  return { sql, ordered: false };
}
