import {
  encodeAuthentication,
  encodeBackendKeyData,
  encodeNegotiateProtocolVersion,
  encodeParameterStatus,
  type PgError,
  protocolMajor,
  protocolMinor,
  type StartupMessage,
} from "@geo/proto";
import { missingUser, refuseReplication, unsupportedProtocol } from "../errors/catalog.js";

/** The protocol minor version geoproxy speaks: 3.0. */
export const SUPPORTED_MINOR = 0;

/**
 * The ParameterStatus names a PostgreSQL 15 server reports to its clients (GUC_REPORT), in the
 * order it sends them.
 */
export const REPORTED_PARAMETERS = [
  "application_name",
  "client_encoding",
  "DateStyle",
  "default_transaction_read_only",
  "in_hot_standby",
  "integer_datetimes",
  "IntervalStyle",
  "is_superuser",
  "server_encoding",
  "server_version",
  "session_authorization",
  "standard_conforming_strings",
  "TimeZone",
] as const;

export type StartupCheck =
  | {
      readonly ok: true;
      readonly user: string;
      readonly database: string;
      readonly negotiate: Buffer | null;
      /** A replication connection (`replication` other than false), relayed as it is (replication-pipe.ts). */
      readonly replication: boolean;
    }
  | { readonly ok: false; readonly error: PgError };

/**
 * Checks a StartupMessage: protocol 3 (a newer minor version or `_pq_.` options are answered with
 * NegotiateProtocolVersion, as PostgreSQL does, and the session continues in 3.0), and a user. A
 * replication connection is accepted only when `replicationRegions` is 1: with several regions no
 * server streams the changes of every row.
 */
export function checkStartup(message: StartupMessage, replicationRegions: number): StartupCheck {
  const major = protocolMajor(message.protocolVersion);
  const minor = protocolMinor(message.protocolVersion);
  if (major !== 3) return { ok: false, error: unsupportedProtocol(major, minor) };
  const user = message.parameters["user"];
  if (user === undefined || user === "") return { ok: false, error: missingUser() };
  const parameter = message.parameters["replication"];
  // Any other value is the server's to judge: it is sent on as given.
  const replication =
    parameter !== undefined && !["false", "off", "no", "0"].includes(parameter.toLowerCase());
  if (replication && replicationRegions !== 1)
    return { ok: false, error: refuseReplication(replicationRegions) };
  const database = message.parameters["database"] || user;
  const unknownOptions = Object.keys(message.parameters).filter((name) => name.startsWith("_pq_."));
  const negotiate =
    minor > SUPPORTED_MINOR || unknownOptions.length > 0
      ? encodeNegotiateProtocolVersion({ newestMinor: SUPPORTED_MINOR, unrecognizedOptions: unknownOptions })
      : null;
  return { ok: true, user, database, negotiate, replication };
}

/** AuthenticationOk, every reported parameter, BackendKeyData: what follows a successful login. */
export function loginReply(
  parameters: ReadonlyMap<string, string>,
  key: { processId: number; secretKey: Buffer },
): Buffer {
  const parts: Buffer[] = [encodeAuthentication({ type: "AuthenticationOk" })];
  for (const name of REPORTED_PARAMETERS) {
    const value = parameters.get(name);
    if (value !== undefined) parts.push(encodeParameterStatus({ name, value }));
  }
  parts.push(encodeBackendKeyData(key));
  return Buffer.concat(parts);
}

/**
 * The ParameterStatus values of a login: what the server reported for this client's own settings
 * and user (`reported`, from the startup check), else the home region's values with the client's
 * own startup parameters as given.
 */
export function loginParameters(
  home: ReadonlyMap<string, string>,
  reported: ReadonlyMap<string, string>,
  startup: Readonly<Record<string, string>>,
): Map<string, string> {
  const parameters = new Map(home);
  if (reported.size > 0) {
    for (const [name, value] of reported) parameters.set(name, value);
    return parameters;
  }
  parameters.set("application_name", "");
  for (const name of REPORTED_PARAMETERS) {
    const value = startup[name];
    if (value !== undefined) parameters.set(name, value);
  }
  return parameters;
}
