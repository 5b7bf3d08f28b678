import { ident, literal, qualified } from "./sql-text.js";

/** The setting only a move's own transaction turns on (SET LOCAL): guards let its writes through. */
export const MOVING_SETTING = "geoproxy.moving";
export const GUARD_NAME = "geoproxy_guard";

/** The guard function of one table: `geoproxy_guard_<table>`, schema dots and odd characters as `_`. */
export function guardFunctionName(table: string): string {
  return `${GUARD_NAME}_${table.toLowerCase().replace(/[^a-z0-9_]/g, "_")}`.slice(0, 63);
}

/**
 * The guard function of one table in one region: refuses (40001) a write whose key that region's
 * own directory places elsewhere. A key with no entry is not refused: it was never moved, and a
 * first write places it where it lands. The key column and the region are written into the
 * function, so PL/pgSQL plans one index lookup and reads the column directly (no row-to-JSON).
 */
export function guardFunctionSql(
  directoryTable: string,
  table: string,
  keyColumn: string,
  region: string,
): string {
  const key = ident(keyColumn);
  return `CREATE OR REPLACE FUNCTION ${ident(guardFunctionName(table))}() RETURNS trigger LANGUAGE plpgsql AS $guard$
DECLARE
  placed text;
  row_key text;
BEGIN
  IF current_setting(${literal(MOVING_SETTING)}, true) = 'on' THEN
    RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
  END IF;
  row_key := CASE WHEN TG_OP = 'DELETE' THEN OLD.${key} ELSE NEW.${key} END;
  SELECT region INTO placed FROM ${qualified(directoryTable)} WHERE key = row_key;
  IF placed IS NOT NULL AND placed <> ${literal(region)} THEN
    RAISE EXCEPTION 'key % lives in region %, not in %', row_key, placed, ${literal(region)}
      USING ERRCODE = '40001',
            HINT = 'The key has moved; retry, and geoproxy sends the statement where the key is.';
  END IF;
  RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END
$guard$`;
}

/** The guard trigger on one geo-partitioned table. */
export function guardTriggerSql(table: string): string {
  return `CREATE OR REPLACE TRIGGER ${ident(GUARD_NAME)} BEFORE INSERT OR UPDATE OR DELETE ON ${qualified(table)} FOR EACH ROW EXECUTE FUNCTION ${ident(guardFunctionName(table))}()`;
}

export function dropGuardSql(table: string): string {
  return `DROP TRIGGER IF EXISTS ${ident(GUARD_NAME)} ON ${qualified(table)}`;
}
