/** An error answered by Herald (its REST error body) or met on the way there, with words a person can read. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

const STATUS_WORDS: Record<number, string> = {
  400: 'The request was not understood.',
  401: 'You are signed out. Sign in again.',
  403: 'You may not do that.',
  404: 'Not found.',
  409: 'That conflicts with something that already exists.',
  422: 'Some of what you entered is not valid.',
  429: 'Too many requests. Wait a moment and try again.',
  500: 'Herald failed to answer. Try again in a moment.',
  502: 'Herald is not reachable right now. Try again in a moment.',
  503: 'Herald is briefly unavailable. Try again in a moment.',
  504: 'Herald took too long to answer. Try again in a moment.',
};

/**
 * The ApiError for a response that was not ok: Herald's body `{ statusCode, name, message }` when it
 * is one (better-auth's `{ code, message }` too), else words for the status, never an empty message.
 */
export function errorFromResponse(status: number, body: string): ApiError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    parsed = undefined;
  }
  if (parsed && typeof parsed === 'object') {
    const { name, code, message } = parsed as Record<string, unknown>;
    const words = typeof message === 'string' && message.trim() ? message.trim() : undefined;
    const id = typeof name === 'string' ? name : typeof code === 'string' ? code.toLowerCase() : undefined;
    if (words) return new ApiError(status, id ?? `http_${status}`, words);
    if (id) return new ApiError(status, id, wordsForStatus(status));
  }
  return new ApiError(status, `http_${status}`, wordsForStatus(status));
}

export function wordsForStatus(status: number): string {
  return STATUS_WORDS[status] ?? (status >= 500 ? STATUS_WORDS[500] : `The request failed (HTTP ${status}).`);
}

/** Any thrown value as a sentence for an alert. */
export function errorMessage(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  if (error instanceof TypeError) return 'Herald could not be reached. Check your connection and try again.';
  if (error instanceof Error && error.message) return error.message;
  return 'Something went wrong. Try again.';
}

export function isSignedOut(error: unknown): boolean {
  return error instanceof ApiError && error.status === 401;
}
