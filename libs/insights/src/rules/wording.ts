/** `1 link`, `3 links`. */
export const plural = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? '' : 's'}`;

/** The first few items, then how many more: findings stay readable for a message with 200 links. */
export function list(items: readonly string[], shown = 5): string {
  const head = items.slice(0, shown).join(', ');
  return items.length > shown ? `${head} and ${items.length - shown} more` : head;
}

/** Bytes as KB with one decimal, as Gmail counts them (1 KB = 1,024 bytes). */
export const kilobytes = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KB`;
