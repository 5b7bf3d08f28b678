import { type Frame, isProtocolFault, type ProtocolFault } from "../../src/index.js";

interface Pullable {
  next(): Frame | ProtocolFault | null;
}

/** Pulls until the framer needs more bytes; copies each frame so it survives later pushes. */
export function drain(framer: Pullable): (Frame | ProtocolFault)[] {
  const out: (Frame | ProtocolFault)[] = [];
  for (let item = framer.next(); item !== null; item = framer.next()) {
    if (isProtocolFault(item)) {
      out.push(item);
      break;
    }
    out.push({ code: item.code, payload: Buffer.from(item.payload), bytes: Buffer.from(item.bytes) });
  }
  return out;
}
