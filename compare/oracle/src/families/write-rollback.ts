import type { Draw } from "../draw.js";
import { type Drawn, ordered, unordered } from "./family.js";

/**
 * Writes inside a transaction that is rolled back, each followed by a read of what the write
 * changed (inside) and the same read after ROLLBACK (outside), so a write that escaped its
 * transaction shows up as a wrong answer.
 */
export function writeRollback(d: Draw): Drawn {
  const tenant = d.tenant();
  const check = (sql: string) => ordered(sql);
  const wrap = (shape: string, write: string, read: string): Drawn => ({
    shape,
    steps: [unordered("BEGIN"), unordered(write), check(read), unordered("ROLLBACK"), check(read)],
  });
  switch (d.int(0, 6)) {
    case 0:
      return wrap(
        "write-rollback/update-key",
        `UPDATE customers SET balance = balance + ${d.money(1, 300)}, tier = ${d.tier()} WHERE tenant_id = ${tenant} AND id ${d.chance(0.5) ? `= ${d.int(1, 8)}` : `<= ${d.int(1, 8)}`} RETURNING tenant_id, id, balance, tier`,
        `SELECT tenant_id, id, balance, tier FROM customers WHERE tenant_id = ${tenant} ORDER BY tenant_id, id`,
      );
    case 1: {
      const id = d.int(100, 999);
      return wrap(
        "write-rollback/insert-key",
        `INSERT INTO orders (tenant_id, id, customer_id, product_code, qty, amount, status, weight) VALUES (${tenant}, ${id}, ${d.int(1, 5)}, ${d.product()}, ${d.int(1, 9)}, ${d.money(1, 900)}, ${d.status()}, ${d.chance(0.5) ? "NULL" : String(d.int(1, 900) / 10)}) RETURNING tenant_id, id, amount`,
        `SELECT count(*), sum(amount), max(id) FROM orders WHERE tenant_id = ${tenant}`,
      );
    }
    case 2:
      return wrap(
        "write-rollback/delete-key",
        `DELETE FROM orders WHERE tenant_id = ${tenant} AND ${d.chance(0.5) ? `status = ${d.status()}` : `amount < ${d.money(50, 800)}`} RETURNING tenant_id, id`,
        `SELECT tenant_id, id, status FROM orders WHERE tenant_id = ${tenant} ORDER BY tenant_id, id`,
      );
    case 3: {
      const [a, b] = d.tenants(2);
      const id = d.int(100, 999);
      return wrap(
        "write-rollback/insert-two-keys",
        `INSERT INTO orders (tenant_id, id, customer_id, product_code, qty, amount, status) VALUES (${a}, ${id}, 1, ${d.product()}, ${d.int(1, 9)}, ${d.money(1, 900)}, 'open'), (${b}, ${id}, 2, ${d.product()}, ${d.int(1, 9)}, ${d.money(1, 900)}, 'open') RETURNING tenant_id, id`,
        `SELECT tenant_id, count(*), sum(amount) FROM orders WHERE tenant_id IN (${a}, ${b}) GROUP BY tenant_id ORDER BY tenant_id`,
      );
    }
    case 4: {
      const status = d.status();
      return wrap(
        "write-rollback/update-every-region",
        `UPDATE orders SET qty = qty + ${d.int(1, 5)} WHERE status = ${status} AND amount > ${d.money(100, 800)} RETURNING tenant_id, id, qty`,
        `SELECT count(*), sum(qty) FROM orders WHERE status = ${status}`,
      );
    }
    case 5: {
      const code = d.product();
      return wrap(
        "write-rollback/replicated",
        `UPDATE products SET price = price + ${d.money(1, 20)} WHERE code = ${code} RETURNING code, price`,
        `SELECT code, price FROM products WHERE code = ${code} ORDER BY code`,
      );
    }
    default: {
      const id = d.int(100, 999);
      return wrap(
        "write-rollback/pinned",
        `INSERT INTO audit_events (id, tenant_id, action, amount) VALUES (${id}, ${tenant}, ${d.action()}, ${d.int(0, 500)}) RETURNING id, action`,
        `SELECT count(*), sum(amount), max(id) FROM audit_events`,
      );
    }
  }
}
