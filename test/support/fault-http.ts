export interface Reply {
  status: number;
  body: any;
  headers: Headers | null;
}

/** A request to a Herald API; network errors (a dead or cut API, a timeout) come back as status 0. */
export async function request(
  url: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  timeoutMs = 10_000,
): Promise<Reply> {
  try {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null, headers: response.headers };
  } catch (error) {
    return { status: 0, body: { error: (error as Error).message }, headers: null };
  }
}
