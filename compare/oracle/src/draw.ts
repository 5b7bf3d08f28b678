import type { Prng } from "./prng.js";
import {
  ACTIONS,
  CATEGORIES,
  COUNTRIES,
  lit,
  PRODUCTS,
  STATUSES,
  TENANTS,
  TIERS,
  UNKNOWN_TENANT,
} from "./schema.js";

/** The vocabulary families draw from: literals of the oracle's schema and key predicates. */
export class Draw {
  constructor(readonly rng: Prng) {}

  int(low: number, high: number): number {
    return this.rng.int(low, high);
  }

  chance(p: number): boolean {
    return this.rng.chance(p);
  }

  pick<T>(items: readonly T[]): T {
    return this.rng.pick(items);
  }

  /** A tenant key literal; now and then one no region holds. */
  tenant(): string {
    return lit(this.rng.chance(0.06) ? UNKNOWN_TENANT : this.rng.pick(TENANTS).key);
  }

  /** `count` distinct known tenant literals (spread over regions or not, as drawn). */
  tenants(count: number): string[] {
    return this.rng.pickDistinct(TENANTS, count).map((tenant) => lit(tenant.key));
  }

  /** Two tenants of the same region. */
  tenantsOfOneRegion(): [string, string] {
    const first = this.rng.pick(TENANTS);
    const second = this.rng.pick(TENANTS.filter((t) => t.region === first.region && t.key !== first.key));
    return [lit(first.key), lit(second.key)];
  }

  status(): string {
    return lit(this.rng.pick(STATUSES));
  }

  statuses(count: number): string {
    return this.rng
      .pickDistinct(STATUSES, count)
      .map((status) => lit(status))
      .join(", ");
  }

  country(): string {
    return lit(this.rng.pick(COUNTRIES));
  }

  tier(): string {
    return lit(this.rng.pick(TIERS));
  }

  category(): string {
    return lit(this.rng.pick(CATEGORIES));
  }

  product(): string {
    return lit(this.rng.pick(PRODUCTS));
  }

  action(): string {
    return lit(this.rng.pick(ACTIONS));
  }

  money(low: number, high: number): string {
    return `${this.rng.int(low, high)}.${String(this.rng.int(0, 99)).padStart(2, "0")}`;
  }

  /**
   * A predicate on `column` (the shared key) that pins one tenant, a few, or nothing at all;
   * `""` when it pins nothing. Mostly one tenant, so most statements have a single region.
   */
  keyPredicate(column: string): string {
    const roll = this.rng.int(0, 99);
    if (roll < 55) return `${column} = ${this.tenant()}`;
    if (roll < 65) return `${column} IN (${this.tenantsOfOneRegion().join(", ")})`;
    if (roll < 75) return `${column} IN (${this.tenants(this.rng.int(2, 4)).join(", ")})`;
    if (roll < 80) {
      const [a, b] = this.tenants(2);
      return `(${column} = ${a} OR ${column} = ${b})`;
    }
    return "";
  }

  /** A few columns of `columns`, in their declared order, never empty. */
  columns(columns: readonly string[], prefix = ""): string[] {
    const chosen = columns.filter(() => this.rng.chance(0.55));
    const list = chosen.length === 0 ? [this.rng.pick(columns)] : chosen;
    return list.map((column) => `${prefix}${column}`);
  }

  /** A condition on orders' other columns (or nothing), to vary which rows qualify. */
  orderFilter(prefix = ""): string {
    switch (this.rng.int(0, 6)) {
      case 0:
        return `${prefix}amount > ${this.money(1, 700)}`;
      case 1:
        return `${prefix}qty >= ${this.rng.int(1, 8)}`;
      case 2:
        return `${prefix}id <= ${this.rng.int(2, 14)}`;
      case 3:
        return `${prefix}status <> ${this.status()}`;
      case 4:
        return `${prefix}amount BETWEEN ${this.rng.int(1, 300)} AND ${this.rng.int(301, 900)}`;
      case 5:
        return `${prefix}weight ${this.rng.chance(0.5) ? "IS NOT NULL" : `< ${this.rng.int(50, 500)}`}`;
      default:
        return "";
    }
  }

  /** A condition on customers' other columns (or nothing). */
  customerFilter(prefix = ""): string {
    switch (this.rng.int(0, 6)) {
      case 0:
        return `${prefix}age >= ${this.rng.int(18, 75)}`;
      case 1:
        return `${prefix}balance < ${this.money(100, 5000)}`;
      case 2:
        return `${prefix}score > ${this.rng.int(0, 190) / 2}`;
      case 3:
        return `${prefix}country <> ${this.country()}`;
      case 4:
        return `${prefix}id <= ${this.rng.int(2, 8)}`;
      case 5:
        return `${prefix}joined >= '2025-${String(this.rng.int(1, 12)).padStart(2, "0")}-01'`;
      default:
        return "";
    }
  }

  /** ` LIMIT n [OFFSET m]` or nothing. */
  limit(): string {
    if (!this.rng.chance(0.3)) return "";
    const offset = this.rng.chance(0.3) ? ` OFFSET ${this.rng.int(1, 5)}` : "";
    return ` LIMIT ${this.rng.int(1, 12)}${offset}`;
  }
}

/** `WHERE a AND b` from the non-empty conditions, or nothing. */
export function where(...conditions: readonly string[]): string {
  const present = conditions.filter((condition) => condition !== "");
  return present.length === 0 ? "" : ` WHERE ${present.join(" AND ")}`;
}

export const CUSTOMER_COLUMNS = [
  "tenant_id",
  "id",
  "name",
  "country",
  "tier",
  "age",
  "score",
  "balance",
  "active",
  "joined",
] as const;
export const ORDER_COLUMNS = [
  "tenant_id",
  "id",
  "customer_id",
  "product_code",
  "qty",
  "amount",
  "status",
  "weight",
] as const;
