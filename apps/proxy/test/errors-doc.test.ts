import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { REFUSAL_CODES, REFUSALS } from "@geo/core";
import { POOL_ERRORS } from "@geo/pool";
import { PgError, PROTO_ERRORS, protocolFault } from "@geo/proto";
import { SQL_ERROR_CODES } from "@geo/sql";
import { TXN_ERRORS } from "@geo/txn";
import { beforeAll, describe, expect, it } from "vitest";
import { PROXY_ERROR_MODULES, PROXY_ERRORS } from "../src/errors/proxy-errors.js";

/**
 * docs/errors.md against the catalogs. Each table row of the doc names, in its `error` column, the
 * errors it documents: `<catalog>.<factory>` for a factory of a catalog, `inline.<name>` for an
 * error built in place (listed in INLINE below), or `relayed` for PostgreSQL's own error that the
 * proxy passes on. Every factory is called with the arguments of CALLS, and its real SQLSTATE must
 * be in its row's SQLSTATE column and its real message must match one of the row's quoted shapes
 * (`...` and `<name>` stand for any text).
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const DOC_PATH = resolve(ROOT, "docs/errors.md");

type Factory = (...args: never[]) => unknown;
type Catalog = Readonly<Record<string, Factory>>;

interface Produced {
  readonly code: string;
  readonly message: string;
  readonly hint: string | undefined;
  /** The internal code beside the SQLSTATE, for refusals and analysis errors. */
  readonly stableCode: string | undefined;
  /** The SQLSTATE is the one of the error it was given (a region's), not the factory's own. */
  readonly passedOn: boolean;
}

/** A call of a factory; `passesOn` marks arguments that carry a region's own SQLSTATE through. */
type Call = readonly unknown[] | { readonly args: readonly unknown[]; readonly passesOn: true };

const regionError = (code: string, message: string): PgError =>
  new PgError({ code: code as PgError["code"], message });
const boom = new Error("socket hang up");
const addr = "10.0.0.5:5432";

