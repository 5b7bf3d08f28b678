/** Prints a note nobody can scroll past: a skipped target must never look like a measured one. */
export function shout(message: string): void {
  const bar = "!".repeat(78);
  const lines = message.split("\n").map((line) => `!! ${line}`);
  console.error(`\n${bar}\n${lines.join("\n")}\n${bar}\n`);
}
