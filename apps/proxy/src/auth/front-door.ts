import type { Socket } from "node:net";
import { encodeErrorResponse, type PgError } from "@geo/proto";
import { tooManyLoggingIn, tooManyLoggingInFrom } from "./auth-errors.js";

import type { Admitted, FrontDoorOptions } from "./front-door-options.js";
import { type DoorSlots, endConnection, Handshake, noop } from "./handshake.js";

export type { Admitted, FrontDoorOptions } from "./front-door-options.js";

/**
 * Everything between accept() and the StartupMessage reaching a session: SSLRequest (TLS with the
 * configured certificate, or 'N'), GSSENCRequest ('N'), direct TLS, CancelRequest, and the
 * client's authentication. A connection that gets through is handed on with its StartupMessage
 * pushed back into the socket, so the session reads it as if it came first; the session then sends
 * AuthenticationOk and the rest of the login. Whatever goes wrong here closes this connection only.
 *
 * @example
 * ```ts
 * const admitted = await door.admit(socket);
 * if (admitted !== null) { new Session(admitted.socket, runtime); admitted.socket.resume(); }
 * ```
 */
export class FrontDoor implements DoorSlots {
  /** Connections holding a login slot, oldest first. */
  private readonly waiting = new Set<Handshake>();
  /** The same, by client address. */
  private readonly byAddress = new Map<string, Set<Handshake>>();
  /** Failed logins waiting out their delay without a slot, oldest first. */
  private readonly delaying = new Set<Handshake>();
  private readonly delayingByAddress = new Map<string, number>();

  constructor(readonly options: FrontDoorOptions) {}

  /** Connections that have not finished logging in, failed ones waiting out their delay included. */
  get pending(): number {
    return this.waiting.size + this.delaying.size;
  }

  /** Connections holding a login slot (what `max_unauthenticated` caps). */
  get loggingIn(): number {
    return this.waiting.size;
  }

  /**
   * Takes a new connection through the door. One address may hold at most
   * `maxUnauthenticatedPerAddress` slots and everyone together `maxUnauthenticated`; when a cap is
   * reached, the oldest connection under it that has sent nothing yet is closed to make room, and
   * only without one is the newcomer refused (53300). A flood of silent sockets therefore cannot
   * keep others out, and one address cannot take more than its share.
   */
  admit(socket: Socket): Promise<Admitted | null> {
    const address = socket.remoteAddress ?? "unknown";
    const { maxUnauthenticated, maxUnauthenticatedPerAddress } = this.options;
    const mine = this.byAddress.get(address);
    if (mine !== undefined && mine.size >= maxUnauthenticatedPerAddress && !evictSilent(mine))
      return refuse(socket, tooManyLoggingInFrom(address, maxUnauthenticatedPerAddress));
    if (this.waiting.size >= maxUnauthenticated && !evictSilent(this.waiting))
      return refuse(socket, tooManyLoggingIn(maxUnauthenticated));
    const handshake = new Handshake(socket, address, this.options, this);
    this.waiting.add(handshake);
    let set = this.byAddress.get(address);
    if (set === undefined) {
      set = new Set();
      this.byAddress.set(address, set);
    }
    set.add(handshake);
    return handshake.result;
  }

  /** Ends every connection still logging in (shutdown). */
  close(): void {
    for (const handshake of [...this.waiting, ...this.delaying]) handshake.abort();
  }

  /**
   * @internal A failed login starts its delay: its slot is freed for others, unless its address
   * (or everyone) already has that many failures waiting, which bounds the sockets a guesser holds.
   */
  startDelay(handshake: Handshake): void {
    const address = handshake.address;
    const delayed = this.delayingByAddress.get(address) ?? 0;
    if (
      delayed >= this.options.maxUnauthenticatedPerAddress ||
      this.delaying.size >= this.options.maxUnauthenticated
    )
      return;
    this.releaseSlot(handshake);
    this.delaying.add(handshake);
    this.delayingByAddress.set(address, delayed + 1);
  }

  /** @internal The connection left the door (admitted, refused, closed). */
  done(handshake: Handshake): void {
    this.releaseSlot(handshake);
    if (this.delaying.delete(handshake)) {
      const left = (this.delayingByAddress.get(handshake.address) ?? 1) - 1;
      if (left <= 0) this.delayingByAddress.delete(handshake.address);
      else this.delayingByAddress.set(handshake.address, left);
    }
  }

  private releaseSlot(handshake: Handshake): void {
    if (!this.waiting.delete(handshake)) return;
    const set = this.byAddress.get(handshake.address);
    set?.delete(handshake);
    if (set?.size === 0) this.byAddress.delete(handshake.address);
  }
}

/** Closes the oldest connection of `slots` that has sent nothing; false when there is none. */
function evictSilent(slots: ReadonlySet<Handshake>): boolean {
  for (const handshake of slots) {
    if (handshake.silent) {
      handshake.evict();
      return true;
    }
  }
  return false;
}

function refuse(socket: Socket, error: PgError): Promise<null> {
  socket.on("error", noop);
  endConnection(socket, encodeErrorResponse(error));
  return Promise.resolve(null);
}
