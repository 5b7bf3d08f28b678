/** Configuration, topology, placement, key directory, hash, planner, explain. */
export const packageName = "@geo/core";
