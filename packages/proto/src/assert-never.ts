/** Makes a switch exhaustive: adding a union member without a case fails to compile. */
export function assertNever(value: never): never {
  throw new Error(`unexpected value ${String(value)}`);
}
