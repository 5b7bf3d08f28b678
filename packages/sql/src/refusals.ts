import type { RefusedPlan } from "./analysis.js";

/**
 * Every way a multi-region statement is refused, as named factories: SQLSTATE 0A000
 * (feature_not_supported), a reason that says what could not be combined exactly, and a hint that
 * names the fix.
 */
function refused(reason: string, hint: string): RefusedPlan {
  return { tier: "refused", sqlstate: "0A000", reason, hint, movesRowData: false };
}

export function refuseLockingAcrossRegions(): RefusedPlan {
  return refused(
    "row locks (FOR UPDATE/SHARE) cannot be taken across regions in one statement",
    "constrain the statement to one key so one region answers, or lock each key's rows in its own statement",
  );
}

export function refuseSelectIntoAcrossRegions(): RefusedPlan {
  return refused(
    "SELECT INTO would create a table from rows of several regions",
    "constrain the query to one key, or use INSERT INTO an existing table with a key per row",
  );
}

export function refuseWritingCteAcrossRegions(): RefusedPlan {
  return refused(
    "a data-modifying WITH query cannot be combined across regions",
    "constrain the statement to one key, or run the write and the read as separate statements",
  );
}

export function refuseVolatileAcrossRegions(functions: readonly string[]): RefusedPlan {
  return refused(
    `volatile function ${functions.join(", ")} would be evaluated separately in each region`,
    "compute the value once in the application and pass it as a parameter, or constrain the statement to one key",
  );
}

export function refuseInsertValuesBroadcast(): RefusedPlan {
  return refused(
    "INSERT ... VALUES is never sent to several regions as it is: every region would store every row",
    "let the planner split the rows by key (analysis.insert.split), or give every row the same key",
  );
}

export function refuseWriteGather(): RefusedPlan {
  return refused(
    "a write cannot be answered by shipping rows to the home region",
    "join geo-partitioned tables on their shard key, or constrain the write to one key",
  );
}

export function refusePerRegionUtility(kind: string): RefusedPlan {
  return refused(
    `${kind} reports only on the rows of the region it runs in, so it cannot span regions`,
    "constrain it to one key, or send it to one region with /* geo: region=<id> */",
  );
}

export function refuseNotCombinable(what: string): RefusedPlan {
  return refused(
    `${what} is not a statement whose answer is combined across regions`,
    "send it to one region with /* geo: region=<id> */",
  );
}

export function refuseGatherUnsupported(what: string): RefusedPlan {
  return refused(
    `${what} cannot be rebuilt in the home region from shipped rows`,
    "constrain the statement to one key so one region answers, or make the smaller table global_replicated",
  );
}

export function refuseNonRegionalWrite(why: string): RefusedPlan {
  return refused(
    `a write with ${why} would use each region's share of the rows instead of all of them`,
    "constrain the write to one key, or compute the value first and pass it as a parameter",
  );
}

/** A failed distribution rule (see distribution.ts) where the rows cannot be gathered either. */
export function refuseNotRegional(reason: string, hint: string): RefusedPlan {
  return refused(reason, hint);
}
