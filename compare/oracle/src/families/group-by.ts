import { type Draw, where } from "../draw.js";
import { type Drawn, ordered } from "./family.js";

/** GROUP BY with and without HAVING, grouped by the key and by other columns. */
export function groupBy(d: Draw): Drawn {
  const having = (aggregate: string, low: number, high: number) =>
    d.chance(0.5) ? ` HAVING ${aggregate} > ${d.int(low, high)}` : "";
  switch (d.int(0, 4)) {
    case 0:
      return {
        shape: "group-by/status",
        steps: [
          ordered(
            `SELECT status, count(*), sum(amount), round(avg(qty), 6) FROM orders${where(d.keyPredicate("tenant_id"), d.orderFilter())} GROUP BY status${having("count(*)", 1, 12)} ORDER BY status`,
          ),
        ],
      };
    case 1:
      return {
        shape: "group-by/key",
        steps: [
          ordered(
            `SELECT tenant_id, count(*) AS n, max(amount) AS top, round(sum(weight)::numeric, 6) AS weight FROM orders${where(d.keyPredicate("tenant_id"), d.chance(0.4) ? `status <> ${d.status()}` : "")} GROUP BY tenant_id${having("sum(qty)", 5, 50)} ORDER BY tenant_id`,
          ),
        ],
      };
    case 2:
      return {
        shape: "group-by/two-columns",
        steps: [
          ordered(
            `SELECT country, tier, count(*), round(avg(score)::numeric, 6) AS score, sum(balance) FROM customers${where(d.keyPredicate("tenant_id"), d.customerFilter())} GROUP BY country, tier${having("count(*)", 0, 4)} ORDER BY country, tier`,
          ),
        ],
      };
    case 3:
      return {
        shape: "group-by/replicated-join",
        steps: [
          ordered(
            `SELECT p.category, count(*), sum(o.qty * p.price) AS value FROM orders o JOIN products p ON p.code = o.product_code${where(d.keyPredicate("o.tenant_id"), d.orderFilter("o."))} GROUP BY p.category${having("count(*)", 0, 8)} ORDER BY p.category`,
          ),
        ],
      };
    default:
      return {
        shape: "group-by/pinned",
        steps: [
          ordered(
            d.chance(0.5)
              ? `SELECT action, count(*), sum(amount) FROM audit_events WHERE id <= ${d.int(5, 30)} GROUP BY action${having("sum(amount)", 100, 2000)} ORDER BY action`
              : `SELECT tenant_id, sum(delta) FROM ledger WHERE delta > ${d.money(-300, 200)} GROUP BY tenant_id${having("count(*)", 0, 3)} ORDER BY tenant_id`,
          ),
        ],
      };
  }
}
