// What the schema drift check found; no imports, so the console's context can name it.

/** One configured table in one region, compared with the same table in the reference region. */
export interface SchemaDriftRow {
  readonly table: string;
  readonly region: string;
  /** `same`, `differs`, `missing` (no such table there), or `unknown` (the region did not answer). */
  readonly status: "same" | "differs" | "missing" | "unknown";
  /** What differs, or why it is unknown; empty when the same. */
  readonly detail: string;
}

export interface SchemaDriftReport {
  /** The region every other is compared with: home, or the first that answered. */
  readonly reference: string | undefined;
  readonly rows: readonly SchemaDriftRow[];
  readonly checkedAt: Date | undefined;
}
