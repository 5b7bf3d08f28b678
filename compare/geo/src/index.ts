/** Three regions a real round trip apart on one machine; latency per workload through geoproxy and against one PostgreSQL. */
export { type DelayRelay, startDelayRelay } from "./delay-relay.js";
export { type GeoSettings, type GeoWorld, geoConfigToml, startGeoWorld } from "./geo-world.js";
export { type Measurement, measure } from "./measure.js";
export { type LatencySummary, nearestRank, summarize } from "./percentiles.js";
export { checkRelays, pingPong, type RelayCheck, startEcho } from "./ping-pong.js";
export { WORKLOADS, type Workload, type WorkloadContext } from "./workloads.js";
