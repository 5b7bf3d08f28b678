/** The SQLSTATE a query failed with, or undefined when it succeeded. */
export async function sqlState(run: Promise<unknown>): Promise<string | undefined> {
  try {
    await run;
    return undefined;
  } catch (error) {
    return (error as { code?: string }).code;
  }
}
