import { CUSTOMER_COLUMNS, type Draw, ORDER_COLUMNS, where } from "../draw.js";
import { type Drawn, ordered } from "./family.js";

/** Reads of rows by key, by other columns, and of replicated and pinned tables. */
export function keyLookup(d: Draw): Drawn {
  switch (d.int(0, 7)) {
    case 0: {
      const id = d.chance(0.5) ? `id = ${d.int(1, 9)}` : `id BETWEEN ${d.int(1, 3)} AND ${d.int(3, 8)}`;
      return {
        shape: "key-lookup/customer",
        steps: [
          ordered(
            `SELECT ${d.columns(CUSTOMER_COLUMNS).join(", ")} FROM customers${where(d.keyPredicate("tenant_id"), d.chance(0.6) ? id : "")} ORDER BY tenant_id, id${d.limit()}`,
          ),
        ],
      };
    }
    case 1:
      return {
        shape: "key-lookup/order-status",
        steps: [
          ordered(
            `SELECT ${d.columns(ORDER_COLUMNS).join(", ")} FROM orders${where(d.keyPredicate("tenant_id"), `status = ${d.status()}`)} ORDER BY tenant_id, id${d.limit()}`,
          ),
        ],
      };
    case 2:
      return {
        shape: "key-lookup/no-key",
        steps: [
          ordered(
            `SELECT tenant_id, id, name, balance FROM customers${where(`country = ${d.country()}`, d.customerFilter())} ORDER BY tenant_id, id${d.limit()}`,
          ),
        ],
      };
    case 3:
      return {
        shape: "key-lookup/replicated",
        steps: [
          d.chance(0.5)
            ? ordered(
                `SELECT code, name, category, price FROM products WHERE category = ${d.category()} OR price < ${d.money(1, 200)} ORDER BY code`,
              )
            : ordered(
                `SELECT code, name, continent FROM countries WHERE continent <> ${d.pick(["'asia'", "'europe'", "'america'"])} ORDER BY code${d.limit()}`,
              ),
        ],
      };
    case 4:
      return {
        shape: "key-lookup/pinned",
        steps: [
          d.chance(0.5)
            ? ordered(
                `SELECT id, tenant_id, action, amount FROM audit_events${where(d.chance(0.6) ? `tenant_id = ${d.tenant()}` : "", `amount > ${d.int(0, 400)}`)} ORDER BY id${d.limit()}`,
              )
            : ordered(
                `SELECT id, tenant_id, delta FROM ledger${where(d.chance(0.6) ? `tenant_id = ${d.tenant()}` : "", `delta < ${d.money(-200, 300)}`)} ORDER BY id${d.limit()}`,
              ),
        ],
      };
    case 5:
      return {
        shape: "key-lookup/expression",
        steps: [
          ordered(
            `SELECT tenant_id, id, upper(name) AS shout, round(score::numeric * ${d.int(2, 9)}, 2) AS scaled, coalesce(tier, 'none') AS tier FROM customers${where(d.keyPredicate("tenant_id"), d.chance(0.5) ? `active = ${d.pick(["true", "false"])}` : `age >= ${d.int(18, 70)}`)} ORDER BY tenant_id, id${d.limit()}`,
          ),
        ],
      };
    case 7:
      return {
        shape: "key-lookup/nulls-order",
        steps: [
          ordered(
            `SELECT tenant_id, id, ${d.pick(["age", "tier"])} AS v FROM customers${where(d.keyPredicate("tenant_id"), d.customerFilter())} ORDER BY v ${d.pick(["ASC", "DESC"])} NULLS ${d.pick(["FIRST", "LAST"])}, tenant_id, id${d.limit()}`,
          ),
        ],
      };
    default:
      return {
        shape: "key-lookup/top-n",
        steps: [
          ordered(
            `SELECT tenant_id, id, amount FROM orders${where(d.keyPredicate("tenant_id"), d.orderFilter())} ORDER BY amount ${d.pick(["ASC", "DESC"])}, tenant_id, id LIMIT ${d.int(1, 15)}`,
          ),
        ],
      };
  }
}
