import { type Draw, where } from "../draw.js";
import { type Drawn, ordered } from "./family.js";

/** IN, EXISTS, NOT EXISTS, correlated and scalar subqueries, keyed and not. */
export function subquery(d: Draw): Drawn {
  switch (d.int(0, 8)) {
    case 0: {
      const tenant = d.tenant();
      return {
        shape: "subquery/in",
        steps: [
          ordered(
            `SELECT tenant_id, id, name FROM customers WHERE tenant_id = ${tenant} AND id IN (SELECT customer_id FROM orders WHERE tenant_id = ${tenant} AND status IN (${d.statuses(d.int(1, 3))})) ORDER BY tenant_id, id`,
          ),
        ],
      };
    }
    case 1:
      return {
        shape: "subquery/in-replicated",
        steps: [
          ordered(
            `SELECT tenant_id, id, product_code, qty FROM orders${where(d.keyPredicate("tenant_id"), `product_code IN (SELECT code FROM products WHERE category = ${d.category()})`)} ORDER BY tenant_id, id${d.limit()}`,
          ),
        ],
      };
    case 2:
      return {
        shape: "subquery/exists",
        steps: [
          ordered(
            `SELECT c.tenant_id, c.id, c.name FROM customers c${where(d.keyPredicate("c.tenant_id"), `EXISTS (SELECT 1 FROM orders o WHERE o.tenant_id = c.tenant_id AND o.customer_id = c.id AND o.amount > ${d.money(10, 800)})`)} ORDER BY c.tenant_id, c.id`,
          ),
        ],
      };
    case 3:
      return {
        shape: "subquery/not-exists",
        steps: [
          ordered(
            `SELECT c.tenant_id, c.id FROM customers c${where(d.keyPredicate("c.tenant_id"), `NOT EXISTS (SELECT 1 FROM orders o WHERE o.tenant_id = c.tenant_id AND o.customer_id = c.id${d.chance(0.5) ? ` AND o.status = ${d.status()}` : ""})`)} ORDER BY c.tenant_id, c.id`,
          ),
        ],
      };
    case 4:
      return {
        shape: "subquery/correlated-scalar",
        steps: [
          ordered(
            `SELECT c.tenant_id, c.id, (SELECT count(*) FROM orders o WHERE o.tenant_id = c.tenant_id AND o.customer_id = c.id) AS orders, (SELECT max(o.amount) FROM orders o WHERE o.tenant_id = c.tenant_id AND o.customer_id = c.id) AS largest FROM customers c${where(d.keyPredicate("c.tenant_id"), d.customerFilter("c."))} ORDER BY c.tenant_id, c.id${d.limit()}`,
          ),
        ],
      };
    case 5: {
      const tenant = d.tenant();
      const inner = d.chance(0.6) ? ` WHERE tenant_id = ${tenant}` : "";
      return {
        shape: inner === "" ? "subquery/scalar-global" : "subquery/scalar",
        steps: [
          ordered(
            `SELECT tenant_id, id, amount FROM orders WHERE tenant_id = ${tenant} AND amount ${d.pick([">", "<"])} (SELECT avg(amount) FROM orders${inner})${d.chance(0.7) ? ` AND qty >= ${d.int(1, 8)}` : ""} ORDER BY tenant_id, id`,
          ),
        ],
      };
    }
    case 7:
      return {
        shape: "subquery/cte",
        steps: [
          ordered(
            `WITH totals AS (SELECT tenant_id, customer_id, sum(amount) AS total, count(*) AS n FROM orders${where(d.keyPredicate("tenant_id"), d.orderFilter())} GROUP BY tenant_id, customer_id) SELECT c.tenant_id, c.id, c.name, t.total, t.n FROM customers c JOIN totals t ON t.tenant_id = c.tenant_id AND t.customer_id = c.id${where(d.customerFilter("c."))} ORDER BY c.tenant_id, c.id${d.limit()}`,
          ),
        ],
      };
    case 8:
      return {
        shape: "subquery/lateral",
        steps: [
          ordered(
            `SELECT c.tenant_id, c.id, l.id AS order_id, l.amount FROM customers c ${d.pick(["JOIN LATERAL", "LEFT JOIN LATERAL"])} (SELECT o.id, o.amount FROM orders o WHERE o.tenant_id = c.tenant_id AND o.customer_id = c.id ORDER BY o.amount ${d.pick(["ASC", "DESC"])}, o.id LIMIT ${d.int(1, 2)}) l ON true${where(d.keyPredicate("c.tenant_id"), d.customerFilter("c."))} ORDER BY c.tenant_id, c.id, l.id`,
          ),
        ],
      };
    default:
      return {
        shape: "subquery/derived-table",
        steps: [
          ordered(
            `SELECT t.tenant_id, t.total FROM (SELECT tenant_id, sum(amount) AS total FROM orders${where(d.keyPredicate("tenant_id"), d.orderFilter())} GROUP BY tenant_id) t WHERE t.total > ${d.int(0, 3000)} ORDER BY t.tenant_id`,
          ),
        ],
      };
  }
}
