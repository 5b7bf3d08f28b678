import {
  Cluster,
  type ClusterOptions,
  type ProbeFunction,
  type ReplicaEvent,
  type Sql,
} from "../src/index.js";

export const primaryUrl = "postgres://app:secret@primary.test:5432/orders";
export const replicaUrl = "postgres://app:secret@replica.test:5432/orders";

/**
 * Endpoints that exist only as names: postgres.js pools connect lazily, so a cluster over them
 * opens no socket, and the injected probe decides which endpoint "answers".
 */
export class FakeEndpoints {
  readonly down = new Set<string>();
  readonly probed: string[] = [];
  readonly events: ReplicaEvent[] = [];
  time = 0;
  /** When set, probes wait on it instead of answering at once. */
  gate: Promise<void> | undefined;

  readonly probe: ProbeFunction = async (sql: Sql) => {
    const host = hostOf(sql);
    this.probed.push(host);
    if (this.gate !== undefined) await this.gate;
    if (this.down.has(host)) throw new Error(`${host} refused the connection`);
  };

  options(overrides: Partial<ClusterOptions> = {}): ClusterOptions {
    return {
      primary: primaryUrl,
      replica: replicaUrl,
      replicaRetryMinMs: 100,
      replicaRetryMaxMs: 800,
      now: () => this.time,
      probe: this.probe,
      onReplicaEvent: (event) => this.events.push(event),
      ...overrides,
    };
  }

  connect(overrides: Partial<ClusterOptions> = {}): Promise<Cluster> {
    return Cluster.connect(this.options(overrides));
  }

  probesOf(host: string): number {
    return this.probed.filter((probed) => probed === host).length;
  }
}

export function hostOf(sql: Sql): string {
  return sql.options.host[0] ?? "";
}
