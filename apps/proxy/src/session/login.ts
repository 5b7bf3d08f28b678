import { regionTimeouts } from "@geo/core";
import type { Lease } from "@geo/pool";
import { Messages, PgError, type StartupMessage } from "@geo/proto";
import type { SessionPort } from "../engine/session-port.js";
import { internalError, shuttingDown } from "../errors/catalog.js";
import type { Leg } from "../executor/leg.js";
import { startReplication } from "./replication-pipe.js";
import { SessionSettings, startupSettings } from "./session-settings.js";
import { checkStartup, loginParameters, loginReply } from "./startup.js";
import { checkStartupSettings, startingSearchPath } from "./startup-settings.js";

/*
 * A client's login after its StartupMessage: the startup packet checked, the settings it connected
 * with checked by a server (as PostgreSQL checks them at connect), its own connection opened under
 * session pooling, and the reply (authentication, ParameterStatus, BackendKeyData, ReadyForQuery).
 */

export function logIn(session: SessionPort, message: StartupMessage): void {
  const check = checkStartup(message, session.runtime.router.topology.regions.length);
  if (!check.ok) {
    session.fatal(check.error);
    return;
  }
  if (session.runtime.shuttingDown) {
    session.fatal(shuttingDown());
    return;
  }
  session.user = check.user;
  session.database = check.database;
  session.client.authenticated();
  if (check.replication) {
    // The server checks its startup settings itself, at connect (replication-pipe.ts).
    startReplication(session, message, check.negotiate).catch((error: unknown) =>
      session.fatal(internalError(error)),
    );
    return;
  }
  session.settings = SessionSettings.fromStartup(message.parameters);
  // Checked now, as PostgreSQL checks them at connect: replayed later, a bad one would fail
  // every statement instead of the login.
  const home = session.runtime.router.topology.home.id;
  checkStartupSettings(
    startupSettings(message.parameters),
    session.runtime.pools,
    () => session.runtime.pools.acquire(home, session.user, session.database),
    // Answers are remembered per role and database: another database may not exist.
    `${session.user}\u0000${session.database}`,
    {
      timeoutMs: regionTimeouts(session.runtime.config.pool, session.runtime.router.topology.home)
        .lookupTimeoutMs,
      onUnanswered: (error) =>
        session.log.warn(
          { region: home, err: error.message },
          "the home region did not answer the check of the login's settings within its lookup_timeout_ms; the login goes on",
        ),
    },
  ).then(
    (reported) => {
      if (reported instanceof PgError) session.fatal(reported);
      else completeLogin(session, message, check.negotiate, reported);
    },
    (error: unknown) => session.fatal(internalError(error)),
  );
}

function completeLogin(
  session: SessionPort,
  message: StartupMessage,
  negotiate: Buffer | null,
  reported: ReadonlyMap<string, string>,
): void {
  // Unqualified names resolve as the role's own search_path says (session/qualified-names.ts).
  session.settings.startingSearchPath = startingSearchPath(reported);
  // As the server reports them to this client: its own settings and user (startup.ts).
  const parameters = loginParameters(session.runtime.homeParameters, reported, message.parameters);
  if (session.phase === "closed") return;
  const pool = session.runtime.config.pool;
  if (
    pool.mode === "session" ||
    pool.sessionRoles.includes(session.user) ||
    pool.sessionDatabases.includes(session.database)
  ) {
    void openOwnConnection(session).then((leg) => {
      if (leg instanceof PgError) session.fatal(leg);
      else if (session.phase !== "closed")
        sendLoginReply(session, parameters, negotiate, leg.connection.processId);
      else session.legs.discard(leg, true);
    });
    return;
  }
  sendLoginReply(session, parameters, negotiate, undefined);
}

/**
 * Session pooling: the client's own home-region connection for its whole session, as with one
 * server. The settings it connected with are replayed there before its first statement.
 */
async function openOwnConnection(session: SessionPort): Promise<Leg | PgError> {
  const home = session.runtime.router.topology.home.id;
  let lease: Lease;
  try {
    lease = await session.runtime.pools.acquireForSession(home, session.user, session.database);
  } catch (error) {
    return error instanceof PgError ? error : internalError(error);
  }
  const leg = session.legs.open(home, lease);
  const replayed = session.replaySettings(leg);
  const failed = replayed === null ? null : await replayed;
  if (failed !== null) {
    leg.retire = true;
    session.legs.discard(leg, true);
    return failed;
  }
  session.ownConnection = true;
  session.legs.pin(leg);
  leg.connection.markDirty("full");
  session.legs.active = leg;
  return leg;
}

function sendLoginReply(
  session: SessionPort,
  parameters: Map<string, string>,
  negotiate: Buffer | null,
  backendPid: number | undefined,
): void {
  // With a connection of its own the client is told its backend's process id, as
  // pg_backend_pid() and the server's views report it.
  session.cancelKey = session.runtime.cancels.register(session, backendPid);
  if (negotiate !== null) session.writer.write(negotiate);
  session.writer.write(loginReply(parameters, session.cancelKey));
  for (const [name, value] of parameters) session.relay.told.set(name, value);
  session.writer.write(Messages.readyForQueryIdle);
  session.log.info({ user: session.user, database: session.database }, "client logged in");
  // Messages the client pipelined behind its StartupMessage waited for session.
  session.client.ready();
}
