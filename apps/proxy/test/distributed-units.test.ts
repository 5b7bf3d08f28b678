import { PgError, SqlState } from "@geo/proto";
import { participantRefused, prepareUnreachable, TxnError } from "@geo/txn";
import { describe, expect, it } from "vitest";
import { combinedTag, tagCount } from "../src/distributed/leg-statement.js";
import { txnErrorToPg } from "../src/distributed/txn-errors.js";
import { prefixFor } from "../src/distributed/txn-service.js";

describe("answers of a statement spread over regions", () => {
  it("sums the row counts of INSERT, UPDATE and DELETE tags and keeps INSERT's oid", () => {
    expect(combinedTag(["INSERT 0 2", "INSERT 0 1", "INSERT 0 0"])).toBe("INSERT 0 3");
    expect(combinedTag(["UPDATE 5", "UPDATE 7"])).toBe("UPDATE 12");
    expect(combinedTag(["DELETE 0", "DELETE 4"])).toBe("DELETE 4");
  });

  it("keeps a tag without a count as the first region gave it", () => {
    expect(combinedTag(["CREATE TABLE", "CREATE TABLE"])).toBe("CREATE TABLE");
    expect(tagCount("CREATE INDEX")).toBeNull();
    expect(tagCount("MERGE 3")).toBe(3);
  });
});

describe("transaction ids", () => {
  it("prefixes them with geo_ and the node name made a valid identifier", () => {
    expect(prefixFor("node-1.eu")).toBe("geo_node_1_eu");
    expect(prefixFor("x".repeat(200))).toHaveLength(100);
  });
});

describe("coordinator errors at the wire", () => {
  it("passes a region's own refusal on as PostgreSQL sent it, constraint and all", () => {
    const own = new PgError({
      code: SqlState.unique_violation,
      message: 'duplicate key value violates unique constraint "tickets_code_key"',
      constraint: "tickets_code_key",
    });
    expect(txnErrorToPg(participantRefused("us-east", own))).toBe(own);
  });

  it("keeps the coordinator's own SQLSTATE, detail and hint for an unreachable region", () => {
    const error = txnErrorToPg(prepareUnreachable("ap-south", new Error("connection refused")));
    expect(error.code).toBe("40001");
    expect(error.message).toContain("ap-south");
    expect(error.hint).toBe("Retry the transaction.");
    expect(error.detail).toBe("The transaction was rolled back in every region.");
  });

  it("turns an unexpected failure into an internal error rather than losing it", () => {
    expect(txnErrorToPg(new Error("boom")).code).toBe("XX000");
    expect(txnErrorToPg(new TxnError({ code: "08007", message: "unknown" })).code).toBe("08007");
  });
});
