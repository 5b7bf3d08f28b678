import { describe, expect, it } from "vitest";
import { redactUrl, sameEndpoint } from "../src/index.js";

describe("sameEndpoint", () => {
  const same = [
    ["postgres://app@db/orders", "postgres://app@db/orders"],
    ["postgres://app@db/orders", "postgresql://app@DB:5432/orders"],
    [
      "postgres://app@db/orders?sslmode=require&application_name=x",
      "postgres://app@db/orders?application_name=x&sslmode=require",
    ],
    ["not a url", "not a url"],
  ] as const;
  const different = [
    ["postgres://app@db-rw/orders", "postgres://app@db-ro/orders"],
    ["postgres://app@db/orders", "postgres://app@db:6432/orders"],
    ["postgres://app@db/orders", "postgres://reader@db/orders"],
    ["postgres://app@db/orders", "postgres://app@db/orders?application_name=replica"],
    ["not a url", "also not a url"],
  ] as const;
  for (const [a, b] of same)
    it(`${a} and ${b} are one endpoint`, () => expect(sameEndpoint(a, b)).toBe(true));
  for (const [a, b] of different)
    it(`${a} and ${b} are two endpoints`, () => expect(sameEndpoint(a, b)).toBe(false));
});

describe("redactUrl", () => {
  it("hides the password and keeps the rest", () => {
    expect(redactUrl("postgres://app:hunter2@db:5432/orders")).toBe("postgres://app:***@db:5432/orders");
  });
  it("leaves a URL without a password alone", () => {
    expect(redactUrl("postgres://app@db/orders")).toBe("postgres://app@db/orders");
  });
  it("never echoes text that is not a URL", () => {
    expect(redactUrl("app:hunter2 at db")).toBe("(unparseable URL)");
  });
});
