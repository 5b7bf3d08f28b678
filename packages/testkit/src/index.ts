/** Fake PostgreSQL backend on a real socket and a launcher for real PostgreSQL servers. */
export const packageName = "@geo/testkit";
