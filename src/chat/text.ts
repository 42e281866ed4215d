// Text as PostgreSQL stores it. A JavaScript string may hold a lone surrogate (half of a UTF-16 pair, which a
// JSON escape such as "\ud800" can produce); UTF-8 cannot, so the database driver writes U+FFFD in its place.
// Replacing it once where text comes in makes every answer echo exactly what was stored.

// ES2024 (Node 20+); the project compiles against ES2022's lib.
declare global {
  interface String {
    isWellFormed(): boolean;
    toWellFormed(): string;
  }
}

/** The string with each lone surrogate replaced by U+FFFD (the same string when there is none). */
export function wellFormed(text: string): string {
  return text.isWellFormed() ? text : text.toWellFormed();
}

/**
 * Replaces lone surrogates in every string of a parsed JSON value, in place (objects and arrays), and returns
 * the value (a new string when the value itself is one). Iterative: any depth.
 */
export function wellFormedDeep<T>(value: T): T {
  if (typeof value === 'string') return wellFormed(value) as T;
  if (value === null || typeof value !== 'object') return value;
  const stack: object[] = [value];
  while (stack.length > 0) {
    const container = stack.pop() as Record<string, unknown>;
    for (const key of Object.keys(container)) {
      const child = container[key];
      if (typeof child === 'string') {
        if (!child.isWellFormed()) container[key] = child.toWellFormed();
      } else if (child !== null && typeof child === 'object') {
        stack.push(child);
      }
    }
  }
  return value;
}
