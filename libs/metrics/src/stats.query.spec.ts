import { validateStatsQuery } from './stats.query';

const REGIONS = ['us-east-1', 'eu-west-1'];
const NOW = new Date('2026-11-26T14:37:00.000Z');

describe('validateStatsQuery', () => {
  it('defaults to the last 7 days of hours, to the end of the current hour', () => {
    expect(validateStatsQuery({}, REGIONS, NOW)).toEqual({
      from: new Date('2026-11-19T15:00:00.000Z'),
      to: new Date('2026-11-26T15:00:00.000Z'),
      granularity: 'hour',
      domainId: null,
      region: null,
    });
  });

  it('widens the range to whole UTC days at day granularity', () => {
    const q = validateStatsQuery({ from: '2026-11-01T10:00:00Z', to: '2026-11-03T01:00:00Z', granularity: 'day' }, REGIONS, NOW);
    expect([q.from.toISOString(), q.to.toISOString()]).toEqual(['2026-11-01T00:00:00.000Z', '2026-11-04T00:00:00.000Z']);
  });

  it.each([
    [{ granularity: 'minute' }, 'The `granularity` field must be `hour` or `day`.'],
    [{ to: 'soon' }, 'The `to` field must be an ISO 8601 date or date-time.'],
    [{ region: 'sa-east-1' }, 'The `region` field must be one of us-east-1, eu-west-1.'],
    [{ from: '2026-11-26', to: '2026-11-25' }, 'The `from` date must be before `to`.'],
    [{ from: '2025-01-01', to: '2026-11-26', granularity: 'day' }, 'The range from `from` to `to` must be at most 400 days at `day` granularity.'],
  ])('refuses %j', (query, message) => {
    expect(() => validateStatsQuery(query, REGIONS, NOW)).toThrow(expect.objectContaining({ code: 'validation_error', message }));
  });
});
