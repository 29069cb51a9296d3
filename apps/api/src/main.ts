import { loadConfig } from '@herald/config';
import { startApi } from './api.app';

// Direct entry (`node dist/apps/api/src/main.js`); `herald api` is the usual way in.
void startApi(loadConfig()).then(({ close }) => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void close());
});
