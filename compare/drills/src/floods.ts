import { readdirSync, readFileSync } from "node:fs";
import { connect } from "node:net";
import pg from "pg";
import { APP_USER } from "./bank.js";
import { sleep } from "./proxy-process.js";

/** Clients that log in and out as fast as they can until `until`, every other one with a wrong password. */
export async function loginFlood(
  port: number,
  clients: number,
  until: number,
): Promise<{ accepted: number; refused: number }> {
  const tally = { accepted: 0, refused: 0 };
  await Promise.all(
    Array.from({ length: clients }, async (_, i) => {
      while (Date.now() < until) {
        const client = new pg.Client({
          host: "127.0.0.1",
          port,
          user: APP_USER.name,
          password: i % 2 === 0 ? APP_USER.password : "not-the-password",
          database: "postgres",
          connectionTimeoutMillis: 5000,
        });
        client.on("error", () => undefined);
        try {
          await client.connect();
          tally.accepted++;
        } catch {
          tally.refused++;
        } finally {
          await client.end().catch(() => undefined);
        }
      }
    }),
  );
  return tally;
}

function startup(params: Record<string, string>, version = 196608): Buffer {
  const body = Buffer.concat([
    ...Object.entries(params).flatMap(([k, v]) => [Buffer.from(`${k}\0${v}\0`)]),
    Buffer.from([0]),
  ]);
  const head = Buffer.alloc(8);
  head.writeInt32BE(8 + body.length, 0);
  head.writeInt32BE(version, 4);
  return Buffer.concat([head, body]);
}

function message(code: string, body: Buffer, length = body.length + 4): Buffer {
  const head = Buffer.alloc(5);
  head.write(code, 0, "latin1");
  head.writeInt32BE(length, 1);
  return Buffer.concat([head, body]);
}

/** The kinds of bad input the malformed flood sends, each on a connection of its own. */
const MALFORMED: readonly ((random: () => number) => Buffer)[] = [
  (random) =>
    Buffer.from(Array.from({ length: 1 + Math.floor(random() * 200) }, () => Math.floor(random() * 256))),
  () => Buffer.from([0, 0, 0, 3]),
  () => Buffer.from([0x7f, 0xff, 0xff, 0xff, 0, 3, 0, 0]),
  () => startup({ user: APP_USER.name, database: "postgres" }, 0x00090009),
  () =>
    Buffer.concat([
      Buffer.from([0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]),
      Buffer.from("garbage after SSLRequest"),
    ]),
  (random) => {
    const cancel = Buffer.alloc(16);
    cancel.writeInt32BE(16, 0);
    cancel.writeInt32BE(80877102, 4);
    cancel.writeInt32BE(Math.floor(random() * 2 ** 31), 8);
    cancel.writeInt32BE(Math.floor(random() * 2 ** 31), 12);
    return cancel;
  },
  // A good startup, then a SASL answer whose length runs past the message, then one far too long.
  () =>
    Buffer.concat([
      startup({ user: APP_USER.name, database: "postgres" }),
      message("p", Buffer.from("SCRAM-SHA-256\0\0\0\0\xff"), 4096),
    ]),
  () =>
    Buffer.concat([
      startup({ user: APP_USER.name, database: "postgres" }),
      message("p", Buffer.alloc(0), 2 ** 30),
    ]),
  () => startup({ user: "x".repeat(20_000), database: "postgres" }),
  () => Buffer.concat([startup({ user: APP_USER.name }), message("Q", Buffer.from("SELECT 1\0"))]),
];

/**
 * Connections sending bad bytes until `until`: random bytes, impossible lengths, an unknown
 * protocol version, garbage after SSLRequest, cancel requests for nobody, broken SASL answers,
 * a query before authentication. Returns how many were sent and how many the proxy closed.
 */
export async function malformedFlood(
  port: number,
  clients: number,
  until: number,
  random: () => number,
): Promise<{ sent: number; closedByProxy: number }> {
  const tally = { sent: 0, closedByProxy: 0 };
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (Date.now() < until) {
        const payload = MALFORMED[Math.floor(random() * MALFORMED.length)]!(random);
        await new Promise<void>((resolve) => {
          const socket = connect(port, "127.0.0.1");
          let timedOut = false;
          const timer = setTimeout(() => {
            timedOut = true;
            socket.destroy();
            resolve();
          }, 1000);
          socket.on("connect", () => {
            tally.sent++;
            socket.write(payload);
          });
          socket.on("data", () => undefined);
          socket.on("error", () => undefined);
          socket.on("close", () => {
            if (!timedOut) tally.closedByProxy++;
            clearTimeout(timer);
            resolve();
          });
        });
      }
    }),
  );
  return tally;
}

/** Resident memory of a process in MiB, from /proc; 0 when it is gone. */
export function residentMiB(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kib = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
    return kib / 1024;
  } catch {
    return 0;
  }
}

/** The descriptors the process has open now (sockets, files), from /proc; 0 when it is gone. */
export function openDescriptors(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return 0;
  }
}

/**
 * Clients that ask for a large result and never read it: each sends its query and stops reading
 * its socket. Returns a function that closes them.
 */
export async function slowReaders(port: number, clients: number, rows: number): Promise<() => Promise<void>> {
  const opened: pg.Client[] = [];
  for (let i = 0; i < clients; i++) {
    const client = new pg.Client({
      host: "127.0.0.1",
      port,
      user: APP_USER.name,
      password: APP_USER.password,
      database: "postgres",
    });
    client.on("error", () => undefined);
    await client.connect();
    client
      .query(`SELECT repeat('x', 1000) AS filler FROM generate_series(1, ${rows})`)
      .catch(() => undefined);
    // pg keeps its socket as connection.stream; paused, nothing more is read from the proxy.
    (client as unknown as { connection: { stream: { pause(): void } } }).connection.stream.pause();
    opened.push(client);
  }
  return async () => {
    for (const client of opened) {
      (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
      await client.end().catch(() => undefined);
    }
    await sleep(0);
  };
}
