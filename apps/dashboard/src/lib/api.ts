import { ApiError, errorFromResponse } from './api-error';

export const API_BASE = '/dashboard/api';
const CSRF_HEADER = 'X-CSRF-Token';
const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

let csrfToken: Promise<string> | undefined;

/** The double-submit token (GET /dashboard/api/csrf sets the cookie and answers it), fetched once per page load. */
export function csrf(): Promise<string> {
  csrfToken ??= fetch(`${API_BASE}/csrf`, { credentials: 'same-origin', headers: { accept: 'application/json' } })
    .then(async (response) => {
      const body = await response.text();
      if (!response.ok) throw errorFromResponse(response.status, body);
      return (JSON.parse(body) as { token: string }).token;
    })
    .catch((error: unknown) => {
      csrfToken = undefined;
      throw error;
    });
  return csrfToken;
}

export async function csrfHeaders(method: string | undefined): Promise<Record<string, string>> {
  return method && UNSAFE.has(method.toUpperCase()) ? { [CSRF_HEADER]: await csrf() } : {};
}

export type Query = Record<string, string | number | undefined | null>;

export function withQuery(path: string, query?: Query): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query ?? {})) if (value !== undefined && value !== null && value !== '') params.set(key, String(value));
  const search = params.toString();
  return search ? `${path}?${search}` : path;
}

/** A call to the dashboard API: JSON in and out, the CSRF header on state changes, every failure an ApiError. */
export async function api<T>(path: string, init: { method?: string; body?: unknown; query?: Query } = {}): Promise<T> {
  const method = init.method ?? 'GET';
  const headers: Record<string, string> = { accept: 'application/json', ...(await csrfHeaders(method)) };
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(withQuery(`${API_BASE}${path}`, init.query), {
    method,
    headers,
    credentials: 'same-origin',
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await response.text();
  if (!response.ok) {
    if (response.status === 403 && text.includes('csrf_token_invalid')) csrfToken = undefined;
    throw errorFromResponse(response.status, text);
  }
  if (!text) return undefined as T;
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new ApiError(response.status, 'invalid_response', 'Herald answered something that is not JSON. Reload the page and try again.');
  }
}

export interface List<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
}
