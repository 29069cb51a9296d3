import { Counter, Histogram } from 'prom-client';
import { createMetricsRegistry } from './metrics.registry';
import { MetricsService } from './metrics.service';

describe('MetricsService', () => {
  const metrics = () => new MetricsService(createMetricsRegistry('worker', 'sa-east-1'));

  it('returns the same metric to every caller of a name', async () => {
    const service = metrics();
    const first = service.counter('herald_sent_total', 'Emails sent.', ['outcome']);
    const second = service.counter('herald_sent_total', 'Emails sent.', ['outcome']);
    expect(second).toBe(first);
    first.inc({ outcome: 'delivered' });
    second.inc({ outcome: 'delivered' });
    expect(await service.registry.getSingleMetricAsString('herald_sent_total')).toContain(
      'herald_sent_total{outcome="delivered",role="worker",region="sa-east-1"} 2',
    );
  });

  it('shares histograms and gauges too, whatever the order of the labels', () => {
    const service = metrics();
    const histogram = service.histogram('herald_smtp_seconds', 'SMTP time.', ['mx', 'step'], [0.1, 1]);
    expect(histogram).toBeInstanceOf(Histogram);
    expect(service.histogram('herald_smtp_seconds', 'SMTP time.', ['step', 'mx'])).toBe(histogram);
    expect(service.gauge('herald_actors', 'Live sender actors.')).toBe(service.gauge('herald_actors', 'Live sender actors.'));
  });

  it('refuses a name already taken by another type or label set', () => {
    const service = metrics();
    expect(service.counter('herald_x', 'x', ['a'])).toBeInstanceOf(Counter);
    expect(() => service.gauge('herald_x', 'x', ['a'])).toThrow('metric "herald_x" is already registered as a Counter');
    expect(() => service.counter('herald_x', 'x', ['a', 'b'])).toThrow('metric "herald_x" is already registered with labels [a]');
  });

  it('labels the default Node metrics with role and region', async () => {
    const text = await metrics().registry.metrics();
    expect(text).toMatch(/^process_cpu_user_seconds_total\{role="worker",region="sa-east-1"\} /m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds\{role="worker",region="sa-east-1"\} /m);
  });
});
