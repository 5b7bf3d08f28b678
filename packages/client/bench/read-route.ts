/**
 * What read() costs per call in each state. The figure that matters is "split, healthy": the
 * claim is that routing to a healthy replica is one field check, so it should sit next to
 * "single pool" and far below a round trip. Pools are lazy and the probe is a stub: nothing is
 * dialled, so only the routing is measured.
 */
import { Cluster, type Sql } from "../src/index.js";

const iterations = 5_000_000;
const down = new Set<string>();
const probe = async (sql: Sql) => {
  if (down.has(sql.options.host[0] ?? "")) throw new Error("down");
};

function measure(label: string, cluster: Cluster): void {
  let sink = 0;
  for (let i = 0; i < 100_000; i++) if (cluster.read() === cluster.write()) sink++;
  const started = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) if (cluster.read() === cluster.write()) sink++;
  const elapsed = Number(process.hrtime.bigint() - started);
  console.log(
    `${label.padEnd(36)} ${(elapsed / iterations).toFixed(2).padStart(7)} ns/read  (${sink > 0 ? "primary" : "replica"})`,
  );
}

const common = {
  primary: "postgres://app@primary.bench/db",
  probe,
  onReplicaEvent: () => {},
  replicaRetryMinMs: 3_600_000,
  replicaRetryMaxMs: 3_600_000,
};
const single = await Cluster.connect({ ...common });
const split = await Cluster.connect({ ...common, replica: "postgres://app@replica.bench/db" });
down.add("replica.bench");
const tripped = await Cluster.connect({ ...common, replica: "postgres://app@replica.bench/db" });

console.log(`read() routing, ${iterations.toLocaleString("en")} calls each, node ${process.version}`);
measure("single pool", single);
measure("split, replica healthy", split);
measure("split, replica tripped (in window)", tripped);
await Promise.all([single.close(), split.close(), tripped.close()]);
