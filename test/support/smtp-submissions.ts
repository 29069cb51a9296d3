import type { INestApplicationContext } from '@nestjs/common';
import { ApiKeysService } from '@herald/accounts';
import { CONFIG } from '@herald/config';
import { SendingDomains } from '@herald/domains';
import { SendService, SmtpSubmissions, type SmtpSubmissionPort } from '@herald/emails';
import { RateLimiter } from '@herald/limits';
import { SuppressionsService } from '@herald/suppressions';

/**
 * The SMTP relay's send path on a running role's providers (the api role has every one it
 * needs), so a test can submit without an SMTP listener. A role that imports
 * SmtpSubmissionModule has it as `app.get(SMTP_SUBMISSIONS)` already. (Nest's `app.get` of a
 * missing provider exits the process, so this does not probe for it.)
 */
export function smtpSubmissionsOf(app: INestApplicationContext): SmtpSubmissionPort {
  return new SmtpSubmissions(
    app.get(CONFIG),
    app.get(ApiKeysService),
    app.get(RateLimiter),
    app.get(SuppressionsService),
    app.get(SendingDomains),
    app.get(SendService),
  );
}
