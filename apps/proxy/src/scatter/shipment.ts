import type { GatherConfig } from "@geo/core";
import type { FieldDescription, FormatCode } from "@geo/proto";
import { allValues } from "./data-row.js";
import { gatherBoundExceeded } from "./errors.js";
import type { RegionRows } from "./region-statement.js";
import { ColumnArray, shippingFormat } from "./typed-arrays.js";

/** Rows and bytes shipped home so far for one statement, against the [gather] bounds. */
export class ShipmentBudget {
  private rows = 0;
  private bytes = 0;

  constructor(
    private readonly limits: GatherConfig,
    private readonly regions: readonly string[],
  ) {}

  add(bytes: number): void {
    this.rows++;
    this.bytes += bytes;
    if (this.rows > this.limits.maxRows) throw gatherBoundExceeded("rows", this.limits.maxRows, this.regions);
    if (this.bytes > this.limits.maxBytes)
      throw gatherBoundExceeded("bytes", this.limits.maxBytes, this.regions);
  }
}

/** The columns of one relation shipped home, one typed array each. */
export class Shipment {
  readonly arrays: ColumnArray[];

  constructor(
    readonly fields: readonly FieldDescription[],
    readonly typeNames: readonly string[],
  ) {
    this.arrays = fields.map(
      (field, i) => new ColumnArray(field.typeOid, shippingFormat(field.typeOid, typeNames[i] ?? "text")),
    );
  }

  /** The formats to ask the regions for, so values arrive as they will travel. */
  get formats(): FormatCode[] {
    return this.arrays.map((array) => array.format);
  }

  /** Takes every row of a region's answer. */
  async take(rows: RegionRows, budget: ShipmentBudget): Promise<void> {
    for (let row = await rows.next(); row !== null; row = await rows.next()) {
      const values = allValues(row);
      let bytes = 0;
      for (const [i, array] of this.arrays.entries()) bytes += array.push(values[i] ?? null);
      budget.add(bytes);
    }
  }
}
