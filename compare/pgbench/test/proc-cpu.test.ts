import { describe, expect, it } from "vitest";
import { cpuSecondsOfTree, parseProcStat } from "../src/index.js";

describe("CPU time from /proc", () => {
  it("counts fields from the last parenthesis, so a command name with spaces or ')' cannot shift them", () => {
    const fields = ["S", "41", "41", "41", "0", "-1", "4194560", "120", "0", "0", "0", "250", "37"];
    const stat = `4242 (node (relay) x) ${fields.join(" ")} 0 0 20 0 1 0 100 0 0`;
    expect(parseProcStat(stat)).toEqual({ ppid: 41, ticks: 287 });
  });

  it("charges a process for the CPU it burns", () => {
    // Spin until the process itself says it used 100 ms of CPU, however busy the machine is.
    const before = cpuSecondsOfTree(process.pid);
    const start = process.cpuUsage();
    let used = 0;
    while (used < 100_000) {
      const delta = process.cpuUsage(start);
      used = delta.user + delta.system;
    }
    const after = cpuSecondsOfTree(process.pid);
    // /proc counts in clock ticks (10 ms), so allow one tick either side.
    expect(after - before).toBeGreaterThanOrEqual(0.09);
  });
});
