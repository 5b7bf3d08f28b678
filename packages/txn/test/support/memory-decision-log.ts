import type { DecisionLog, DecisionRecord } from "../../src/index.js";

/** A decision log in memory with a hook at the instant a decision is written, for ordering tests. */
export class MemoryDecisionLog implements DecisionLog {
  readonly records = new Map<string, { record: DecisionRecord; completed: boolean }>();
  onDecide: ((record: DecisionRecord) => void) | undefined;
  failDecide: Error | undefined;

  async decide(record: DecisionRecord): Promise<DecisionRecord> {
    await Promise.resolve();
    const existing = this.records.get(record.gid);
    if (existing !== undefined) return existing.record;
    if (this.failDecide !== undefined) throw this.failDecide;
    this.onDecide?.(record);
    this.records.set(record.gid, { record, completed: false });
    return record;
  }

  async complete(gid: string): Promise<void> {
    const entry = this.records.get(gid);
    if (entry !== undefined) entry.completed = true;
  }

  async lookup(gid: string): Promise<DecisionRecord | undefined> {
    return this.records.get(gid)?.record;
  }

  async pending(): Promise<DecisionRecord[]> {
    return [...this.records.values()].filter((e) => !e.completed).map((e) => e.record);
  }

  async compact(): Promise<void> {}

  async close(): Promise<void> {}
}
