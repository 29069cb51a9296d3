import { findBare } from './message-reader';

describe('findBare', () => {
  it('finds bare CR and LF, across chunk boundaries', () => {
    expect(findBare(Buffer.from('a\r\nb\r\n'), false)).toBeNull();
    expect(findBare(Buffer.from('a\nb'), false)).toBe('LF');
    expect(findBare(Buffer.from('\nb'), true)).toBeNull();
    expect(findBare(Buffer.from('\nb'), false)).toBe('LF');
    expect(findBare(Buffer.from('b\r\n'), true)).toBe('CR');
    expect(findBare(Buffer.from('a\rb'), false)).toBe('CR');
    expect(findBare(Buffer.from('a\r'), false)).toBeNull();
  });
});
