import { type ConsoleHandler, showRows } from "./console-command.js";
import { observationsMissing, unexpectedArgument } from "./console-errors.js";
import { timestampText } from "./console-text.js";

export const SHOW_CLIENTS_COLUMNS = [
  "id",
  "user",
  "database",
  "address",
  "state",
  "connected_at",
  "statements",
] as const;

/**
 * `SHOW CLIENTS`: every client connection open now, oldest first. `state` is `login` (not logged
 * in yet), `idle`, `active` (a statement in flight; the connection running SHOW CLIENTS is one),
 * or `idle in transaction`. `statements` counts what it ran since it connected.
 */
export const showClients: ConsoleHandler = {
  syntax: "SHOW CLIENTS",
  run(argument, ctx) {
    if (argument !== "") return unexpectedArgument("SHOW CLIENTS", argument);
    if (ctx.observed === undefined) return observationsMissing("SHOW CLIENTS");
    const rows = [...ctx.observed.clients()]
      .sort((a, b) => a.id - b.id)
      .map((client) => [
        String(client.id),
        client.user,
        client.database,
        client.address,
        client.state,
        timestampText(client.connectedAt),
        String(client.statements),
      ]);
    return showRows(SHOW_CLIENTS_COLUMNS, rows);
  },
};
