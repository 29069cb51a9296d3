import { regionIdCode } from '@herald/config';
import { isUuid, newId, newRegionalId, regionOfId, stableId } from './ids';

describe('newId', () => {
  it('is a version 7 UUID with RFC 9562 variant bits', () => {
    const id = newId();
    expect(isUuid(id)).toBe(true);
    expect(id[14]).toBe('7');
    expect('89ab').toContain(id[19]);
  });

  it('starts with the time in milliseconds, so later ids sort after earlier ones', () => {
    const before = Date.now();
    const id = newId();
    const millis = parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
    expect(millis).toBeGreaterThanOrEqual(before);
    expect(millis).toBeLessThanOrEqual(Date.now());
    const later = new Date(before + 2);
    jest.useFakeTimers({ now: later });
    try {
      expect(newId() > id).toBe(true);
    } finally {
      jest.useRealTimers();
    }
  });

  it('differs every time', () => {
    expect(new Set(Array.from({ length: 10_000 }, newId)).size).toBe(10_000);
  });
});

describe('stableId', () => {
  it('is the same UUID (version 8) for the same parts, and another for other parts', () => {
    expect(stableId('a', 'b')).toBe(stableId('a', 'b'));
    expect(stableId('a', 'b')).not.toBe(stableId('ab'));
    expect(stableId('a')[14]).toBe('8');
  });
});

describe('regional ids: the region that holds an email is in its id', () => {
  // Every AWS region's name (2026), the names operators most often give theirs.
  const AWS = (
    'us-east-1 us-east-2 us-west-1 us-west-2 af-south-1 ap-east-1 ap-east-2 ap-south-1 ap-south-2 ap-southeast-1 ap-southeast-2 ' +
    'ap-southeast-3 ap-southeast-4 ap-southeast-5 ap-southeast-7 ap-northeast-1 ap-northeast-2 ap-northeast-3 ca-central-1 ca-west-1 ' +
    'eu-central-1 eu-central-2 eu-west-1 eu-west-2 eu-west-3 eu-south-1 eu-south-2 eu-north-1 il-central-1 me-south-1 me-central-1 ' +
    'sa-east-1 mx-central-1'
  ).split(' ');

  it('is a version 7 UUID that sorts by time like any other id', () => {
    const id = newRegionalId('eu-west-1');
    expect(isUuid(id)).toBe(true);
    expect(id[14]).toBe('7');
    expect('89ab').toContain(id[19]);
    const millis = parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
    expect(Math.abs(millis - Date.now())).toBeLessThan(1000);
  });

  it('names its region among the configured ones', () => {
    for (const region of AWS) expect(regionOfId(newRegionalId(region), AWS)).toBe(region);
    expect(regionOfId(newRegionalId('eu-west-1'), ['us-east-1', 'eu-west-1'])).toBe('eu-west-1');
  });

  it('gives every AWS region its own code, so ids of any two of them never look alike', () => {
    expect(new Set(AWS.map(regionIdCode)).size).toBe(AWS.length);
  });

  it('names no region for an id of another kind, an older id, or a region not configured', () => {
    expect(regionOfId(newRegionalId('ap-south-1'), ['us-east-1', 'eu-west-1'])).toBeNull();
    expect(regionOfId(stableId('a', 'b'), AWS)).toBeNull();
    expect(regionOfId('3c0a3c2e-5d3e-4b8f-9a51-1f2e3d4c5b6a', AWS)).toBeNull();
    expect(regionOfId('not an id', AWS)).toBeNull();
  });

  it('keeps 62 random bits: a million ids of one region in the same millisecond are all different', () => {
    jest.useFakeTimers({ now: new Date('2026-11-27T00:00:00Z') });
    try {
      const ids = new Set(Array.from({ length: 1_000_000 }, () => newRegionalId('us-east-1')));
      expect(ids.size).toBe(1_000_000);
    } finally {
      jest.useRealTimers();
    }
  });
});
