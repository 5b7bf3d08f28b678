import { describe, expect, it } from "vitest";
import type { SchemaDriftRow } from "../server/schema-drift-report.js";
import { schemaDriftStatus } from "./schema-drift-status.js";

const row = (
  table: string,
  region: string,
  status: SchemaDriftRow["status"],
  detail = "",
): SchemaDriftRow => ({
  table,
  region,
  status,
  detail,
});

describe("schemaDriftStatus", () => {
  it("keeps only the tables with a copy that differs or is missing, each with those regions, by name", () => {
    const status = schemaDriftStatus({
      reference: "eu-west",
      checkedAt: new Date("2026-11-30T10:00:00Z"),
      rows: [
        row("public.users", "eu-west", "same"),
        row("public.users", "us-east", "differs", "extra column note text"),
        row("public.users", "ap-south", "missing", "no table public.users in ap-south"),
        row("public.currencies", "eu-west", "same"),
        row("public.currencies", "us-east", "same"),
        row("public.currencies", "ap-south", "unknown", "connection refused"),
        row("public.orders", "eu-west", "same"),
        row("public.orders", "us-east", "differs", "index missing: CREATE INDEX ON public.orders (id)"),
      ],
    });
    expect(status).toEqual({
      checkedAt: "2026-11-30T10:00:00.000Z",
      reference: "eu-west",
      tables: [
        {
          table: "public.orders",
          regions: [
            {
              region: "us-east",
              status: "differs",
              detail: "index missing: CREATE INDEX ON public.orders (id)",
            },
          ],
        },
        {
          table: "public.users",
          regions: [
            { region: "ap-south", status: "missing", detail: "no table public.users in ap-south" },
            { region: "us-east", status: "differs", detail: "extra column note text" },
          ],
        },
      ],
    });
  });

  it("shows nothing checked before the first check", () => {
    expect(schemaDriftStatus({ reference: undefined, rows: [], checkedAt: undefined })).toEqual({
      checkedAt: null,
      reference: null,
      tables: [],
    });
  });
});
