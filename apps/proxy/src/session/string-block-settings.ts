import type { TransactionControl } from "@geo/sql";
import type { SessionSettings } from "./session-settings.js";

/**
 * Follows the transaction control of a query string sent to one region as a whole, so the SETs
 * it made are recorded as PostgreSQL keeps them: those of a block the string rolls back, or made
 * after a savepoint it rolls back to, are undone. Savepoints and the block's start from before the
 * string come from `outer` (the session's open block, if any).
 */
export class StringBlockSettings {
  private blockStart: SessionSettings | null;
  private readonly savepoints: { name: string; settings: SessionSettings }[] = [];

  constructor(
    private readonly settings: SessionSettings,
    outer: {
      readonly settingsBefore: SessionSettings;
      readonly savepoints: readonly { name: string; settings: SessionSettings }[];
    } | null,
  ) {
    this.blockStart = outer?.settingsBefore ?? null;
    if (outer !== null)
      for (const { name, settings: s } of outer.savepoints) this.savepoints.push({ name, settings: s });
  }

  /** Called for each transaction-control statement of the string, in order, before the next one's effects. */
  control(control: TransactionControl): void {
    switch (control.action) {
      case "begin":
        this.blockStart ??= this.settings.snapshot();
        return;
      case "savepoint":
        this.savepoints.push({ name: control.name ?? "", settings: this.settings.snapshot() });
        return;
      case "rollback-to":
      case "release": {
        const at = this.savepoints.map((savepoint) => savepoint.name).lastIndexOf(control.name ?? "");
        if (at < 0) return;
        const savepoint = this.savepoints[at]!;
        this.savepoints.splice(control.action === "rollback-to" ? at + 1 : at);
        if (control.action === "rollback-to") this.settings.restore(savepoint.settings.snapshot());
        return;
      }
      case "rollback":
        if (this.blockStart !== null) this.settings.restore(this.blockStart);
        this.end();
        return;
      case "commit":
      case "prepare":
        this.end();
        return;
      case "commit-prepared":
      case "rollback-prepared":
        return;
    }
  }

  private end(): void {
    this.blockStart = null;
    this.savepoints.splice(0);
  }
}
