import { runInNewContext } from 'node:vm';
import { QueryFailedError, QueryRunnerAlreadyReleasedError, QueryRunnerProviderAlreadyReleasedError } from 'typeorm';
import { isPostgresUnreachable, postgresUnavailable } from './postgres-unavailable';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('isPostgresUnreachable', () => {
  it.each([
    ['a reset socket', withCode('read ECONNRESET', 'ECONNRESET')],
    ['a refused connection', withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
    ['a connection lost mid-query', new Error('Connection terminated unexpectedly')],
    ['a pool that could not connect in time', new Error('timeout exceeded when trying to connect')],
    ['an administrator shutdown', withCode('terminating connection due to administrator command', '57P01')],
    ['a server still starting', withCode('the database system is starting up', '57P03')],
    ['a connection exception', withCode('connection failure', '08006')],
    ['too many connections', withCode('sorry, too many clients already', '53300')],
    ['a full disk', withCode('could not extend file "base/16384/16439": No space left on device', '53100')],
    ['the same, wrapped by TypeORM', new QueryFailedError('SELECT 1', [], withCode('read ECONNRESET', 'ECONNRESET'))],
    ['a transaction whose connection TypeORM released when it failed', new QueryRunnerProviderAlreadyReleasedError()],
    ['a statement on a query runner TypeORM released when its connection failed', new QueryRunnerAlreadyReleasedError()],
    ['a reset socket wrapped as a cause', new Error('could not store the email', { cause: withCode('read ECONNRESET', 'ECONNRESET') })],
  ])('is true for %s', (_name, error) => {
    expect(isPostgresUnreachable(error)).toBe(true);
  });

  it.each([
    ['a unique violation', new QueryFailedError('INSERT', [], withCode('duplicate key value violates unique constraint', '23505'))],
    ['a syntax error', withCode('syntax error at or near "SELEC"', '42601')],
    ['a serialization failure', withCode('could not serialize access', '40001')],
    ['a plain bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['a unique violation wrapped as a cause', new Error('could not store the email', { cause: withCode('duplicate key', '23505') })],
    ['something that is not an error', 'ECONNRESET'],
    ['nothing', null],
  ])('is false for %s', (_name, error) => {
    expect(isPostgresUnreachable(error)).toBe(false);
  });
});

describe('postgresUnavailable', () => {
  it('answers service_unavailable with a Retry-After for an unreachable Postgres, null otherwise', () => {
    expect(postgresUnavailable(new Error('Connection terminated unexpectedly'))).toMatchObject({ code: 'service_unavailable', retryAfterSeconds: 1 });
    expect(postgresUnavailable(new TypeError('x'))).toBeNull();
  });

  it("recognises an error made in another realm by its shape (a socket error of Node's own, as a vm context sees it)", () => {
    const foreign = runInNewContext(`Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5433'), { code: 'ECONNREFUSED' })`);
    expect(foreign instanceof Error).toBe(false);
    expect(isPostgresUnreachable(foreign)).toBe(true);
    expect(isPostgresUnreachable({ message: 'relation "emails" does not exist', code: '42P01' })).toBe(false);
  });
});
