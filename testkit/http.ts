// HTTP as a client sends it: one JSON request, and whether a server answers at all.

export interface JsonResponse {
  readonly status: number;
  // Bodies are JSON from the wire; tests inspect them freely.
  readonly body: any;
  readonly headers: Headers;
}

/** One JSON request: the answer's body parsed when it is JSON (else the text, or null when empty). */
export async function requestJson(
  url: string,
  options: { method: string; token?: string | null; body?: unknown; headers?: Record<string, string>; timeoutMs?: number },
): Promise<JsonResponse> {
  const { method, token = null, body, headers = {}, timeoutMs } = options;
  const response = await fetch(url, {
    method,
    headers: {
      ...(token !== null ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    signal: timeoutMs ? AbortSignal.timeout(timeoutMs) : undefined,
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON: keep the text */
  }
  return { status: response.status, body: parsed, headers: response.headers };
}

/** The status GET url answers with, 0 when nothing answers within timeoutMs. */
export async function statusOf(url: string, timeoutMs = 2_000): Promise<number> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0;
  }
}

/** True once url answers with a status below 500. */
export async function answers(url: string): Promise<boolean> {
  const status = await statusOf(url, 1_000);
  return status > 0 && status < 500;
}
