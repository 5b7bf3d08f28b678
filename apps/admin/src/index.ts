/** Admin HTTP port: Prometheus metrics, snapshot, key lookup, health, live dashboard. */
export const packageName = "@geo/admin";
