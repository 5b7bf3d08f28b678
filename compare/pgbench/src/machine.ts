import { execFileSync } from "node:child_process";
import { availableParallelism, cpus, loadavg, release, totalmem, type } from "node:os";

/** Cores, CPU model, memory and kernel, as one line for the report. */
export function describeMachine(): string {
  const model = cpus()[0]?.model.replace(/\s+/g, " ").trim() ?? "unknown CPU";
  const memoryGiB = (totalmem() / 1024 ** 3).toFixed(1);
  return `Machine: ${availableParallelism()} cores (${model}), ${memoryGiB} GiB memory, ${type()} ${release()}`;
}

/** The first line a program prints for --version, or undefined when it is not installed. */
export function programVersion(program: string): string | undefined {
  try {
    return execFileSync(program, ["--version"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] })
      .split("\n")[0]
      ?.trim();
  } catch {
    return undefined;
  }
}

/** The 1-minute load average: other work on the machine shows up here, and in the spread. */
export function loadAverage(): string {
  return (loadavg()[0] ?? 0).toFixed(2);
}
