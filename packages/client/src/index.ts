/** Application-side read/write split with a replica health circuit, over postgres.js. */
export const packageName = "@geo/client";
