import type { BackendConnection, FrameReceiver, Lease } from "@geo/pool";
import {
  BackendCode,
  encodeCommandComplete,
  encodeDataRow,
  encodeErrorResponse,
  encodeQuery,
  encodeReadyForQuery,
  PgError,
} from "@geo/proto";
import { describe, expect, it } from "vitest";
import { Leg } from "../executor/leg.js";
import { RegionChannel } from "./region-channel.js";

/** A connection that records what is written and lets the test answer as the server would. */
class FakeConnection {
  receiver: FrameReceiver | null = null;
  readonly written: Buffer[] = [];
  readonly brokenError = null;
  isPaused = false;

  setReceiver(receiver: FrameReceiver | null): void {
    this.receiver = receiver;
  }
  write(bytes: Buffer | readonly Buffer[]): void {
    this.written.push(...(Buffer.isBuffer(bytes) ? [bytes] : bytes));
  }
  pause(): void {
    this.isPaused = true;
  }
  resume(): void {
    this.isPaused = false;
  }
  cancel(): Promise<void> {
    return Promise.resolve();
  }
  onBroken(): () => void {
    return () => undefined;
  }
  /** Delivers whole encoded backend messages, as the framer would. */
  answer(...messages: Buffer[]): void {
    for (const bytes of messages) {
      this.receiver?.onFrame({ code: bytes[0]!, payload: bytes.subarray(5), bytes });
    }
  }
}

/** The channel reads a leg of the session's set, as a scatter does: the leg diverts its frames to it. */
function channelOn(fake: FakeConnection): RegionChannel {
  const lease = { connection: fake as unknown as BackendConnection } as unknown as Lease;
  return new RegionChannel(
    new Leg(
      "ap-south",
      lease,
      () => undefined,
      () => undefined,
    ),
  );
}

const ready = () => encodeReadyForQuery({ status: "I" });
const setDone = () => encodeCommandComplete({ tag: "SET" });
const sync = Buffer.from([0x53, 0, 0, 0, 4]);

describe("a region channel's prelude (the settings replay sent with the statement)", () => {
  it("is written at once, before the statement, without waiting for its answer", () => {
    const fake = new FakeConnection();
    const channel = channelOn(fake);
    const replay = encodeQuery({ sql: "SET application_name TO 'app'" });
    channel.prelude(replay, () => undefined);
    const statement = Buffer.from("statement");
    channel.write(statement);
    channel.sync(sync);
    expect(fake.written).toEqual([replay, statement, sync]);
    expect(channel.syncsPending).toBe(2);
  });

  it("hands the reader only the statement's replies, the replay's are read and dropped", async () => {
    const fake = new FakeConnection();
    const channel = channelOn(fake);
    channel.prelude(encodeQuery({ sql: "SET a TO 1; SET b TO 2" }), () => undefined);
    channel.write(Buffer.from("statement"));
    channel.sync(sync);
    fake.answer(setDone(), setDone(), ready(), encodeDataRow({ values: [Buffer.from("7")] }));
    const row = await channel.next();
    expect(row.code).toBe(BackendCode.DataRow);
    fake.answer(encodeCommandComplete({ tag: "SELECT 1" }), ready());
    expect((await channel.next()).code).toBe(BackendCode.CommandComplete);
    expect((await channel.next()).code).toBe(BackendCode.ReadyForQuery);
    expect(channel.syncsPending).toBe(0);
  });

  it("lets a channel with only the replay written settle once the replay's ReadyForQuery arrives", async () => {
    const fake = new FakeConnection();
    const channel = channelOn(fake);
    channel.prelude(encodeQuery({ sql: "SET a TO 1" }), () => undefined);
    const settled = channel.settle();
    fake.answer(setDone(), ready());
    await settled;
    expect(channel.syncsPending).toBe(0);
  });

  it("fails the reader with the replay's error, and the statement's replies are still read to the end", async () => {
    const fake = new FakeConnection();
    const channel = channelOn(fake);
    const failures: PgError[] = [];
    channel.prelude(encodeQuery({ sql: "SET a TO 'bad'" }), (error) => failures.push(error));
    channel.write(Buffer.from("statement"));
    channel.sync(sync);
    fake.answer(
      encodeErrorResponse(new PgError({ code: "22023", message: "invalid value for parameter" })),
      ready(),
      encodeCommandComplete({ tag: "SELECT 0" }),
      ready(),
    );
    await expect(channel.next()).rejects.toMatchObject({ code: "22023" });
    expect(failures.map((error) => error.code)).toEqual(["22023"]);
    await channel.settle();
    expect(channel.syncsPending).toBe(0);
  });
});

describe("a region channel over a leg of the session's set", () => {
  it("takes the leg's frames while it reads, and hands them back to the relay once detached", async () => {
    const fake = new FakeConnection();
    const relayed: number[] = [];
    const leg = new Leg(
      "ap-south",
      { connection: fake as unknown as BackendConnection } as unknown as Lease,
      (_leg, frame) => relayed.push(frame.code),
      () => undefined,
    );
    fake.answer(ready());
    expect(relayed).toEqual([BackendCode.ReadyForQuery]);
    const channel = new RegionChannel(leg);
    channel.query(encodeQuery({ sql: "SELECT 1" }));
    fake.answer(encodeCommandComplete({ tag: "SELECT 1" }), ready());
    expect((await channel.next()).code).toBe(BackendCode.CommandComplete);
    await channel.settle();
    expect(relayed).toEqual([BackendCode.ReadyForQuery]);
    channel.detach();
    fake.answer(ready());
    expect(relayed).toEqual([BackendCode.ReadyForQuery, BackendCode.ReadyForQuery]);
  });

  it("retires the leg it cancels: a late cancel must not reach another client's statement", () => {
    const fake = new FakeConnection();
    const channel = channelOn(fake);
    channel.query(encodeQuery({ sql: "SELECT pg_sleep(10)" }));
    channel.cancel();
    expect(channel.cancelled).toBe(true);
    expect(channel.leg.retire).toBe(true);
  });
});