/** Arguments for every factory that takes some; a factory without parameters is called bare. */
const CALLS: Readonly<Record<string, readonly Call[]>> = {
  // @geo/proto
  "proto.protocolViolation": [[protocolFault("length-too-short", "length 2 is below 4")]],
  // @geo/sql
  "sql.syntaxError": [['syntax error at or near "SELEC"', 1]],
  "sql.unreadableHint": [["geo: kee=1", 'unknown word "kee"']],
  "sql.consoleCommandInBatch": [["relocate"]],
  "sql.analysisFailed": [[boom]],
  // @geo/core
  "core.refuseUnplacedTable": [["orders"]],
  "core.refuseCrossRegionJoin": [
    [
      ["users", "orders"],
      ["eu", "us"],
    ],
  ],
  "core.refuseReplicatedWriteFromRows": [["countries", ["users"]]],
  "core.refuseReplicatedWriteVolatile": [["countries", ["random"]]],
  "core.refuseResidency": [["users", ["eu"], "us"]],
  "core.refuseUncombinable": [
    ["count(DISTINCT ...) of rows in several regions cannot be combined", "constrain the key"],
  ],
  "core.refuseKeyUpdate": [["users", "id"]],
  "core.refuseUnplaceableInsertRow": [["users", 2, "id"]],
  "core.refuseUnsplittableInsert": [["users", ["eu", "us"]]],
  "core.refuseUnknownRegionHint": [["mars", ["eu", "us"]]],
  "core.refuseHintWritesElsewhere": [["region=eu", "users key 7 lives in us"]],
  "core.refuseWriteReadsElsewhere": [[["orders"], ["users"], ["eu", "us"]]],
  "core.refuseUtilityAcrossRegions": [["VACUUM", ["eu", "us"]]],
  "core.refuseCursorAcrossRegions": [[["eu", "us"]]],
  "core.refuseCreateFromRowsAcrossRegions": [["CREATE TABLE AS", ["eu", "us"]]],
  "core.refuseCopyAcrossRegions": [
    ["from", ["eu", "us"]],
    ["to", ["eu", "us"]],
  ],
  "core.refuseExplainAcrossRegions": [[["eu", "us"]]],
  "core.refuseWritingCteAcrossRegions": [["orders", ["eu", "us"]]],
  "core.refuseSingleCopyWriteAcrossRegions": [["audit", "eu", ["eu", "us"]]],
  "core.refuseSequenceIds": [["orders", "id", "serial"]],
  "core.refuseConfiguredTableChange": [["orders", "renamed"]],
  // @geo/pool
  "pool.backendConnectFailed": [[addr, new Error("connect ECONNREFUSED")]],
  "pool.backendConnectTimeout": [[addr, 5000]],
  "pool.backendConnectionLost": [[addr], [addr, boom]],
  "pool.backendProtocolViolation": [[addr, "unknown message code 0x00"]],
  "pool.backendAuthUnsupported": [[addr, "app", "GSS"]],
  "pool.backendPasswordMissing": [[addr, "app", "md5"]],
  "pool.backendNeedsMoreThanMd5Hash": [
    [addr, "app", "SCRAM-SHA-256"],
    [addr, "app", "password"],
  ],
  "pool.backendScramFailed": [[addr, "app", "server signature mismatch"]],
  "pool.poolQueueFull": [["eu/app@shop", 100]],
  "pool.poolCheckoutTimeout": [["eu/app@shop", 5000]],
  "pool.poolClosed": [["eu/app@shop"]],
  "pool.connectionUnusable": [[addr, "it was closed"]],
  "pool.internalStatementTimeout": [[addr, 5000]],
  "pool.replyInFlight": [[addr]],
  "pool.receiverFailed": [[addr, boom]],
  "pool.unknownBackend": [[addr]],
  "pool.unknownRegion": [["mars"]],
  "pool.drainNeedsReplica": [[addr, "eu"]],
  "pool.duplicateBackend": [[addr]],
  "pool.duplicatePrimary": [["eu", addr, "10.0.0.6:5432"]],
  "pool.probeAnswerUnexpected": [[addr, "no rows"]],
  "pool.probeTimedOut": [[addr, 2000]],
  "pool.probeStillRunning": [[addr]],
  "pool.invalidLsn": [["16-B374"]],
  "pool.regionPrimaryDown": [
    ["eu", addr, undefined],
    ["eu", addr, "connection refused"],
  ],
  "pool.probeAbandoned": [[addr]],
  "pool.backendStoppedAnswering": [[`region "eu" (primary ${addr})`, "no probe answered for 10000 ms"]],
  "pool.backendUnreachable": [[`region "eu" (primary ${addr})`, "no probe answered for 10000 ms", 1200]],
  "pool.backendTlsRefused": [[addr, "require"]],
  "pool.backendTlsBadAnswer": [[addr, "answered 'E'"]],
  "pool.backendTlsHandshakeFailed": [
    [addr, "verify-full", "certificate has expired"],
    [addr, "verify-ca", "self-signed certificate"],
    [addr, "require", "wrong version number"],
  ],
  // @geo/txn
  "txn.participantRefused": [
    ["eu", new Error("no SQLSTATE")],
    { args: ["eu", regionError("23505", "duplicate key value violates unique constraint")], passesOn: true },
  ],
  "txn.prepareUnreachable": [["eu", boom]],
  "txn.prepareRolledBack": [["eu"]],
  "txn.prepareTooSlow": [[3100, 3000]],
  "txn.prepareTimedOut": [["eu", 3000]],
  "txn.stepTimedOut": [["eu", "COMMIT PREPARED", 5000]],
  "txn.decidedAbortElsewhere": [["geo_node1_42"]],
  "txn.resolutionUnknown": [["geo_node1_42", boom]],
  "txn.invalidPrefix": [["1bad"]],
  "txn.foreignGid": [["other_7", "geo_node1"]],
  "txn.nodeClaimedElsewhere": [
    ["node1", "eu", { pid: 4242, applicationName: "geoproxy node node1", clientAddress: "10.0.0.5" }],
    ["node1", "eu"],
  ],
  "txn.nodeClaimNotHeld": [
    ["node1", ["eu"]],
    ["node1", ["eu", "us"]],
  ],
  "txn.gidInUse": [["geo_node1_42"]],
  "txn.duplicateRegion": [["eu"]],
  "txn.decisionLogCorrupt": [["/var/lib/geoproxy/decisions.log", 12]],
  "txn.decisionLogLocked": [["/var/lib/geoproxy/decisions.log", { pid: 4242, host: "proxy-2" }]],
  // the proxy
  "proxy.verifierLookupFailed": [
    [],
    [
      new PgError({
        code: "57014" as PgError["code"],
        message: "region eu did not answer the verifier lookup within 1500 ms ([pool] lookup_timeout_ms)",
      }),
    ],
  ],
  "proxy.loginLookupTimedOut": [["eu", "the verifier lookup", 1500]],
  "proxy.refuseScatterRead": [[["eu", "us"]]],
  "proxy.refuseSessionSequenceValue": [["currval"]],
  "proxy.refuseSecondWriteRegion": [["eu", "us"]],
  "proxy.refuseBatchAcrossRegions": [["eu", "us"]],
  "proxy.refuseSqlPrepareAcrossRegions": [["eu", "regions eu, us"]],
  "proxy.duplicatePreparedStatement": [["p"]],
  "proxy.sqlExecuteArity": [["p", 1, 2]],
  "proxy.refuseSqlExecuteArgument": [
    ["p", 1, "pg_catalog.timestamptz"],
    ["p", 0, ""],
  ],
  "proxy.refuseHeldExecuteExtended": [["p"]],
  "proxy.refuseUnqualifiedTable": [["users", "public.users"]],
  "proxy.refuseDatabaseFunction": [["order_count"]],
  "proxy.cursorOutsideBlock": [[]],
  "proxy.unknownStatement": [["s1"]],
  "proxy.unknownPortal": [["p1"]],
  "proxy.duplicateStatement": [["s1"]],
  "proxy.backendLost": [["eu"], ["eu", boom]],
  "proxy.pinnedConnectionLost": [["eu"]],
  "proxy.regionUnreachable": [
    ["eu", regionError("08001", `could not connect to backend ${addr}: connect ECONNREFUSED`)],
  ],
  "proxy.tooManyClients": [[500]],
  "proxy.messageTooLong": [[67108864, "client message length 1073741823 exceeds the limit 67108864"]],
  "proxy.unsupportedProtocol": [[2, 0]],
  "proxy.refuseReplication": [[3]],
  "proxy.unexpectedMessage": [["CopyData"]],
  "proxy.internalError": [[boom]],
  "proxy.unreadableBinaryKey": [[1, 700]],
  "proxy.passwordFailed": [["alice"]],
  "proxy.passwordlessRefusedByHome": [
    ["reporter", "eu", new PgError({ code: "28000", message: 'role "reporter" does not exist' })],
  ],
  "proxy.tooManyLoggingInFrom": [["10.1.2.3", 20]],
  "proxy.tooManyLoggingIn": [[200]],
  "proxy.authProtocolViolation": [["expected SASLInitialResponse"]],
  "proxy.consoleCommandNotAvailable": [["RELOCATE", ["SHOW REGIONS"]]],
  "proxy.notAConsoleCommand": [["SHOW NOTHING", ["SHOW REGIONS"]]],
  "proxy.consoleSyntaxError": [
    ["WHERE IS needs a table and a key", "WHERE IS <table> <key>", "WHERE IS users 42"],
  ],
  "proxy.unknownConsoleTable": [
    ["userz", ["users"]],
    ["userz", []],
  ],
  "proxy.invalidIntegerKey": [["abc"]],
  "proxy.observationsMissing": [["SHOW HEALTH"]],
  "proxy.unexpectedArgument": [["SHOW HEALTH", "now"]],
  "proxy.moveNeedsSimpleQuery": [["RELOCATE"]],
  "proxy.copyRowUnroutable": [
    ["loads", { line: 3, reason: "format", message: 'missing data for column "tenant_id"' }],
    ["loads", { line: 2, reason: "null-key", message: 'null value in column "tenant_id" cannot be routed' }],
  ],
  "proxy.copyWithoutKeyColumn": [["loads", "tenant_id"]],
  "proxy.copyBinaryKeyType": [["loads", "tenant_id", "numeric", ["int4", "text"]]],
  "proxy.copyRowElsewhere": [["loads", 4, "alice", "eu", "us"]],
  "proxy.copyTableUnreadable": [["loads"]],
  "proxy.copiesDiverged": [
    [
      ["countries"],
      [
        { region: "eu", rows: 1 },
        { region: "us", rows: 0 },
      ],
    ],
  ],
  // A TxnError it is given keeps the code and message of @geo/txn's catalog; its own error is for anything else.
  "proxy.txnErrorToPg": [[boom]],
  "proxy.decisionLogUnavailable": [[boom]],
  "proxy.refuseClientPrepareAcrossRegions": [[["eu", "us"]]],
  "proxy.refuseExtendedDistributedWrite": [[["eu", "us"]]],
  "proxy.cannotRunInBlock": [["VACUUM"], ["CREATE INDEX CONCURRENTLY"]],
  "proxy.onlyInBlock": [["LOCK TABLE"]],
  "proxy.refuseExtendedMaintenance": [["VACUUM", ["eu", "us"]]],
  "proxy.maintenanceStopped": [
    {
      args: [
        "CREATE INDEX CONCURRENTLY",
        "us",
        regionError("42P07", 'relation "i" already exists'),
        ["eu"],
        [],
        "i",
      ],
      passesOn: true,
    },
    {
      args: ["VACUUM", "eu", regionError("57014", "canceling statement due to user request"), [], ["us"]],
      passesOn: true,
    },
  ],
  "proxy.refuseTwoPhaseOutsideEndpointDatabase": [["shop", "postgres"]],
  "proxy.readLegCommitFailed": [
    ["eu", boom],
    { args: ["eu", regionError("40001", "could not serialize access")], passesOn: true },
  ],
  "proxy.heldTooLong": [[["alice"], 2000]],
  "proxy.leaseLapsed": [
    ["region eu-west", 1200, 600, boom],
    ["a majority of regions (us-east, eu-west, ap-south)", undefined, 600, undefined],
  ],
  "proxy.authorityUnreachable": [["region eu-west", "connect ECONNREFUSED"]],
  "proxy.keyMovedByPeer": [[["alice"], "eu-proxy"]],
  "proxy.authoritiesDisagree": [["region eu-west", ["us-home (homed in us-east) agrees in region us-east"]]],
  "proxy.peersDidNotConfirm": [[["us-proxy"], 5200]],
  "proxy.keyPlacedByPeer": [["alice", "us-east", "eu-west"]],
  "proxy.heldInTransaction": [[["alice", "bob", "carol", "dave", "erin", "frank"]]],
  "proxy.keyInSeveralRegions": [["alice", ["eu", "us"]]],
  "proxy.moveNeedsRegion": [["ap-south", "it is the destination"]],
  "proxy.notAnOperator": [
    ["RELOCATE", "app", false],
    ["RELOCATE", "app", true],
  ],
  "proxy.noDirectoryStore": [["RELOCATE"]],
  "proxy.unknownRegion": [["mars", ["eu", "us"]]],
  "proxy.moveInTransaction": [["RELOCATE"]],
  "proxy.restripeNeedsStripedTable": [
    ["nowhere", undefined],
    ["notes", "geo_partitioned"],
    ["currencies", "global_replicated"],
  ],
  "proxy.restripeRegionFailed": [
    ["us-east", boom],
    { args: ["us-east", regionError("42501", "must be owner of sequence tickets_id_seq")], passesOn: true },
  ],
  "proxy.restripeIncomplete": [["ap-south", ["eu-west", "us-east"], boom]],
  "proxy.restripePastMaximum": [["eu-west", "public.tickets_id_seq", 2147483650n, 2147483647n]],
  "proxy.outsideForeignKey": [["reviews", "users", "us"]],
  "proxy.countMismatch": [["orders", "deleted", 10, 9]],
  "proxy.moveLockTimeout": [["a transaction holds the key's tables", 5000]],
  "proxy.keyAlreadyMoving": [["alice"]],
  "proxy.lookupFailed": [["alice", boom]],
  "proxy.tableMissingInDestination": [["orders"]],
  "proxy.moveAbandoned": [
    {
      args: [Object.assign(new Error("could not serialize access"), { code: "40001" })],
      passesOn: true,
    },
  ],
  "proxy.moveFailed": [[boom]],
  "proxy.drainNotAllowed": [
    ["DRAIN", "app", false],
    ["DRAIN", "app", true],
  ],
  "proxy.noReplicasConfigured": [["DRAIN"]],
  "proxy.drainNeedsAddress": [["DRAIN"]],
  "proxy.regionLost": [
    ["eu", regionError("08006", "lost connection to backend")],
    ["eu", regionError("57P01", "terminating connection due to administrator command")],
  ],
  "proxy.gatherBoundExceeded": [
    ["rows", 100000, ["eu", "us"]],
    ["bytes", 67108864, ["eu", "us"], "suspended"],
  ],
  "proxy.refuseShippingResident": [[["eu"], "us"]],
  "proxy.unreadableLimitParam": [[2, 1700]],
  "proxy.databaseCollationDiffers": [
    [
      "ap-south",
      'icu locale "und", LC_COLLATE "C", LC_CTYPE "C", UTF8, version 153.112',
      "eu-west",
      'libc, LC_COLLATE "C", LC_CTYPE "C", UTF8',
      "shop",
      "TEMPLATE template0 ENCODING 'UTF8' LOCALE_PROVIDER libc LOCALE 'C'",
    ],
  ],
  "proxy.collationNotCarried": [
    ["users.name", '"sv-SE-x-icu"'],
    ["users.name", '"sv-SE-x-icu"', "upper(name)"],
  ],
  "proxy.invalidLimitParam": [["ten"]],
  "proxy.resultFormatsMismatch": [[3, 2]],
  "proxy.regionOutOfOrder": [["eu", "NoData for a query"]],
  "proxy.refuseShippingAnonymousRecord": [["row"]],
  "proxy.unnamedShippedType": [["eu", 16385]],
};

