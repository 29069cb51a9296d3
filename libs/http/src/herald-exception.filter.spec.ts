import { ArgumentsHost, HttpException, NotFoundException } from '@nestjs/common';
import { HeraldError } from '@herald/core';
import { HeraldExceptionFilter } from './herald-exception.filter';

/** What the filter writes on a Fastify reply, recorded. */
function answer(
  exception: unknown,
  request: { method: string; url: string; bodyLimit?: number },
  allowed: string[] = [],
  translate?: (error: unknown) => HeraldError | null,
) {
  const sent = { status: 0, headers: {} as Record<string, string>, body: undefined as unknown };
  const reply = {
    header: (name: string, value: string) => ((sent.headers[name] = value), reply),
    status: (status: number) => ((sent.status = status), reply),
    type: () => reply,
    send: (body: unknown) => ((sent.body = body), reply),
  };
  const fastifyRequest = { method: request.method, url: request.url, routeOptions: { bodyLimit: request.bodyLimit } };
  const host = { switchToHttp: () => ({ getResponse: () => reply, getRequest: () => fastifyRequest }) } as unknown as ArgumentsHost;
  new HeraldExceptionFilter(() => allowed, translate).catch(exception, host);
  return sent;
}

describe('HeraldExceptionFilter', () => {
  it('answers a failure its translator recognises (a backing service down) as translated, with Retry-After; any other as a 500', () => {
    const down = (error: unknown) =>
      error instanceof Error && error.message === 'Connection terminated unexpectedly'
        ? new HeraldError('service_unavailable', 'Try again soon.', 1)
        : null;
    expect(answer(new Error('Connection terminated unexpectedly'), { method: 'POST', url: '/emails' }, [], down)).toEqual({
      status: 503,
      headers: { 'retry-after': '1' },
      body: { statusCode: 503, name: 'service_unavailable', message: 'Try again soon.' },
    });
    expect(answer(new TypeError('a bug'), { method: 'POST', url: '/emails' }, [], down)).toMatchObject({ status: 500 });
  });

  it('answers Fastify’s body-too-large (413, handed on by Nest as an HttpException) with 413 naming the limit', () => {
    expect(answer(new HttpException('Request body is too large', 413), { method: 'POST', url: '/emails', bodyLimit: 4096 })).toEqual({
      status: 413,
      headers: {},
      body: { statusCode: 413, name: 'validation_error', message: 'The request body must not be larger than 4096 bytes.' },
    });
  });

  it('answers a wrong verb on a known path with 405 and Allow, an unknown path with 404', () => {
    expect(answer(new NotFoundException(), { method: 'PUT', url: '/emails?x=1' }, ['GET', 'HEAD', 'POST'])).toEqual({
      status: 405,
      headers: { allow: 'GET, HEAD, POST' },
      body: { statusCode: 405, name: 'method_not_allowed', message: 'Method PUT is not allowed for this path.' },
    });
    expect(answer(new NotFoundException(), { method: 'GET', url: '/nope' })).toMatchObject({ status: 404, headers: {} });
  });
});
