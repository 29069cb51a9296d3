import { figuresOf } from './compare-runs';

const printed = `
Herald delivery bench, 2026-11-26T11:33:56.202Z
  machine: 2 × AMD EPYC, Node v20.20.2

                                     accepted   acc/s  deliv/s  mid80/s  p50 ms  p90 ms  p99 ms  max ms
  saturation: 20,000 emails at once    20,000   5,000    1,036    1,213   9,118  13,995  15,262  15,455
  latency: 500 emails/s for 15 s        8,500     501      501      500      26      42     125     208

  target delivered/s ≥ 1,500 sustained:       1,036/s (middle 80% 1,213/s)  MISSED

  CPU µs per delivered email, by process; "other" is work that is not the bench's (noise on a shared machine):
                                        api  worker  sinks  bench postgres  redis   nats   other   total  idle
  saturation: 20,000 emails at once     104     836    195     68      205      3     62      52   1,525   21%

                                        req/s  emails/s  p50 ms  p99 ms  max ms  non-2xx / errors
  POST /emails (32 conn)                3,885     3,885       7      17      95  none
`;

describe('figuresOf', () => {
  const figures = figuresOf(printed);

  it('reads each row of a table by its column names, without thousands separators', () => {
    expect(figures.get('rates | saturation: 20,000 emails at once | deliv/s')).toBe(1036);
    expect(figures.get('rates | latency: 500 emails/s for 15 s | p90 ms')).toBe(42);
  });

  it('splits the CPU header by words, whose names hold single spaces', () => {
    expect(figures.get('cpu | saturation: 20,000 emails at once | postgres')).toBe(205);
    expect(figures.get('cpu | saturation: 20,000 emails at once | bench')).toBe(68);
    expect(figures.get('cpu | saturation: 20,000 emails at once | idle')).toBe(21);
  });

  it('leaves out words in trailing columns and lines that are not rows of a table', () => {
    expect(figures.get('rates | POST /emails (32 conn) | max ms')).toBe(95);
    expect([...figures.keys()].some((k) => k.includes('non-2xx'))).toBe(false);
    expect([...figures.keys()].some((k) => k.includes('target'))).toBe(false);
  });
});
