import { Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import MailComposer from 'nodemailer/lib/mail-composer';
import type Mail from 'nodemailer/lib/mailer';
import { ApiKeysService, type Principal } from '@herald/accounts';
import { CONFIG, pick } from '@herald/config';
import { SendingDomains } from '@herald/domains';
import { SendService } from '@herald/emails';
import { RateLimiter } from '@herald/limits';
import { EmailStore } from '@herald/messages';
import { RuntimeModule } from '@herald/runtime';
import { SMTP_CONFIG, SmtpSubmissionModule, SmtpSubmissions, type SmtpReply, type SmtpSubmissionPort, type SubmissionResult } from '@herald/smtp';
import { SuppressionCache } from '@herald/suppressions';
import { startTestApi, type TestApi } from './api-harness';

/**
 * The SMTP relay's send path on a running role's providers (the api role has every one it
 * needs), so a test can submit without an SMTP listener. A role that imports
 * SmtpSubmissionModule has it as `app.get(SmtpSubmissions)` already. (Nest's `app.get` of a
 * missing provider exits the process, so this does not probe for it.)
 */
export function smtpSubmissionsOf(app: INestApplicationContext): SmtpSubmissionPort {
  return new SmtpSubmissions(
    pick(app.get(CONFIG), SMTP_CONFIG.keys),
    app.get(ApiKeysService),
    app.get(RateLimiter),
    app.get(SuppressionCache),
    app.get(SendingDomains),
    app.get(SendService),
    app.get(EmailStore),
  );
}

@Module({})
class SmtpSubmissionRoot {}

/** An smtp role's send path without listeners (SmtpSubmissionModule), beside a test API on the same isolated stores. */
export interface SubmissionSuite {
  api: TestApi;
  app: INestApplicationContext;
  smtp: SmtpSubmissionPort;
  close(): Promise<void>;
}

export async function startSubmissionSuite(overrides: Record<string, string> = {}): Promise<SubmissionSuite> {
  const api = await startTestApi(overrides);
  const app = await NestFactory.createApplicationContext(
    { module: SmtpSubmissionRoot, imports: [RuntimeModule.forRole('smtp', api.config), SmtpSubmissionModule] },
    { logger: false },
  );
  await app.init();
  return {
    api,
    app,
    smtp: app.get(SmtpSubmissions),
    close: async () => {
      await app.close();
      await api.close();
    },
  };
}

/** The principal of an API key, through the relay's AUTH. */
export async function authenticated(smtp: SmtpSubmissionPort, token: string): Promise<Principal> {
  const result = await smtp.authenticate('herald', token);
  if (!result.ok) throw new Error('authentication failed');
  return result.principal;
}

export const compose = (options: Mail.Options, keepBcc = false): Promise<Buffer> => {
  const node = new MailComposer(options).compile();
  node.keepBcc = keepBcc;
  return node.build();
};

export const refused = (result: SubmissionResult): SmtpReply => {
  if (result.ok) throw new Error(`expected a refusal, got ${result.id}`);
  return result.reply;
};

export const accepted = (result: SubmissionResult): string => {
  if (!result.ok) throw new Error(`refused: ${result.reply.code} ${result.reply.enhanced} ${result.reply.message}`);
  return result.id;
};