/**
 * Errors the product sends that are built in place rather than by a catalogued factory, in files
 * of their owners. Each names a fixed piece of its message, which the file must still contain.
 */
const INLINE: Readonly<Record<string, { code: string; file: string; text: string }>> = {
  "inline.noTransactionInProgress": {
    code: "25P01",
    file: "apps/proxy/src/engine/transaction-control.ts",
    text: "there is no transaction in progress",
  },
  "inline.chainWithoutTransaction": {
    code: "25P01",
    file: "apps/proxy/src/engine/transaction-control.ts",
    text: "AND CHAIN can only be used in transaction blocks",
  },
  "inline.noHomeFinish": {
    code: "XX000",
    file: "apps/proxy/src/scatter/scatter-read.ts",
    text: "no home finish for this tier",
  },
  "inline.regionProtocolFault": {
    code: "XX000",
    file: "apps/proxy/src/scatter/region-channel.ts",
    text: 'new PgError({ code: "XX000", message: decoded.message })',
  },
};

/** What any catalogued error looks like on the wire: SQLSTATE, message, hint. */
function produced(value: unknown, passedOn: boolean): Produced {
  const fields = value as {
    sqlstate?: string;
    code?: string;
    reason?: string;
    message?: string;
    hint?: string;
  };
  // Refusals and analysis errors keep a stable internal `code` beside their `sqlstate`.
  const code = fields.sqlstate ?? fields.code;
  const message = fields.reason ?? fields.message;
  if (typeof code !== "string" || typeof message !== "string")
    throw new Error(`not an error: ${String(value)}`);
  const stableCode = fields.sqlstate === undefined ? undefined : fields.code;
  return { code, message, hint: fields.hint, stableCode, passedOn };
}

