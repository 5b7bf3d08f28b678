/** What the proxy counts and shows about itself: metrics, clients, health, alerts, the admin port. */
export { ALERT_NAMES, type AlertName } from "./alert-book.js";
export { InDoubtLedger } from "./in-doubt-ledger.js";
export { Observability, type ObservabilityOptions } from "./observability.js";
export { CLIENT_STATES, type ClientState, ObservedClient } from "./observed-client.js";
export { sqlStateOf } from "./sql-state.js";
