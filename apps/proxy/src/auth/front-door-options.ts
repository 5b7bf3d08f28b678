import type { Socket } from "node:net";
import type { AuthMethod } from "@geo/core";
import type { PgError } from "@geo/proto";
import type { Logger } from "../log.js";
import type { CancelRegistry } from "../server/cancel-registry.js";
import type { ClientTls } from "../tls/client-tls.js";
import type { FailureThrottle } from "./failure-throttle.js";
import type { PassthroughSecrets } from "./passthrough-secrets.js";
import type { VerifierStore } from "./verifier-store.js";

// What the front door (front-door.ts) is configured with, and what it hands a session.

export interface FrontDoorOptions {
  readonly method: AuthMethod;
  /** Null: no certificate, SSLRequest is answered 'N'. */
  readonly tls: ClientTls | null;
  /** `[auth] timeout_ms`: the whole handshake, TLS included. */
  readonly timeoutMs: number;
  /** `[auth] startup_timeout_ms`: until the StartupMessage arrived, TLS handshake included. */
  readonly startupTimeoutMs: number;
  readonly maxUnauthenticated: number;
  /** `[auth] max_unauthenticated_per_address` */
  readonly maxUnauthenticatedPerAddress: number;
  readonly store: VerifierStore;
  readonly throttle: FailureThrottle;
  readonly cancels: CancelRegistry;
  /** Set with `[auth] passthrough`: where a login leaves the secret it proved. */
  readonly passthrough: PassthroughSecrets | null;
  /**
   * With `[auth] passthrough`: the roles `[auth] users` lists by name alone, which log in without
   * a password when `check` (a login to the home region's server as the role with no secret)
   * gives null, or fail with the error it gives.
   */
  readonly withoutPassword?:
    | {
        readonly roles: ReadonlySet<string>;
        check(role: string): Promise<PgError | null>;
      }
    | undefined;
  /** Keys mock verifiers for unknown roles (random per process). */
  readonly mockSecret: Uint8Array;
  readonly log: Logger;
  /** Regions of the topology: a replication connection is let through only with one. */
  readonly regions: number;
  /** Waits before a failure is answered; injected by tests. */
  readonly sleep?: ((ms: number) => Promise<void>) | undefined;
}

/** What a connection that got through the door is handed on as. */
export interface Admitted {
  /** The plain or TLS socket, paused, with the StartupMessage and any bytes after it pushed back. */
  readonly socket: Socket;
  readonly user: string;
  readonly encrypted: boolean;
}
