/**
 * Pool overhead: checkouts per second with no statement run (acquire + release of an idle
 * connection), and under contention (more concurrent borrowers than connections, FIFO hand-off),
 * against the fake backend so only the pool is measured. Also the round trip of an internal
 * statement. Usage: pnpm exec tsx bench/checkout.ts [seconds-per-case]
 */
import { FakeBackend } from "@geo/testkit";
import { Pool } from "../src/index.js";

const seconds = Number(process.argv[2] ?? 2);

async function timed(label: string, run: (deadline: number) => Promise<number>): Promise<void> {
  const started = process.hrtime.bigint();
  const operations = await run(Date.now() + seconds * 1000);
  const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
  console.log(
    `${label.padEnd(56)} ${Math.round(operations / elapsed)
      .toLocaleString("en-US")
      .padStart(12)} ops/s`,
  );
}

const backend = await FakeBackend.start();
const key = { host: backend.host, port: backend.port, database: "postgres", user: "postgres" };

{
  const pool = new Pool({ key, min: 1, max: 1 });
  await pool.warm();
  await timed("acquire + release, idle connection at hand", async (deadline) => {
    let count = 0;
    while (Date.now() < deadline) {
      for (let i = 0; i < 1000; i++) {
        const lease = await pool.acquire();
        lease.release();
      }
      count += 1000;
    }
    return count;
  });
  await pool.close();
}

for (const [borrowers, size] of [
  [64, 4],
  [1000, 8],
] as const) {
  const pool = new Pool({ key, min: size, max: size, maxWaiters: borrowers });
  await pool.warm();
  await timed(`acquire + release, ${borrowers} borrowers on ${size} connections`, async (deadline) => {
    let count = 0;
    await Promise.all(
      Array.from({ length: borrowers }, async () => {
        while (Date.now() < deadline) {
          const lease = await pool.acquire();
          count++;
          await Promise.resolve();
          lease.release();
        }
      }),
    );
    return count;
  });
  await pool.close();
}

{
  const pool = new Pool({ key, min: 1, max: 1 });
  await pool.warm();
  await timed("simpleQuery('SELECT 1') round trip on one leased connection", async (deadline) => {
    await using lease = await pool.acquire();
    let count = 0;
    while (Date.now() < deadline) {
      await lease.connection.simpleQuery("SELECT 1");
      count++;
    }
    return count;
  });
  await pool.close();
}

await backend.close();
