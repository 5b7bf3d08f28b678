import { describe, expect, it } from "vitest";
import { AlertBook, type Fact } from "./alert-book.js";

const down: Fact = { name: "backend_down", subject: "db:5432", message: "down" };
const saturated: Fact = { name: "pool_saturated", subject: "db:5432/app as app", message: "full" };

describe("AlertBook", () => {
  it("keeps the time a fact became true for as long as it stays true", () => {
    const book = new AlertBook();
    const first = book.current([down], new Date("2026-11-30T10:00:00Z"));
    const later = book.current([saturated, down], new Date("2026-11-30T10:05:00Z"));
    expect(first).toEqual([{ ...down, since: "2026-11-30T10:00:00.000Z" }]);
    expect(later).toEqual([
      { ...down, since: "2026-11-30T10:00:00.000Z" },
      { ...saturated, since: "2026-11-30T10:05:00.000Z" },
    ]);
  });

  it("states a fact once however often it is reported", () => {
    expect(new AlertBook().current([down, down, { ...down, message: "again" }])).toHaveLength(1);
  });

  it("forgets a fact that stopped being true: when it comes back it is a new alert", () => {
    const book = new AlertBook();
    book.current([down], new Date("2026-11-30T10:00:00Z"));
    expect(book.current([], new Date("2026-11-30T10:01:00Z"))).toEqual([]);
    expect(book.current([down], new Date("2026-11-30T10:02:00Z"))[0]?.since).toBe("2026-11-30T10:02:00.000Z");
  });

  it("takes the time a fact carries when it has one", () => {
    const since = new Date("2026-11-30T09:00:00Z");
    expect(new AlertBook().current([{ ...down, since }])[0]?.since).toBe(since.toISOString());
  });
});
