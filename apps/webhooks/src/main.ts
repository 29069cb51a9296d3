import { loadConfig } from '@herald/config';
import { startWebhooks } from './webhooks.app';

// Direct entry (`node dist/apps/webhooks/src/main.js`); `herald webhooks` is the usual way in.
void startWebhooks(loadConfig()).then((app) => app.enableShutdownHooks());
