import { type Draw, where } from "../draw.js";
import { type Drawn, ordered } from "./family.js";

/** Joins whose geo-partitioned tables meet on the shared key, and joins with replicated tables. */
export function joinOnKey(d: Draw): Drawn {
  switch (d.int(0, 4)) {
    case 0:
      return {
        shape: "join-on-key/inner",
        steps: [
          ordered(
            `SELECT c.tenant_id, c.id, c.name, o.id AS order_id, o.amount FROM customers c JOIN orders o ON o.tenant_id = c.tenant_id AND o.customer_id = c.id${where(d.keyPredicate("c.tenant_id"), d.orderFilter("o."), d.customerFilter("c."))} ORDER BY c.tenant_id, c.id, o.id${d.limit()}`,
          ),
        ],
      };
    case 1:
      return {
        shape: "join-on-key/left",
        steps: [
          ordered(
            `SELECT o.tenant_id, o.id, o.customer_id, c.name, c.country FROM orders o LEFT JOIN customers c ON c.tenant_id = o.tenant_id AND c.id = o.customer_id${where(d.keyPredicate("o.tenant_id"), d.orderFilter("o."))} ORDER BY o.tenant_id, o.id${d.limit()}`,
          ),
        ],
      };
    case 2:
      return {
        shape: "join-on-key/replicated",
        steps: [
          ordered(
            `SELECT o.tenant_id, o.id, p.name, p.category, o.qty * p.price AS list_value FROM orders o JOIN products p ON p.code = o.product_code${where(d.keyPredicate("o.tenant_id"), d.chance(0.5) ? `p.category = ${d.category()}` : "")} ORDER BY o.tenant_id, o.id${d.limit()}`,
          ),
        ],
      };
    case 3:
      return {
        shape: "join-on-key/three-tables",
        steps: [
          ordered(
            `SELECT c.tenant_id, c.id, k.continent, o.id AS order_id, p.price FROM customers c JOIN countries k ON k.code = c.country JOIN orders o ON o.tenant_id = c.tenant_id AND o.customer_id = c.id JOIN products p ON p.code = o.product_code${where(d.keyPredicate("c.tenant_id"), d.chance(0.4) ? `k.continent = ${d.pick(["'asia'", "'europe'", "'america'"])}` : "", d.orderFilter("o."))} ORDER BY c.tenant_id, c.id, o.id`,
          ),
        ],
      };
    default:
      return {
        shape: "join-on-key/aggregate",
        steps: [
          ordered(
            `SELECT c.tenant_id, c.id, count(o.id) AS orders, coalesce(sum(o.amount), 0) AS spent FROM customers c LEFT JOIN orders o ON o.tenant_id = c.tenant_id AND o.customer_id = c.id${where(d.keyPredicate("c.tenant_id"), d.customerFilter("c."))} GROUP BY c.tenant_id, c.id ORDER BY c.tenant_id, c.id${d.limit()}`,
          ),
        ],
      };
  }
}
