import { csrfTokenMatches, needsCsrfToken } from './csrf';

describe('CSRF double submit', () => {
  const token = 'a'.repeat(43);

  it('guards state changes under /dashboard/api/ only', () => {
    expect(needsCsrfToken('POST', '/dashboard/api/auth/sign-in/email')).toBe(true);
    expect(needsCsrfToken('DELETE', '/dashboard/api/teams/x/domains/y')).toBe(true);
    expect(needsCsrfToken('GET', '/dashboard/api/me')).toBe(false);
    expect(needsCsrfToken('POST', '/emails')).toBe(false);
  });

  it('wants the header equal to the cookie', () => {
    expect(csrfTokenMatches(`x=1; herald_csrf=${token}`, token)).toBe(true);
    expect(csrfTokenMatches(`herald_csrf=${token}`, undefined)).toBe(false);
    expect(csrfTokenMatches(undefined, token)).toBe(false);
    expect(csrfTokenMatches(`herald_csrf=${token}`, 'b'.repeat(43))).toBe(false);
    expect(csrfTokenMatches(`herald_csrf=${token}`, token.slice(1))).toBe(false);
    expect(csrfTokenMatches('herald_csrf=short', 'short')).toBe(false);
  });
});
