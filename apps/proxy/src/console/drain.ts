import type { BackendHealth } from "@geo/pool";
import { PgError } from "@geo/proto";
import { drainNeedsAddress, drainNotAllowed, noReplicasConfigured } from "../replicas/replica-errors.js";
import type { ConsoleHandler, ConsoleResult } from "./console-command.js";
import { consoleSyntaxError } from "./console-errors.js";
import { yesNo } from "./console-text.js";
import type { ConsoleContext } from "./context.js";

export const DRAIN_COLUMNS = ["region", "endpoint", "health", "drained"] as const;

function isLoopback(address: string | undefined): boolean {
  if (address === undefined) return false;
  const plain = address.startsWith("::ffff:") ? address.slice(7) : address;
  return plain === "::1" || plain.startsWith("127.");
}

/**
 * Who may take replicas out of service: under trust authentication nobody is known, so only a
 * client on this machine; otherwise the roles listed in `[auth] operators`.
 */
function refusal(command: string, ctx: ConsoleContext): PgError | undefined {
  const auth = ctx.config.auth;
  if (auth.method === "trust")
    return isLoopback(ctx.clientAddress) ? undefined : drainNotAllowed(command, ctx.user, true);
  return auth.operators.includes(ctx.user) ? undefined : drainNotAllowed(command, ctx.user, false);
}

function setDrained(command: "DRAIN" | "UNDRAIN", argument: string, ctx: ConsoleContext): ConsoleResult {
  // Read before the permission check, as PostgreSQL parses a statement before it checks rights.
  const address = argument.replace(/^'(.*)'$/, "$1").trim();
  if (address === "") return drainNeedsAddress(command);
  if (/\s/.test(address)) {
    return consoleSyntaxError(
      `${command} takes one backend, but was given ${JSON.stringify(address)}`,
      `${command} <host:port>`,
      `${command} 10.0.0.6:5432 (SHOW HEALTH lists every backend's endpoint)`,
    );
  }
  const denied = refusal(command, ctx);
  if (denied !== undefined) return denied;
  const replicas = ctx.replicas;
  if (replicas === undefined) return noReplicasConfigured(command);
  let health: BackendHealth;
  try {
    health = command === "DRAIN" ? replicas.health.drain(address) : replicas.health.undrain(address);
  } catch (error) {
    if (error instanceof PgError) return error;
    throw error;
  }
  return {
    columns: DRAIN_COLUMNS,
    rows: [[health.region, health.address, health.state, yesNo(health.drained)]],
    tag: command,
  };
}

/**
 * `DRAIN <host:port>`: the replica serves no more reads (connections it holds finish what they
 * run); SHOW HEALTH shows it drained. Idempotent. A primary cannot be drained (55000).
 */
export const drain: ConsoleHandler = {
  syntax: "DRAIN <host:port>",
  run: (argument, ctx) => setDrained("DRAIN", argument, ctx),
};

/** `UNDRAIN <host:port>`: the replica serves reads again once it qualifies (up, within the lag). */
export const undrain: ConsoleHandler = {
  syntax: "UNDRAIN <host:port>",
  run: (argument, ctx) => setDrained("UNDRAIN", argument, ctx),
};
