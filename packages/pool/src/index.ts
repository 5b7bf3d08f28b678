/** Backend connections: connect, authenticate, TLS, pools, reset, health. */
export const packageName = "@geo/pool";
