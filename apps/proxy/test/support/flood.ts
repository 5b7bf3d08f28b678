import { connect as netConnect, type Socket } from "node:net";
import { encodeStartupMessage } from "@geo/proto";

/** Floods of raw connections at a proxy's port, for the descriptor and memory tests. */

/** A socket to `port` that has sent `bytes` (nothing when empty); an error resolves it too. */
export function openSending(port: number, bytes: Buffer): Promise<Socket> {
  return new Promise((resolve) => {
    const socket = netConnect(port, "127.0.0.1", () => {
      if (bytes.length === 0) resolve(socket);
      else socket.write(bytes, () => resolve(socket));
    });
    socket.on("error", () => resolve(socket));
  });
}

/** `count` connections sending `bytes()`, `wave` at a time; the client ends stay open. */
export async function flood(
  port: number,
  count: number,
  wave: number,
  bytes: () => Buffer,
): Promise<Socket[]> {
  const sockets: Socket[] = [];
  for (let i = 0; i < count; i += wave)
    sockets.push(...(await Promise.all(Array.from({ length: wave }, () => openSending(port, bytes())))));
  return sockets;
}

export const startupBytes = (): Buffer =>
  encodeStartupMessage({ parameters: { user: "postgres", database: "postgres" } });

/** Junk of a few kinds: a length past any limit, a length below 4, an unknown protocol, random bytes. */
export function garbageBytes(): Buffer {
  const kinds = [
    Buffer.from([0x7f, 0xff, 0xff, 0xff, 0, 3, 0, 0]),
    Buffer.from([0, 0, 0, 2]),
    Buffer.from([0, 0, 0, 8, 0, 9, 0, 9]),
    Buffer.from(Array.from({ length: 64 }, () => Math.floor(Math.random() * 256))),
  ];
  return kinds[Math.floor(Math.random() * kinds.length)]!;
}
