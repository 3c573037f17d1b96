// The message of anything thrown or rejected, for a status line or a warning: an Error's message, else its text.
// (Plain objects with a `message`, as some client libraries reject with, give that message too.)

export function errorText(err: unknown): string {
  return (err as Error | null | undefined)?.message ?? String(err);
}
