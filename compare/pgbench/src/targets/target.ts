/** The four ways a client reaches the same PostgreSQL, in the order every round visits them. */
export const TARGET_NAMES = ["direct", "pgbouncer", "relay", "geoproxy"] as const;
export type TargetName = (typeof TARGET_NAMES)[number];

export function targetLabel(name: TargetName): string {
  switch (name) {
    case "direct":
      return "PostgreSQL direct";
    case "pgbouncer":
      return "PgBouncer";
    case "relay":
      return "Node TCP relay";
    case "geoproxy":
      return "geoproxy";
  }
}

/** Where clients connect for one target, and which process is the proxy (none for direct). */
export interface Target {
  name: TargetName;
  host: string;
  port: number;
  /** The pid whose CPU time is charged to the proxy; undefined when nothing sits in between. */
  proxyPid: number | undefined;
}

/** The PostgreSQL every target leads to. */
export interface Backend {
  host: string;
  port: number;
  user: string;
  database: string;
}
