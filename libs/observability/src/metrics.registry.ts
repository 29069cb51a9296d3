import { collectDefaultMetrics, Registry } from 'prom-client';

/** Injection token of the role's prom-client `Registry`. */
export const METRICS_REGISTRY = Symbol('HERALD_METRICS_REGISTRY');

/**
 * A registry of the role's own rather than prom-client's global one: `herald all` and the test
 * suites run several Nest applications in one process, and each must own its metric names.
 */
export function createMetricsRegistry(role: string, region: string): Registry {
  const registry = new Registry();
  // Set before the default metrics so every series, Node's included, carries role and region.
  registry.setDefaultLabels({ role, region });
  collectDefaultMetrics({ register: registry });
  return registry;
}
