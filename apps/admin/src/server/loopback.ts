import { isIP } from "node:net";

/**
 * Whether listening on `host` keeps the port to this machine. Names other than `localhost` are not
 * resolved: a name could point anywhere, so it counts as beyond loopback. `0.0.0.0` and `::` are
 * every interface.
 */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  const lower = bare.toLowerCase();
  if (lower === "localhost") return true;
  switch (isIP(lower)) {
    case 4:
      return lower.startsWith("127.");
    case 6:
      return lower === "::1" || lower === "0:0:0:0:0:0:0:1" || /^::ffff:127\./.test(lower);
    default:
      return false;
  }
}
