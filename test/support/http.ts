// One JSON request against the API, as a client sends it: the answer's body parsed when it is JSON.

export interface JsonResponse {
  status: number;
  body: any;
  headers: Headers;
}

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
