// Waiting: a plain pause, and polling a condition until it holds or time runs out.

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls check until it returns true, at most timeoutMs; throws with describe() on timeout. */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, describe: () => string, everyMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms: ${describe()}`);
    await sleep(everyMs);
  }
}
