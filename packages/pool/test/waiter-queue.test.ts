import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type QueueNode, WaiterQueue } from "../src/waiter-queue.js";

describe("WaiterQueue", () => {
  it("behaves like an array under any sequence of push, shift and removal", () => {
    const operation = fc.oneof(
      fc.record({ kind: fc.constant("push" as const), value: fc.integer() }),
      fc.record({ kind: fc.constant("shift" as const) }),
      fc.record({ kind: fc.constant("remove" as const), index: fc.nat() }),
    );
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 200 }), (operations) => {
        const queue = new WaiterQueue<number>();
        const model: { value: number; node: QueueNode<number> }[] = [];
        for (const op of operations) {
          switch (op.kind) {
            case "push":
              model.push({ value: op.value, node: queue.push(op.value) });
              break;
            case "shift":
              expect(queue.shift()).toBe(model.shift()?.value);
              break;
            case "remove": {
              if (model.length === 0) break;
              const [entry] = model.splice(op.index % model.length, 1);
              expect(queue.remove(entry!.node)).toBe(true);
              expect(queue.remove(entry!.node)).toBe(false);
              break;
            }
          }
          expect(queue.size).toBe(model.length);
        }
        const rest: number[] = [];
        for (let value = queue.shift(); value !== undefined; value = queue.shift()) rest.push(value);
        expect(rest).toEqual(model.map((entry) => entry.value));
      }),
    );
  });
});
