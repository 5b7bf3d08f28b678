import type { Draw } from "../draw.js";
import { type Drawn, ordered } from "./family.js";

/** Joins whose rows meet on something other than the shared key: across regions they must be refused or gathered. */
export function joinOffKey(d: Draw): Drawn {
  switch (d.int(0, 4)) {
    case 0:
      return {
        shape: "join-off-key/customer-id",
        steps: [
          ordered(
            `SELECT c.tenant_id, c.id, o.tenant_id AS order_tenant, o.id AS order_id FROM customers c JOIN orders o ON o.customer_id = c.id WHERE c.tenant_id = ${d.tenant()} AND o.status = ${d.status()} ORDER BY c.tenant_id, c.id, o.tenant_id, o.id${d.limit()}`,
          ),
        ],
      };
    case 1: {
      const [a, b] = d.tenants(2);
      const column = d.pick(["country", "tier", "active", "age"]);
      return {
        shape: "join-off-key/two-keys",
        steps: [
          ordered(
            `SELECT a.id, a.name, b.id AS other_id, b.name AS other_name FROM customers a JOIN customers b ON b.${column} = a.${column} WHERE a.tenant_id = ${a} AND b.tenant_id = ${b} AND a.id <= ${d.int(2, 8)} ORDER BY a.id, b.id`,
          ),
        ],
      };
    }
    case 2:
      return {
        shape: "join-off-key/pinned",
        steps: [
          ordered(
            `SELECT c.tenant_id, c.id, e.id AS event_id, e.action FROM customers c JOIN audit_events e ON e.tenant_id = c.tenant_id WHERE c.tenant_id = ${d.tenant()} AND e.amount > ${d.int(0, 450)}${d.chance(0.5) ? ` AND e.action = ${d.action()}` : ""} ORDER BY c.tenant_id, c.id, e.id`,
          ),
        ],
      };
    case 3:
      return {
        shape: "join-off-key/two-pinned",
        steps: [
          ordered(
            `SELECT e.id, e.tenant_id, l.id AS ledger_id, l.delta FROM audit_events e JOIN ledger l ON l.tenant_id = e.tenant_id WHERE e.amount > ${d.int(0, 450)} ORDER BY e.id, l.id${d.limit()}`,
          ),
        ],
      };
    default:
      return {
        shape: "join-off-key/amount",
        steps: [
          ordered(
            `SELECT o.tenant_id, o.id, x.tenant_id AS peer_tenant, x.id AS peer_id FROM orders o JOIN orders x ON x.amount = o.amount AND x.tenant_id <> o.tenant_id WHERE o.tenant_id = ${d.tenant()} AND o.amount > ${d.money(1, 500)} ORDER BY o.tenant_id, o.id, x.tenant_id, x.id`,
          ),
        ],
      };
  }
}
