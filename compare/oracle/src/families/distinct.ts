import { type Draw, where } from "../draw.js";
import { type Drawn, ordered, unordered } from "./family.js";

/** DISTINCT, DISTINCT ON and count(DISTINCT). */
export function distinct(d: Draw): Drawn {
  switch (d.int(0, 3)) {
    case 0:
      return {
        shape: "distinct/one-column",
        steps: [
          ordered(
            `SELECT DISTINCT ${d.pick(["status", "product_code", "qty"])} AS v FROM orders${where(d.keyPredicate("tenant_id"), d.orderFilter())} ORDER BY v`,
          ),
        ],
      };
    case 1:
      return {
        shape: "distinct/two-columns",
        steps: [
          ordered(
            `SELECT DISTINCT country, tier FROM customers${where(d.keyPredicate("tenant_id"), d.customerFilter())} ORDER BY country, tier`,
          ),
        ],
      };
    case 2:
      return {
        shape: "distinct/on",
        steps: [
          ordered(
            `SELECT DISTINCT ON (tenant_id) tenant_id, id, amount FROM orders${where(d.keyPredicate("tenant_id"), d.orderFilter())} ORDER BY tenant_id, amount ${d.pick(["ASC", "DESC"])}, id`,
          ),
        ],
      };
    default:
      return {
        shape: "distinct/count",
        steps: [
          unordered(
            `SELECT count(DISTINCT ${d.pick(["product_code", "status", "customer_id"])}) FROM orders${where(d.keyPredicate("tenant_id"), d.orderFilter())}`,
          ),
        ],
      };
  }
}
