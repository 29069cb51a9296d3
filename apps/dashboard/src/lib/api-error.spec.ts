import { ApiError, errorFromResponse, errorMessage, isSignedOut } from './api-error';

describe('errorFromResponse', () => {
  it("keeps Herald's error body: its name and its message", () => {
    const error = errorFromResponse(404, JSON.stringify({ statusCode: 404, name: 'not_found', message: 'Domain not found.' }));
    expect(error).toEqual(expect.objectContaining({ status: 404, code: 'not_found', message: 'Domain not found.' }));
  });

  it("reads better-auth's { code, message } body too", () => {
    const error = errorFromResponse(401, JSON.stringify({ code: 'INVALID_EMAIL_OR_PASSWORD', message: 'Invalid email or password' }));
    expect(error).toEqual(expect.objectContaining({ status: 401, code: 'invalid_email_or_password', message: 'Invalid email or password' }));
  });

  it.each([
    [401, 'You are signed out. Sign in again.'],
    [429, 'Too many requests. Wait a moment and try again.'],
    [500, 'Herald failed to answer. Try again in a moment.'],
    [502, 'Herald is not reachable right now. Try again in a moment.'],
    [599, 'Herald failed to answer. Try again in a moment.'],
    [418, 'The request failed (HTTP 418).'],
  ])('gives words for a %i whose body is not JSON', (status, words) => {
    expect(errorFromResponse(status, '<html><body>Bad Gateway</body></html>').message).toBe(words);
  });

  it('gives words when the body has a name but an empty message', () => {
    expect(errorFromResponse(403, JSON.stringify({ statusCode: 403, name: 'insufficient_role', message: '  ' }))).toEqual(
      expect.objectContaining({ code: 'insufficient_role', message: 'You may not do that.' }),
    );
  });

  it('never answers an empty message, whatever the body', () => {
    for (const body of ['', 'null', '[]', '{}', '"text"', '{"message":42}']) expect(errorFromResponse(500, body).message).not.toBe('');
  });
});

describe('errorMessage', () => {
  it('says a network failure (fetch TypeError) in words', () => {
    expect(errorMessage(new TypeError('Failed to fetch'))).toBe('Herald could not be reached. Check your connection and try again.');
  });

  it("keeps an ApiError's and an Error's message, and has words for anything else", () => {
    expect(errorMessage(new ApiError(409, 'conflict', 'The domain exists.'))).toBe('The domain exists.');
    expect(errorMessage(new Error('Choose a region.'))).toBe('Choose a region.');
    expect(errorMessage(undefined)).toBe('Something went wrong. Try again.');
  });

  it('tells a lost session (401) from other errors', () => {
    expect(isSignedOut(new ApiError(401, 'session_required', 'Sign in.'))).toBe(true);
    expect(isSignedOut(new ApiError(403, 'csrf_token_invalid', 'No.'))).toBe(false);
  });
});
