import { expect } from "vitest";
import { TxnError } from "../../src/index.js";

/** The TxnError `promise` rejects with; fails the test when it resolves or rejects otherwise. */
export async function rejection(promise: Promise<unknown>): Promise<TxnError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(TxnError);
    return error as TxnError;
  }
  throw new Error("expected a rejection");
}
