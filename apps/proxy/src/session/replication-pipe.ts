import type { BackendConnection } from "@geo/pool";
import {
  BackendCode,
  decodeErrorResponse,
  encodeAuthentication,
  encodeBackendKeyData,
  encodeParameterStatus,
  encodeReadyForQuery,
  type Frame,
  FrontendCode,
  isProtocolFault,
  PgError,
  type StartupMessage,
} from "@geo/proto";
import type { ClientPipe, SessionPort } from "../engine/session-port.js";
import { internalError } from "../errors/catalog.js";

/**
 * A replication connection (`replication=database`, or `true` for physical replication), with
 * one region. PostgreSQL's walsender speaks its own commands (IDENTIFY_SYSTEM,
 * CREATE_REPLICATION_SLOT, START_REPLICATION) and then streams in COPY BOTH mode, none of which
 * a pooled connection could carry: after the client's login the proxy opens a connection of its
 * own to the region's primary with the client's startup parameters (`replication` included),
 * outside every pool, and from then on relays every message both ways unchanged. The backend
 * connection ends with the client's, and the client's with it.
 */
export async function startReplication(
  session: SessionPort,
  message: StartupMessage,
  negotiate: Buffer | null,
): Promise<void> {
  const region = session.runtime.router.topology.home.id;
  const { user: _user, database: _database, ...startupParams } = message.parameters;
  let connection: BackendConnection;
  try {
    connection = await session.runtime.pools.connectOwn(
      region,
      session.user,
      session.database,
      startupParams,
    );
  } catch (error) {
    // The server's own refusal (no pg_hba.conf entry for replication, a role without REPLICATION).
    session.fatal(error instanceof PgError ? error : internalError(error));
    return;
  }
  if (session.phase === "closed") {
    connection.destroy();
    return;
  }
  const pipe = new ReplicationPipe(session, connection);
  session.replication = pipe;
  // A CancelRequest with the client's key cancels the walsender's command (a slot creation
  // waiting for a snapshot, say).
  session.cancelHooks.add(() => pipe.cancel());
  session.cancelKey = session.runtime.cancels.register(session, connection.processId);
  const parts: Buffer[] = [];
  if (negotiate !== null) parts.push(negotiate);
  parts.push(encodeAuthentication({ type: "AuthenticationOk" }));
  for (const [name, value] of connection.parameters) parts.push(encodeParameterStatus({ name, value }));
  parts.push(encodeBackendKeyData(session.cancelKey));
  parts.push(encodeReadyForQuery({ status: connection.txStatus }));
  session.writer.write(Buffer.concat(parts));
  session.log.info(
    { user: session.user, database: session.database, replication: message.parameters["replication"] },
    "replication client logged in",
  );
  session.client.ready();
}

/** The two ends of a replication connection, joined message for message. */
class ReplicationPipe implements ClientPipe {
  /** The server's FATAL reached the client: its closing needs no word of the proxy's. */
  private fatalRelayed = false;
  private paused = false;

  constructor(
    private readonly session: SessionPort,
    private readonly connection: BackendConnection,
  ) {
    connection.setReceiver({
      onFrame: (frame) => this.fromServer(frame),
      onBroken: (error) => this.broken(error),
    });
    void session.closed.then(() => connection.close());
  }

  async fromClient(frame: Frame): Promise<void> {
    if (frame.code === FrontendCode.Terminate) {
      this.session.close();
      return;
    }
    // Copied by the client's connection when it was queued: the bytes outlive this call safely.
    if (!this.connection.write(frame.bytes)) await this.connection.drained();
  }

  cancel(): void {
    if (this.session.phase === "closed") return;
    this.connection
      .cancel()
      .catch((error: unknown) => this.session.log.warn({ err: error }, "cancel failed"));
  }

  private fromServer(frame: Frame): void {
    if (frame.code === BackendCode.ErrorResponse && !this.fatalRelayed) {
      const decoded = decodeErrorResponse(frame.payload);
      if (!isProtocolFault(decoded) && PgError.fromFields(decoded.fields).isFatal) this.fatalRelayed = true;
    }
    // The frame is a view into the backend's read buffer, which only ever grows past it.
    if (this.session.writer.write(frame.bytes) || this.paused) return;
    // The client reads slower than the server streams: stop reading the server meanwhile.
    this.paused = true;
    this.connection.pause();
    this.session.writer.onDrain(() => {
      this.paused = false;
      this.connection.resume();
    });
  }

  private broken(error: PgError): void {
    if (this.fatalRelayed) this.session.close();
    else this.session.fatal(error);
  }
}
