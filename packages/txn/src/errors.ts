/**
 * Every error @geo/txn originates, as named factories. Each carries a real SQLSTATE so the proxy can
 * turn it into an ErrorResponse in one place; `cause` keeps the participant's own error intact.
 */
export class TxnError extends Error {
  override readonly name = "TxnError";
  readonly code: string;
  readonly hint: string | undefined;
  readonly detail: string | undefined;
  /** Region whose answer produced this error, when one did. */
  readonly region: string | undefined;

  constructor(fields: {
    code: string;
    message: string;
    hint?: string;
    detail?: string;
    region?: string;
    cause?: unknown;
  }) {
    super(fields.message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.code = fields.code;
    this.hint = fields.hint;
    this.detail = fields.detail;
    this.region = fields.region;
  }
}

/** SQLSTATE carried by an error thrown by a participant, when it looks like one. */
export function sqlStateOf(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/**
 * True when the error says the connection or server went away rather than that PostgreSQL judged
 * the statement: the statement may still have taken effect, so its outcome is unknown.
 */
export function isConnectionFailure(error: unknown): boolean {
  const code = sqlStateOf(error);
  if (code === undefined) return true;
  return code.startsWith("08") || code === "57P01" || code === "57P02" || code === "57P03";
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * A participant refused PREPARE TRANSACTION with an error of its own (a deferred unique violation,
 * a serialization failure): the client gets that error, code and all, once everything is rolled back.
 */
export function participantRefused(region: string, cause: unknown): TxnError {
  const fields = cause as { detail?: unknown; hint?: unknown };
  return new TxnError({
    code: sqlStateOf(cause) ?? "40001",
    message: messageOf(cause),
    ...(typeof fields.detail === "string" ? { detail: fields.detail } : {}),
    ...(typeof fields.hint === "string" ? { hint: fields.hint } : {}),
    region,
    cause,
  });
}

/** A participant could not be reached while preparing: nothing was committed, so a retry is safe. */
export function prepareUnreachable(region: string, cause: unknown): TxnError {
  return new TxnError({
    code: "40001",
    message: `could not prepare the distributed transaction in region "${region}": ${messageOf(cause)}`,
    detail: "The transaction was rolled back in every region.",
    hint: "Retry the transaction.",
    region,
    cause,
  });
}

/** Errors made by `stepTimedOut`: a deadline passed, which is neither a refusal nor a lost connection. */
const stepTimeouts = new WeakSet<object>();

/**
 * A region did not answer one of the coordinator's or recovery's own statements within its step
 * deadline (a frozen server, a dead network path). Its connection was closed unanswered, so whether
 * the statement took effect there is unknown: what the region still owes is recovery's to finish.
 */
export function stepTimedOut(region: string, statement: string, timeoutMs: number): TxnError {
  const error = new TxnError({
    code: "57014",
    message: `region "${region}" did not answer ${statement} within ${timeoutMs} ms ([txn] step_timeout_ms)`,
    detail: "Its connection was closed unanswered; recovery finishes what the region owes once it answers.",
    hint: "Check that the region's server is running and reachable; raise [txn] step_timeout_ms if it is only slow.",
    region,
  });
  stepTimeouts.add(error);
  return error;
}

/** True for an error made by `stepTimedOut`. */
export function isStepTimeout(error: unknown): boolean {
  return typeof error === "object" && error !== null && stepTimeouts.has(error);
}

/**
 * A region did not answer PREPARE TRANSACTION within the decide deadline: the transaction is rolled
 * back everywhere. The PREPARE may still land there later (a frozen server reads it on waking), so
 * the abort is written to the decision log and recovery rolls it back whenever it appears.
 */
export function prepareTimedOut(region: string, timeoutMs: number): TxnError {
  return new TxnError({
    code: "40001",
    message: `region "${region}" did not answer PREPARE TRANSACTION within ${timeoutMs} ms (decide_deadline_ms): the transaction was rolled back`,
    detail: `The transaction was rolled back in every region; recovery rolls it back in region "${region}" once it answers.`,
    hint: "Retry the transaction; if the region is only slow, raise [txn] decide_deadline_ms (below recovery_grace_ms).",
    region,
  });
}

/** PREPARE TRANSACTION answered ROLLBACK: the participant's transaction had already failed. */
export function prepareRolledBack(region: string): TxnError {
  return new TxnError({
    code: "40001",
    message: `the transaction in region "${region}" had already failed and was rolled back instead of prepared`,
    detail: "The transaction was rolled back in every region.",
    hint: "Retry the transaction.",
    region,
  });
}

/** The prepare phase outlived the deadline under which recovery promises not to interfere. */
export function prepareTooSlow(elapsedMs: number, deadlineMs: number): TxnError {
  return new TxnError({
    code: "40001",
    message: `preparing the distributed transaction took ${elapsedMs} ms, over its ${deadlineMs} ms deadline`,
    detail: "The transaction was rolled back in every region.",
    hint: "Retry the transaction; if this repeats, a region is too slow for the recovery grace period.",
  });
}

/** Recovery decided to roll back this transaction before the coordinator could decide to commit it. */
export function decidedAbortElsewhere(gid: string): TxnError {
  return new TxnError({
    code: "40001",
    message: `distributed transaction ${gid} was rolled back by recovery before it could commit`,
    hint: "Retry the transaction.",
  });
}

/**
 * Writing the decision failed in a way that leaves its durability unknown: the transaction stays
 * prepared and recovery settles it from whatever the log holds.
 */
export function resolutionUnknown(gid: string, cause: unknown): TxnError {
  return new TxnError({
    code: "08007",
    message: `the outcome of distributed transaction ${gid} is unknown: the decision log failed: ${messageOf(cause)}`,
    hint: "Recovery will commit it if the decision reached the log and roll it back otherwise; check SHOW IN DOUBT.",
    cause,
  });
}

export function invalidPrefix(prefix: string): TxnError {
  return new TxnError({
    code: "22023",
    message: `invalid transaction id prefix "${prefix}"`,
    hint: "Use 1 to 100 characters: a letter, then letters, digits or underscores (for example geo_node1).",
  });
}

export function foreignGid(gid: string, prefix: string): TxnError {
  return new TxnError({
    code: "22023",
    message: `transaction id "${gid}" was not issued by coordinator "${prefix}"`,
    hint: "Pass an id from coordinator.newGid(), or none.",
  });
}

export function gidInUse(gid: string): TxnError {
  return new TxnError({
    code: "42710",
    message: `transaction identifier "${gid}" is already in use`,
    hint: "Take a new id from coordinator.newGid() for each transaction.",
  });
}

export function noParticipants(): TxnError {
  return new TxnError({
    code: "22023",
    message: "a distributed commit needs at least one participant",
    hint: "Commit a transaction with no participants locally.",
  });
}

export function duplicateRegion(region: string): TxnError {
  return new TxnError({
    code: "22023",
    message: `region "${region}" appears twice among the participants`,
    hint: "Use one connection per region in a distributed transaction.",
  });
}

export function decisionLogCorrupt(path: string, line: number): TxnError {
  return new TxnError({
    code: "XX001",
    message: `decision log ${path} is corrupt at line ${line}`,
    detail: "Only the last line may be torn by a crash; a damaged earlier line means the file was altered.",
    hint: "Restore the file from a copy; do not delete it, recovery needs its commit decisions.",
  });
}

/** Another live process holds the file log's lock (a crashed owner's lock is taken over, never this). */
export function decisionLogLocked(path: string, owner: { pid: number; host?: string }): TxnError {
  const where = owner.host === undefined ? "" : ` on ${owner.host}`;
  return new TxnError({
    code: "55006",
    message: `decision log ${path} is in use by process ${owner.pid}${where}`,
    hint: "Give each proxy its own decision log file, or use the table decision log; stop the other proxy first to move this one onto its file.",
  });
}

export function decisionLogClosed(): TxnError {
  return new TxnError({
    code: "55000",
    message: "the decision log is closed",
  });
}

/** Who holds a claim, as far as the region's pg_locks and pg_stat_activity tell. */
export interface ClaimHolder {
  readonly pid?: number;
  readonly applicationName?: string;
  readonly clientAddress?: string;
}

function describeHolder(holder: ClaimHolder | undefined): string {
  if (holder?.pid === undefined) return "another session";
  const parts = [`backend pid ${holder.pid}`];
  if (holder.applicationName !== undefined && holder.applicationName !== "")
    parts.push(`application_name "${holder.applicationName}"`);
  if (holder.clientAddress !== undefined) parts.push(`from ${holder.clientAddress}`);
  return parts.join(", ");
}

/**
 * Another live process holds the claim on this node's transaction id prefix in a region: it is a
 * proxy with the same node name (or one that maps to the same prefix), and two coordinators of one
 * prefix would each recover, and roll back, what the other prepared.
 */
export function nodeClaimedElsewhere(node: string, region: string, holder?: ClaimHolder): TxnError {
  return new TxnError({
    code: "55006",
    message: `node "${node}" is in use: another proxy holds its claim in region ${region} (${describeHolder(holder)})`,
    detail:
      "Two proxies with one node name share its two-phase commit transaction ids, and each one's recovery would roll back what the other prepared.",
    hint: "Give each proxy its own [server] node (names that differ only in characters other than letters, digits and _ count as the same); or stop the other proxy first.",
    region,
  });
}

/**
 * A write across regions while this proxy cannot prove that it alone holds its node's claim in
 * some of them (the claim's connection broke, the region has not answered since start, or another
 * process took the claim): nothing is decided there until the claim is taken again.
 */
export function nodeClaimNotHeld(node: string, regions: readonly string[]): TxnError {
  return new TxnError({
    code: "55000",
    message: `writes across regions are suspended: this proxy does not hold the claim on node "${node}" in ${regions.length === 1 ? "region" : "regions"} ${regions.join(", ")}`,
    detail: "The transaction was rolled back in every region.",
    hint: "Retry once the claim is taken again (the proxy retries by itself; see its log and SHOW ALERTS); if another proxy runs with the same [server] node, give each its own.",
    ...(regions.length === 1 ? { region: regions[0]! } : {}),
  });
}