interface DocRow {
  readonly section: string;
  readonly line: number;
  readonly codes: readonly string[];
  /** The SQLSTATE column says the code is the region's own. */
  readonly regionsOwn: boolean;
  readonly shapes: readonly RegExp[];
  readonly when: string;
  readonly whatToDo: string;
  readonly ids: readonly string[];
  readonly relayed: boolean;
}

function cellsOf(line: string): string[] {
  return line
    .trim()
    .replace(/^\|/, "")
    .replace(/\|$/, "")
    .split("|")
    .map((cell) => cell.trim());
}

/** A quoted message shape as a pattern: `...` and `<name>` stand for any text. */
function shapePattern(shape: string): RegExp {
  const parts = shape.split(/\.\.\.|<[^>]+>/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(`^${parts.join(".*")}`, "s");
}

function docRows(text: string): DocRow[] {
  const rows: DocRow[] = [];
  let section = "";
  let header: string[] | null = null;
  text.split("\n").forEach((line, index) => {
    if (line.startsWith("## ")) section = line.slice(3).trim();
    if (!line.startsWith("|")) {
      header = null;
      return;
    }
    const cells = cellsOf(line);
    if (header === null) {
      header = cells;
      return;
    }
    if (cells.every((cell) => /^-+$/.test(cell))) return;
    const at = (name: string): string => cells[header!.indexOf(name)] ?? "";
    if (!header.includes("SQLSTATE")) return;
    const sqlstate = at("SQLSTATE");
    const when = at("when");
    const errors = at("error");
    rows.push({
      section,
      line: index + 1,
      codes: sqlstate.match(/\b[0-9A-Z]{5}\b/g) ?? [],
      regionsOwn: sqlstate.includes("region's own"),
      shapes: [...when.matchAll(/`([^`]+)`/g)].map((match) => shapePattern(match[1]!)),
      when,
      whatToDo: at("what to do"),
      ids: [...errors.matchAll(/`([a-z]+\.[A-Za-z][A-Za-z0-9]*)`/g)].map((match) => match[1]!),
      relayed: errors.includes("relayed"),
    });
  });
  return rows;
}

describe("docs/errors.md", () => {
  const catalogs: Record<string, Catalog> = {
    proto: PROTO_ERRORS,
    core: REFUSALS,
    pool: POOL_ERRORS,
    txn: TXN_ERRORS,
    proxy: PROXY_ERRORS,
  };
  const rows = docRows(readFileSync(DOC_PATH, "utf8"));
  const errors = new Map<string, Produced[]>();

  beforeAll(async () => {
    // @geo/sql's index exports its error class and codes but not its factories: they are read
    // from its source, and checked below to make every one of SQL_ERROR_CODES.
    const sqlErrors = (await import(
      pathToFileURL(resolve(ROOT, "packages/sql/src/errors.ts")).href
    )) as Record<string, unknown>;
    catalogs["sql"] = Object.fromEntries(
      Object.entries(sqlErrors).filter(
        (entry): entry is [string, Factory] =>
          typeof entry[1] === "function" && entry[1] !== sqlErrors["SqlAnalysisError"],
      ),
    );
    for (const [catalog, factories] of Object.entries(catalogs)) {
      for (const [name, factory] of Object.entries(factories)) {
        const id = `${catalog}.${name}`;
        const calls = CALLS[id] ?? (factory.length === 0 ? [[]] : undefined);
        if (calls === undefined) {
          errors.set(id, []);
          continue;
        }
        errors.set(
          id,
          calls.map((call) => {
            const passesOn = !Array.isArray(call);
            const args = (passesOn ? (call as { args: readonly unknown[] }).args : call) as never[];
            return produced(factory(...args), passesOn);
          }),
        );
      }
    }
  });

  it("has arguments in this test for every catalogued factory that takes some", () => {
    const missing = [...errors].filter(([, calls]) => calls.length === 0).map(([id]) => id);
    expect(missing, "add dummy arguments for these factories to CALLS").toEqual([]);
    const stale = Object.keys(CALLS).filter((id) => !errors.has(id));
    expect(stale, "these CALLS name no catalogued factory").toEqual([]);
  });

  it("catalogs each factory of the proxy under one name", () => {
    const names = Object.values(PROXY_ERROR_MODULES).flatMap((module) =>
      Object.keys(module).filter((name) => typeof (module as Record<string, unknown>)[name] === "function"),
    );
    const twice = names.filter((name, index) => names.indexOf(name) !== index);
    expect(twice, "two modules define an error of this name; PROXY_ERRORS keeps only one").toEqual([]);
    expect(Object.keys(PROXY_ERRORS).sort()).toEqual([...new Set(names)].sort());
  });

  it("catalogs every stable code of @geo/sql and @geo/core", () => {
    const stableCodes = (catalog: string): Set<string | undefined> =>
      new Set(
        [...errors]
          .filter(([id]) => id.startsWith(`${catalog}.`))
          .flatMap(([, calls]) => calls.map((call) => call.stableCode)),
      );
    expect(stableCodes("sql")).toEqual(new Set(SQL_ERROR_CODES));
    expect(stableCodes("core")).toEqual(new Set(REFUSAL_CODES));
  });

  it("documents every catalogued error in exactly one row, with its real SQLSTATE and message", () => {
    const problems: string[] = [];
    for (const [id, calls] of errors) {
      const documenting = rows.filter((row) => row.ids.includes(id));
      if (documenting.length !== 1) {
        problems.push(
          `${id}: documented in ${documenting.length} rows (lines ${documenting.map((row) => row.line)})`,
        );
        continue;
      }
      const row = documenting[0]!;
      for (const call of calls) {
        if (call.passedOn ? !row.regionsOwn : !row.codes.includes(call.code))
          problems.push(
            `${id}: SQLSTATE ${call.passedOn ? "(the region's own)" : call.code} is not in its row, line ${row.line}`,
          );
        // A region's error passed on keeps the region's message.
        if (!call.passedOn && !row.shapes.some((shape) => shape.test(call.message)))
          problems.push(
            `${id}: no quoted shape of line ${row.line} matches its message ${JSON.stringify(call.message)}`,
          );
      }
    }
    expect(problems).toEqual([]);
  });

  it("lists only errors that exist, each SQLSTATE produced by one of its row's errors", () => {
    const problems: string[] = [];
    for (const row of rows) {
      if (row.when === "" || row.whatToDo === "")
        problems.push(`line ${row.line}: says not when or what to do`);
      if (row.relayed) continue;
      if (row.ids.length === 0) problems.push(`line ${row.line}: names no error (or \`relayed\`)`);
      const codes = new Set<string>();
      for (const id of row.ids) {
        const inline = INLINE[id];
        if (inline !== undefined) {
          codes.add(inline.code);
          if (!readFileSync(resolve(ROOT, inline.file), "utf8").includes(inline.text))
            problems.push(`line ${row.line}: ${id} is no longer made in ${inline.file}`);
          continue;
        }
        const calls = errors.get(id);
        if (calls === undefined) problems.push(`line ${row.line}: ${id} is in no catalog`);
        for (const call of calls ?? []) if (!call.passedOn) codes.add(call.code);
      }
      for (const code of row.codes)
        if (!codes.has(code)) problems.push(`line ${row.line}: no error of the row has SQLSTATE ${code}`);
    }
    expect(problems).toEqual([]);
  });
});
