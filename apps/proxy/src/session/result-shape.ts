import { BackendCode, decodeRowDescription, type Frame, isProtocolFault } from "@geo/proto";

/**
 * The columns a prepared statement answers with (names, type OIDs, type modifiers) as one
 * comparable string, from a RowDescription; "" for NoData; null for any other message.
 *
 * A client that described its statement decodes every later row by that description. On one
 * server, a statement whose tables changed shape since fails with "cached plan must not change
 * result type"; a copy the proxy prepares afresh on another pooled connection would instead
 * answer with the new columns, which the client would decode by the old ones. Comparing shapes
 * lets the proxy answer as the server would.
 */
export function shapeOf(frame: Frame): string | null {
  if (frame.code === BackendCode.NoData) return "";
  if (frame.code !== BackendCode.RowDescription) return null;
  const description = decodeRowDescription(frame.payload);
  if (isProtocolFault(description)) return null;
  return description.fields
    .map((field) => `${field.name}\u0000${field.typeOid}\u0000${field.typeModifier}`)
    .join("\u0001");
}
