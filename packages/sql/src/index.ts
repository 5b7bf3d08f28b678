/** Statement analysis: parse, tables, keys, session effects, merge plans, rewrites, cache. */
export const packageName = "@geo/sql";
