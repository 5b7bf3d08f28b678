import { type Draw, where } from "../draw.js";
import { type Drawn, ordered } from "./family.js";

/** Window functions partitioned by the key and across it. */
export function windowFunction(d: Draw): Drawn {
  switch (d.int(0, 3)) {
    case 0:
      return {
        shape: "window/row-number-by-key",
        steps: [
          ordered(
            `SELECT tenant_id, id, amount, row_number() OVER (PARTITION BY tenant_id ORDER BY amount ${d.pick(["ASC", "DESC"])}, id) AS rank_in_tenant FROM orders${where(d.keyPredicate("tenant_id"), d.orderFilter())} ORDER BY tenant_id, id${d.limit()}`,
          ),
        ],
      };
    case 1:
      return {
        shape: "window/running-sum",
        steps: [
          ordered(
            `SELECT tenant_id, id, sum(amount) OVER (PARTITION BY tenant_id ORDER BY id) AS running, lag(amount) OVER (PARTITION BY tenant_id ORDER BY id) AS previous FROM orders${where(d.keyPredicate("tenant_id"), d.orderFilter())} ORDER BY tenant_id, id`,
          ),
        ],
      };
    case 2:
      return {
        shape: "window/global-rank",
        steps: [
          ordered(
            `SELECT tenant_id, id, score, rank() OVER (ORDER BY score DESC) AS place, count(*) OVER () AS total FROM customers${where(d.keyPredicate("tenant_id"), d.customerFilter())} ORDER BY tenant_id, id${d.limit()}`,
          ),
        ],
      };
    default:
      return {
        shape: "window/share",
        steps: [
          ordered(
            `SELECT tenant_id, id, round(amount / sum(amount) OVER (PARTITION BY tenant_id), 6) AS share, ntile(${d.int(2, 4)}) OVER (PARTITION BY tenant_id ORDER BY amount, id) AS bucket FROM orders${where(d.keyPredicate("tenant_id"), d.orderFilter())} ORDER BY tenant_id, id`,
          ),
        ],
      };
  }
}
