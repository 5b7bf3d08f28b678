export function splitInsert(_text: string, _rows: readonly number[]): string {
  throw new Error("not yet");
}
