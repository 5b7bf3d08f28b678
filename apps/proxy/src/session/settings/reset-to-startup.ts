import { encodeCommandComplete, encodeQuery } from "@geo/proto";
import type { Analysis } from "@geo/sql";
import type { Leg } from "../../executor/leg.js";
import type { Relay, Unit } from "../../executor/relay.js";
import type { SessionSettings } from "../session-settings.js";
import { REPORTED_PARAMETERS } from "../startup.js";

/**
 * RESET returns a setting to its reset value, and PostgreSQL makes a startup parameter the reset
 * value: a client that connected with `application_name=app` and runs `RESET application_name`
 * (or RESET ALL, or DISCARD ALL) has `app` again. A pooled connection's reset values are the
 * server's defaults and the proxy's own application_name, so such a statement is sent as what it
 * means for this client: the RESET followed by the SETs of its startup values. The client still
 * sees the answer of its own statement: its CommandComplete tag, then the ParameterStatus
 * PostgreSQL would send (what changed against what the client was last told), then ReadyForQuery.
 */
export interface ResetToStartup {
  /** Single statements, sent in order (DISCARD ALL refuses to share a query string). */
  readonly statements: readonly string[];
  /** The client's statement's CommandComplete tag. */
  readonly tag: string;
}

/** How the statement must run for the client's startup values to come back; null when as written. */
export function resetToStartup(
  settings: SessionSettings,
  analysis: Analysis,
  inBlock: boolean,
): ResetToStartup | null {
  if (analysis.sessionEffects.length !== 1) return null;
  const effect = analysis.sessionEffects[0]!;
  if (effect.local) return null;
  if (effect.kind === "reset") {
    if (effect.name === undefined) {
      const startup = settings.startupStatements();
      return startup.length === 0 ? null : { statements: ["RESET ALL", ...startup], tag: "RESET" };
    }
    const startup = settings.startupStatement(effect.name);
    // `RESET name` is `SET name TO DEFAULT`: for this client the default is its startup value.
    return startup === undefined ? null : { statements: [startup], tag: "RESET" };
  }
  if (effect.kind === "discard" && effect.value === "all" && !inBlock) {
    // Inside a block DISCARD ALL fails as written, with PostgreSQL's own error.
    const startup = settings.startupStatements();
    return startup.length === 0 ? null : { statements: ["DISCARD ALL", ...startup], tag: "DISCARD ALL" };
  }
  return null;
}

/** What `sendResetToStartup` needs of the session. */
export interface ResetHost {
  readonly relay: Relay;
  readonly settings: SessionSettings;
  writeOnLeg(
    leg: Leg,
    sql: string,
    mode: "relay" | "quiet" | "silent",
    extended: boolean,
    done?: Unit["done"],
  ): void;
  recordEffects(leg: Leg | null, analyses: readonly Analysis[]): void;
  afterReady(leg: Leg, status: string | null): void;
  readyForQuery(): Buffer;
}

/**
 * Sends the statements of a `ResetToStartup` on `leg` and queues the client's answer. Errors are
 * the backend's own. In a simple Query the backend's ParameterStatus belong to the proxy's own
 * statements and are not relayed, so the proxy reports the difference itself; in the extended
 * protocol the backend reports it at Sync, which the client's Sync is relayed with.
 */
export function sendResetToStartup(
  host: ResetHost,
  leg: Leg,
  analysis: Analysis,
  reset: ResetToStartup,
  mode: { readonly extended: boolean; readonly final: boolean },
): void {
  const relay = host.relay;
  const last = reset.statements.length - 1;
  let failed = false;
  if (mode.extended) {
    for (const [i, sql] of reset.statements.entries()) {
      host.writeOnLeg(leg, sql, "quiet", true, (unit) => {
        if (unit.failed) failed = true;
        else if (i === last && !failed) record(host, leg, analysis);
      });
    }
    // After an error the relay skips this up to Sync, as the backend skips the rest.
    relay.local({ bytes: encodeCommandComplete({ tag: reset.tag }) });
    return;
  }
  let before: Map<string, string> | null = null;
  relay.local({
    bytes: () => {
      // What the client was last told: this connection's values, once the proxy's own replays ran.
      before = new Map(leg.connection.parameters);
      return null;
    },
  });
  for (const [i, sql] of reset.statements.entries()) {
    relay.expect({
      leg,
      kind: "query",
      mode: "quiet",
      dropReadyForQuery: true,
      done: (unit, status) => {
        if (unit.failed) failed = true;
        if (i !== last) return;
        if (!failed) record(host, leg, analysis);
        host.afterReady(leg, status);
      },
    });
    leg.write(encodeQuery({ sql }));
  }
  relay.local({
    bytes: () => {
      const parts: Buffer[] = [];
      if (!failed) {
        parts.push(encodeCommandComplete({ tag: reset.tag }));
        parts.push(...relay.report(changedParameters(before ?? new Map(), leg.connection.parameters)));
      }
      if (mode.final) parts.push(host.readyForQuery());
      return parts.length === 0 ? null : Buffer.concat(parts);
    },
  });
}

function record(host: ResetHost, leg: Leg, analysis: Analysis): void {
  host.settings.sentAsStartup();
  host.recordEffects(leg, [analysis]);
}

/** Each reported parameter whose value changed, in the order PostgreSQL reports them. */
export function changedParameters(
  before: ReadonlyMap<string, string>,
  after: ReadonlyMap<string, string>,
): [string, string][] {
  const changed: [string, string][] = [];
  for (const name of REPORTED_PARAMETERS) {
    const value = after.get(name);
    if (value !== undefined && value !== before.get(name)) changed.push([name, value]);
  }
  return changed;
}
