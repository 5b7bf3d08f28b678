import { encodeAuthentication } from "./backend/authentication.js";
import { encodeBindComplete } from "./backend/bind-complete.js";
import { encodeCloseComplete } from "./backend/close-complete.js";
import { encodeEmptyQueryResponse } from "./backend/empty-query-response.js";
import { encodeNoData } from "./backend/no-data.js";
import { encodeParseComplete } from "./backend/parse-complete.js";
import { encodePortalSuspended } from "./backend/portal-suspended.js";
import { encodeReadyForQuery } from "./backend/ready-for-query.js";
import { encodeCopyDone } from "./common/copy-done.js";
import { encodeFlush } from "./frontend/flush.js";
import { encodeSync } from "./frontend/sync.js";
import { encodeTerminate } from "./frontend/terminate.js";

/**
 * Messages whose bytes never change, built once at load. Shared: write them to sockets, never
 * write into them.
 */
export const Messages = {
  sync: encodeSync(),
  flush: encodeFlush(),
  terminate: encodeTerminate(),
  copyDone: encodeCopyDone(),
  readyForQueryIdle: encodeReadyForQuery({ status: "I" }),
  readyForQueryInTransaction: encodeReadyForQuery({ status: "T" }),
  readyForQueryFailed: encodeReadyForQuery({ status: "E" }),
  parseComplete: encodeParseComplete(),
  bindComplete: encodeBindComplete(),
  closeComplete: encodeCloseComplete(),
  noData: encodeNoData(),
  portalSuspended: encodePortalSuspended(),
  emptyQueryResponse: encodeEmptyQueryResponse(),
  authenticationOk: encodeAuthentication({ type: "AuthenticationOk" }),
  authenticationCleartextPassword: encodeAuthentication({ type: "AuthenticationCleartextPassword" }),
  authenticationSaslScram: encodeAuthentication({
    type: "AuthenticationSASL",
    mechanisms: ["SCRAM-SHA-256"],
  }),
  /** Unframed one-byte answers to SSLRequest (and 'N' to GSSENCRequest). */
  sslAccepted: Buffer.from("S", "latin1"),
  sslRefused: Buffer.from("N", "latin1"),
  gssEncryptionAccepted: Buffer.from("G", "latin1"),
} as const;
