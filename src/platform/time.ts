/** Timestamps leave the API as ISO 8601 in UTC with millisecond precision. */
export function iso(value: Date | number): string {
  return (typeof value === "number" ? new Date(value) : value).toISOString();
}
