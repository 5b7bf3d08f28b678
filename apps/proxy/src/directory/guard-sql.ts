import { ident, literal, qualified } from "./sql-text.js";

/** The setting only a move's own transaction turns on (SET LOCAL): guards let its writes through. */
export const MOVING_SETTING = "geoproxy.moving";
export const GUARD_NAME = "geoproxy_guard";

/**
 * The guard function of one region: refuses (40001) a write whose key that region's own
 * directory places elsewhere. A key with no entry is not refused: it was never moved, and a
 * first write places it where it lands. The region's id and the key column are trigger
 * arguments, so one function serves every table.
 */
export function guardFunctionSql(directoryTable: string): string {
  return `CREATE OR REPLACE FUNCTION ${ident(GUARD_NAME)}() RETURNS trigger LANGUAGE plpgsql AS $guard$
DECLARE
  row_key text;
  placed text;
BEGIN
  IF current_setting(${literal(MOVING_SETTING)}, true) = 'on' THEN
    RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
  END IF;
  IF TG_OP = 'DELETE' THEN
    row_key := to_jsonb(OLD) ->> TG_ARGV[0];
  ELSE
    row_key := to_jsonb(NEW) ->> TG_ARGV[0];
  END IF;
  SELECT region INTO placed FROM ${qualified(directoryTable)} WHERE key = row_key;
  IF placed IS NOT NULL AND placed <> TG_ARGV[1] THEN
    RAISE EXCEPTION 'key % lives in region %, not in %', row_key, placed, TG_ARGV[1]
      USING ERRCODE = '40001',
            HINT = 'The key has moved; retry, and geoproxy sends the statement where the key is.';
  END IF;
  RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END
$guard$`;
}

/** The guard on one geo-partitioned table of `region`. */
export function guardTriggerSql(table: string, keyColumn: string, region: string): string {
  return `CREATE OR REPLACE TRIGGER ${ident(GUARD_NAME)} BEFORE INSERT OR UPDATE OR DELETE ON ${qualified(table)} FOR EACH ROW EXECUTE FUNCTION ${ident(GUARD_NAME)}(${literal(keyColumn)}, ${literal(region)})`;
}

export function dropGuardSql(table: string): string {
  return `DROP TRIGGER IF EXISTS ${ident(GUARD_NAME)} ON ${qualified(table)}`;
}
