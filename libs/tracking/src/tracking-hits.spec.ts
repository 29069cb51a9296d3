import { newId } from '@herald/core';
import type { EngagementHit } from '@herald/messages';
import { decodeHits, encodeHits, trackingHitsSchema } from './tracking-hits';

describe('tracking stream messages', () => {
  const hits: EngagementHit[] = [
    {
      id: newId(),
      kind: 'click',
      emailId: newId(),
      position: 2,
      link: { index: 1, url: 'https://shop.example/a?b=c' },
      ipAddress: '203.0.113.9',
      userAgent: 'Mozilla/5.0 (Macintosh)',
      at: new Date('2026-11-29T13:30:01.234Z'),
      machine: false,
      reason: null,
    },
    {
      id: newId(),
      kind: 'open',
      emailId: newId(),
      position: 0,
      link: null,
      ipAddress: '17.58.1.1',
      userAgent: 'Mozilla/5.0',
      at: new Date('2026-11-29T13:30:02.000Z'),
      machine: true,
      reason: 'apple_privacy',
    },
  ];

  it('round-trips through the message schema, the time as an ISO string to the millisecond', () => {
    const wire = JSON.parse(encodeHits(hits)) as { hits: { at: string }[] };
    expect(wire.hits.map((h) => h.at)).toEqual(['2026-11-29T13:30:01.234Z', '2026-11-29T13:30:02.000Z']);
    expect(decodeHits(trackingHitsSchema.parse(wire))).toEqual(hits);
  });
});
