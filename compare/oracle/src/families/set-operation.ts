import type { Draw } from "../draw.js";
import { type Drawn, ordered } from "./family.js";

const OPERATORS = ["UNION", "UNION ALL", "INTERSECT", "EXCEPT", "INTERSECT ALL", "EXCEPT ALL"] as const;

/** UNION, INTERSECT and EXCEPT between keyed reads of one or several tenants. */
export function setOperation(d: Draw): Drawn {
  const operator = d.pick(OPERATORS);
  const shape = `set-operation/${operator.toLowerCase().replace(" ", "-")}`;
  const sameRegion = d.chance(0.5);
  const [a, b] = sameRegion ? d.tenantsOfOneRegion() : d.tenants(2);
  switch (d.int(0, 2)) {
    case 0:
      return {
        shape,
        steps: [
          ordered(
            `SELECT tenant_id, customer_id FROM orders WHERE tenant_id = ${a} AND status = ${d.status()} ${operator} SELECT tenant_id, id FROM customers WHERE tenant_id = ${d.chance(0.5) ? a : b}${d.chance(0.5) ? ` AND active` : ""} ORDER BY 1, 2`,
          ),
        ],
      };
    case 1:
      return {
        shape,
        steps: [
          ordered(
            `SELECT country FROM customers WHERE tenant_id = ${a} ${operator} SELECT country FROM customers WHERE tenant_id = ${b} ORDER BY 1`,
          ),
        ],
      };
    default:
      return {
        shape,
        steps: [
          ordered(
            `SELECT product_code AS code FROM orders WHERE tenant_id = ${a} ${operator} SELECT code FROM products WHERE category = ${d.category()} ORDER BY 1`,
          ),
        ],
      };
  }
}
