import { loadConfig } from '@herald/config';
import { startSmtp } from './smtp.app';

// Direct entry (`node dist/apps/smtp/src/main.js`); `herald smtp` is the usual way in.
void startSmtp(loadConfig()).then((app) => app.enableShutdownHooks());
