import { Inject, Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram, Metric, Registry } from 'prom-client';
import { METRICS_REGISTRY } from './metrics.registry';

type MetricClass = typeof Counter | typeof Gauge | typeof Histogram;

/**
 * Get-or-create access to the role's metrics: the first caller of a name creates the metric,
 * later callers (another module, another instance of a service) get the same object back.
 */
@Injectable()
export class MetricsService {
  constructor(@Inject(METRICS_REGISTRY) readonly registry: Registry) {}

  counter<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
    return this.getOrCreate(Counter, name, labelNames, () => new Counter({ name, help, labelNames, registers: [this.registry] }));
  }

  gauge<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): Gauge<L> {
    return this.getOrCreate(Gauge, name, labelNames, () => new Gauge({ name, help, labelNames, registers: [this.registry] }));
  }

  /** `buckets` default to prom-client's (5 ms to 10 s), which suit request latencies. */
  histogram<L extends string = never>(name: string, help: string, labelNames: readonly L[] = [], buckets?: number[]): Histogram<L> {
    return this.getOrCreate(
      Histogram,
      name,
      labelNames,
      () => new Histogram({ name, help, labelNames, registers: [this.registry], ...(buckets ? { buckets } : {}) }),
    );
  }

  private getOrCreate<M>(kind: MetricClass, name: string, labelNames: readonly string[], create: () => M): M {
    const existing = this.registry.getSingleMetric(name);
    if (!existing) return create();
    // Sharing a name with another type or label set would make one caller's samples wrong.
    if (!(existing instanceof kind)) throw new Error(`metric "${name}" is already registered as a ${existing.constructor.name}`);
    const existingLabels = (existing as Metric & { labelNames?: readonly string[] }).labelNames ?? [];
    if (!sameLabels(existingLabels, labelNames)) {
      throw new Error(`metric "${name}" is already registered with labels [${existingLabels.join(', ')}]`);
    }
    return existing as M;
  }
}

function sameLabels(a: readonly string[], b: readonly string[]): boolean {
  const sorted = [...b].sort();
  return a.length === b.length && [...a].sort().every((label, i) => label === sorted[i]);
}
