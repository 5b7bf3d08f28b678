import type { ScramKeyCredentials } from "@geo/pool";

/**
 * The SCRAM keys each role's latest login proved, for logging in to backends as that role
 * (passthrough). Only ClientKey and ServerKey are kept, never a password; a newer login replaces
 * the keys, so a changed password takes effect with the role's next login.
 */
export class PassthroughKeys {
  private readonly keys = new Map<string, ScramKeyCredentials>();

  remember(role: string, keys: { readonly clientKey: Buffer; readonly serverKey: Buffer }): void {
    this.keys.set(role, { clientKey: Buffer.from(keys.clientKey), serverKey: Buffer.from(keys.serverKey) });
  }

  get(role: string): ScramKeyCredentials | undefined {
    return this.keys.get(role);
  }
}
