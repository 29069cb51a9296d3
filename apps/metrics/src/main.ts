import { loadConfig } from '@herald/config';
import { startMetrics } from './metrics.app';

// Direct entry (`node dist/apps/metrics/src/main.js`); `herald metrics` is the usual way in.
void startMetrics(loadConfig()).then((app) => app.enableShutdownHooks());
