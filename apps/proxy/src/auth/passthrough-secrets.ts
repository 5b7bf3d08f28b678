import type { ScramKeyCredentials } from "@geo/pool";

/**
 * What a client's login proved it knows, enough to log in to backends as its role without the
 * password (passthrough): a SCRAM proof reveals the ClientKey (kept with the verifier's ServerKey,
 * so the backend must prove it holds the same verifier); an MD5 answer proves the client knows the
 * stored hash md5(password || role), which is all an MD5 backend login needs.
 */
export type PassthroughSecret =
  | { readonly kind: "scram"; readonly keys: ScramKeyCredentials }
  | { readonly kind: "md5"; readonly hash: string };

/**
 * The secret each role's latest login proved, never a password. A newer login replaces it, so a
 * changed password takes effect with the role's next login. A role's secret is kept only once one
 * of its clients proved it: no backend is logged in to as a role that has not logged in here.
 */
export class PassthroughSecrets {
  private readonly secrets = new Map<string, PassthroughSecret>();

  remember(role: string, secret: PassthroughSecret): void {
    this.secrets.set(
      role,
      secret.kind === "scram"
        ? {
            kind: "scram",
            keys: {
              clientKey: Buffer.from(secret.keys.clientKey),
              ...(secret.keys.serverKey === undefined
                ? {}
                : { serverKey: Buffer.from(secret.keys.serverKey) }),
            },
          }
        : secret,
    );
  }

  get(role: string): PassthroughSecret | undefined {
    return this.secrets.get(role);
  }
}
