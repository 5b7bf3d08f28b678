/** Two-phase commit coordinator, decision log and recovery. */
export const packageName = "@geo/txn";
