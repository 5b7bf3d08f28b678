import { type Draw, where } from "../draw.js";
import { type Drawn, unordered } from "./family.js";

const ORDER_AGGREGATES = [
  "count(*)",
  "count(weight)",
  "sum(qty)",
  "sum(amount)",
  "min(amount)",
  "max(amount)",
  "round(avg(amount), 6)",
  "round(avg(qty), 6)",
  "round(sum(weight)::numeric, 6)",
  "round(avg(weight)::numeric, 6)",
  "min(status)",
  "max(product_code)",
  "bool_or(qty > 5)",
  "count(DISTINCT status)",
  "round(stddev(amount), 6)",
] as const;

const CUSTOMER_AGGREGATES = [
  "count(*)",
  "count(tier)",
  "sum(age)",
  "round(avg(age), 6)",
  "round(sum(score)::numeric, 6)",
  "max(score)",
  "min(balance)",
  "sum(balance)",
  "bool_and(active)",
  "min(joined)",
  "max(name)",
  "count(DISTINCT country)",
] as const;

/** Whole-table aggregates: one row out, however many regions the rows come from. */
export function aggregate(d: Draw): Drawn {
  switch (d.int(0, 3)) {
    case 0: {
      const list = d.rng.pickDistinct(ORDER_AGGREGATES, d.int(1, 4));
      return {
        shape: "aggregate/orders",
        steps: [
          unordered(
            `SELECT ${list.join(", ")} FROM orders${where(d.keyPredicate("tenant_id"), d.chance(0.3) ? `status = ${d.status()}` : "")}`,
          ),
        ],
      };
    }
    case 1: {
      const list = d.rng.pickDistinct(CUSTOMER_AGGREGATES, d.int(1, 4));
      return {
        shape: "aggregate/customers",
        steps: [
          unordered(
            `SELECT ${list.join(", ")} FROM customers${where(d.keyPredicate("tenant_id"), d.chance(0.3) ? `country = ${d.country()}` : "")}`,
          ),
        ],
      };
    }
    case 2:
      return {
        shape: "aggregate/expression",
        steps: [
          unordered(
            `SELECT count(*) FILTER (WHERE status = ${d.status()}) AS picked, sum(qty * amount) AS value, coalesce(max(weight), -1) AS heaviest FROM orders${where(d.keyPredicate("tenant_id"), d.orderFilter())}`,
          ),
        ],
      };
    default:
      return {
        shape: "aggregate/pinned-replicated",
        steps: [
          unordered(
            d.pick([
              `SELECT count(*), sum(amount), max(action) FROM audit_events WHERE amount > ${d.int(0, 450)} AND id >= ${d.int(1, 20)}`,
              `SELECT count(*), sum(delta), min(delta) FROM ledger WHERE tenant_id <> ${d.tenant()} AND id <= ${d.int(5, 30)}`,
              `SELECT count(*), sum(price), round(avg(price), 4) FROM products WHERE price > ${d.money(1, 150)} OR category = ${d.category()}`,
            ]),
          ),
        ],
      };
  }
}
