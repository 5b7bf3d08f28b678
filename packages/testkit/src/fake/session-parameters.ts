/**
 * The settings PostgreSQL 15 reports with ParameterStatus at startup and again whenever they change
 * (GUC_REPORT). Drivers read them: node-postgres and postgres.js check integer_datetimes,
 * standard_conforming_strings and client_encoding.
 */
export function reportedParameters(user: string, applicationName: string): Record<string, string> {
  return {
    application_name: applicationName,
    client_encoding: "UTF8",
    DateStyle: "ISO, MDY",
    default_transaction_read_only: "off",
    in_hot_standby: "off",
    integer_datetimes: "on",
    IntervalStyle: "postgres",
    is_superuser: "on",
    server_encoding: "UTF8",
    server_version: "15.8",
    session_authorization: user,
    standard_conforming_strings: "on",
    TimeZone: "UTC",
  };
}

/** Settings SHOW can answer besides the reported ones. */
export const extraSettings: Readonly<Record<string, string>> = {
  transaction_isolation: "read committed",
  max_prepared_transactions: "20",
  wal_level: "logical",
  search_path: '"$user", public',
  statement_timeout: "0",
};

/** Finds a setting by PostgreSQL's case-insensitive name. */
export function findSettingName(settings: Record<string, string>, name: string): string | undefined {
  const lower = name.toLowerCase();
  return Object.keys(settings).find((key) => key.toLowerCase() === lower);
}

/** `SET [SESSION] name { = | TO } value`; SET LOCAL and other forms yield undefined. */
export function parseSet(normalized: string): { name: string; value: string } | undefined {
  const match = /^SET\s+(?:SESSION\s+)?([A-Za-z_][A-Za-z0-9_.]*)\s*(?:=|\s+TO\s+)\s*(.+)$/i.exec(normalized);
  if (match === null || match[1]!.toUpperCase() === "LOCAL") return undefined;
  let value = match[2]!.trim();
  if (/^'.*'$/.test(value)) value = value.slice(1, -1).replaceAll("''", "'");
  else if (/^".*"$/.test(value)) value = value.slice(1, -1);
  return { name: match[1]!, value };
}
