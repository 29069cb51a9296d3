import { loadConfig } from '@herald/config';
import { startWorker } from './worker.app';

// Direct entry (`node dist/apps/worker/src/main.js`); `herald worker` is the usual way in.
void startWorker(loadConfig()).then((app) => app.enableShutdownHooks());
