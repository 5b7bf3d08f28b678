import { connect, createServer, type Server } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { type DelayRelay, startDelayRelay } from "../src/delay-relay.js";
import { pingPong, startEcho } from "../src/ping-pong.js";

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  while (open.length > 0) await open.pop()!.close();
});

async function relayOverEcho(rttMs: number): Promise<DelayRelay> {
  const echo = await startEcho();
  open.push(echo);
  const relay = await startDelayRelay({ target: { host: "127.0.0.1", port: echo.port }, rttMs });
  open.push(relay);
  return relay;
}

describe("the delaying TCP relay", () => {
  it("adds at least the configured round trip to every exchange", async () => {
    const relay = await relayOverEcho(40);
    const samples = await pingPong(relay.port, 8);
    expect(samples).toHaveLength(8);
    for (const sample of samples) expect(sample).toBeGreaterThanOrEqual(40);
  });

  it("delivers every byte, in order, both ways, however the stream is cut into chunks", async () => {
    const relay = await relayOverEcho(6);
    const payload = Buffer.from(Array.from({ length: 200_000 }, (_, i) => (i * 7919) % 251));
    const socket = connect({ host: "127.0.0.1", port: relay.port });
    const received: Buffer[] = [];
    let length = 0;
    const done = new Promise<void>((resolve) =>
      socket.on("data", (chunk: Buffer) => {
        received.push(chunk);
        length += chunk.length;
        if (length >= payload.length) resolve();
      }),
    );
    for (let offset = 0; offset < payload.length; offset += 1 + (offset % 4093)) {
      socket.write(payload.subarray(offset, offset + 1 + (offset % 4093)));
    }
    await done;
    socket.destroy();
    expect(Buffer.concat(received).equals(payload)).toBe(true);
  });

  it("passes the end of the client's stream on to the server after the data", async () => {
    const ended = new Promise<string>((resolve) => {
      const server: Server = createServer((socket) => {
        let text = "";
        socket.on("data", (chunk: Buffer) => {
          text += chunk.toString();
        });
        socket.on("end", () => {
          socket.end();
          resolve(text);
        });
      });
      server.listen(0, "127.0.0.1", async () => {
        const address = server.address();
        const port = typeof address === "object" && address !== null ? address.port : 0;
        open.push({ close: () => new Promise<void>((r) => server.close(() => r())) });
        const relay = await startDelayRelay({ target: { host: "127.0.0.1", port }, rttMs: 10 });
        open.push(relay);
        const socket = connect({ host: "127.0.0.1", port: relay.port });
        socket.end("last words");
      });
    });
    expect(await ended).toBe("last words");
  });

  it("counts the connections it relayed", async () => {
    const relay = await relayOverEcho(2);
    await pingPong(relay.port, 1);
    await pingPong(relay.port, 1);
    expect(relay.connections).toBe(2);
  });
});
