/**
 * The fields of ErrorResponse and NoticeResponse, by name, with the one-byte code each travels
 * under. Values are kept as the wire strings (position and line are decimal text).
 */
export const ErrorFieldCode = {
  severity: 0x53, // 'S' localized severity
  severityNonLocalized: 0x56, // 'V' never translated (since 9.6)
  code: 0x43, // 'C'
  message: 0x4d, // 'M'
  detail: 0x44, // 'D'
  hint: 0x48, // 'H'
  position: 0x50, // 'P' 1-based character index into the query text
  internalPosition: 0x70, // 'p'
  internalQuery: 0x71, // 'q'
  where: 0x57, // 'W'
  schema: 0x73, // 's'
  table: 0x74, // 't'
  column: 0x63, // 'c'
  dataType: 0x64, // 'd'
  constraint: 0x6e, // 'n'
  file: 0x46, // 'F'
  line: 0x4c, // 'L'
  routine: 0x52, // 'R'
} as const;
export type ErrorFieldName = keyof typeof ErrorFieldCode;

export type ErrorFields = { readonly [K in ErrorFieldName]?: string };

export const errorFieldNames = Object.keys(ErrorFieldCode) as readonly ErrorFieldName[];

const nameByCode = new Map<number, ErrorFieldName>(
  errorFieldNames.map((name) => [ErrorFieldCode[name], name]),
);

/** The field name for a code byte; undefined for codes added by newer servers (to be ignored). */
export function errorFieldName(code: number): ErrorFieldName | undefined {
  return nameByCode.get(code);
}
