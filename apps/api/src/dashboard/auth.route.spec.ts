import { heraldShaped } from './auth.route';

describe("better-auth's error bodies in Herald's shape", () => {
  it('adds statusCode and a snake_case name, keeping better-auth’s code and message', () => {
    expect(heraldShaped(401, JSON.stringify({ code: 'INVALID_EMAIL_OR_PASSWORD', message: 'Invalid email or password' }))).toEqual({
      code: 'INVALID_EMAIL_OR_PASSWORD',
      statusCode: 401,
      name: 'invalid_email_or_password',
      message: 'Invalid email or password',
    });
  });

  it('still says something when the body is empty or not JSON', () => {
    expect(heraldShaped(400, '')).toEqual({ statusCode: 400, name: 'http_400', message: 'The request could not be completed.' });
    expect(heraldShaped(500, 'oops')).toMatchObject({ statusCode: 500, name: 'http_500' });
  });
});
