import { HeraldError } from '@herald/core';
import { decodePayload, PoisonMessageError, retryDelayMs, settlementForError } from './jetstream.settlement';

const retry = { initialMs: 100, maxMs: 1000 };

describe('settlementForError', () => {
  it('terminates a payload that is not JSON', () => {
    expect(() => decodePayload(Buffer.from('{not json'))).toThrow(PoisonMessageError);
    expect(settlementForError(new PoisonMessageError('x'), 1, retry)).toMatchObject({ action: 'term' });
  });

  it('terminates a message that failed validation', () => {
    const s = settlementForError(new HeraldError('validation_error', 'emailId: must be a UUID'), 1, retry);
    expect(s).toEqual({ action: 'term', reason: 'validation_error: emailId: must be a UUID' });
  });

  it('retries any other error with a delay growing with the delivery count', () => {
    expect(settlementForError(new Error('db down'), 1, retry)).toMatchObject({ action: 'nak', delayMs: 100 });
    expect(settlementForError(new Error('db down'), 3, retry)).toMatchObject({ action: 'nak', delayMs: 400 });
    expect(settlementForError(new HeraldError('service_unavailable', 'x'), 2, retry)).toMatchObject({ action: 'nak', delayMs: 200 });
    expect(retryDelayMs(50, retry)).toBe(1000);
  });

  it('waits at least as long as a rate limit asks', () => {
    const s = settlementForError(new HeraldError('rate_limit_exceeded', 'slow down', 5), 1, retry);
    expect(s).toMatchObject({ action: 'nak', delayMs: 5000 });
  });

  it('retries a thrown value that is not an Error, naming it', () => {
    expect(settlementForError('connection reset', 1, retry)).toEqual({ action: 'nak', delayMs: 100, reason: 'connection reset' });
  });
});
