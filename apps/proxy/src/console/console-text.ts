/**
 * How console answers spell values, the way psql shows PostgreSQL's: booleans as `yes`/`no` (as
 * SHOW REGIONS does), timestamps as `timestamptz` text in UTC, milliseconds with three decimals.
 */
export function yesNo(value: boolean): string {
  return value ? "yes" : "no";
}

/** `2026-11-30 10:00:00+00`: a timestamptz as PostgreSQL writes it in UTC, to the second. */
export function timestampText(at: Date | string): string {
  const iso = typeof at === "string" ? at : at.toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}+00`;
}

export function millisecondsText(ms: number | null): string | null {
  return ms === null ? null : ms.toFixed(3);
}
