import { randomUUID } from 'node:crypto';
import type { INestApplicationContext, ModuleMetadata, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { BusModule, EventPublisher, SendPublisher, type HeraldEvent, type SendCommand } from '@herald/bus';
import { ConfigModule, type HeraldConfig } from '@herald/config';
import { isoTimestamp, newId } from '@herald/core';
import { DatabaseModule } from '@herald/database';
import { Dispatcher, DispatchReconciler, DispatchReconcilerModule, emailEvent, EmailEventOutbox, EmailStore, MessagesModule } from '@herald/messages';
import { MetricsModule } from '@herald/observability';
import { ResourceEventOutbox, ResourceEventsModule } from '@herald/outbox';
import { newEmailRow, normalizedEmail } from './email-rows';
import type { FromOutboxProcess, OutboxFault, OutboxKind, ToOutboxProcess } from './outbox-process';

/*
 * The child of an OutboxProcess: `node -r ts-register.js outbox-process.child.ts <kind> <fault>`.
 * It boots only what one outbox needs, commits and relays on the parent's command, and stops
 * for good at the fault point it was started with, for the parent to kill it there.
 *
 * The fault is injected here, in the test's own process script, by wrapping the publish method
 * of the bus publisher the outbox uses: production code carries no hook, reads no variable for
 * it, and pays nothing for it.
 */

interface OutboxUnderTest {
  imports: NonNullable<ModuleMetadata['imports']>;
  /** The bus publisher the outbox's entries go through, and the entry id (Nats-Msg-Id) of a call. */
  publisher: Type<SendPublisher> | Type<EventPublisher>;
  entryId(args: unknown[]): string;
  /** Commits 12 entries through the producer's write path; `publish` is the producer's next step. */
  commit(app: INestApplicationContext, region: string, teamId: string): Promise<{ ids: string[]; publish(): Promise<unknown> }>;
  relayOnce(app: INestApplicationContext): Promise<number>;
}

const outboxes: Record<OutboxKind, OutboxUnderTest> = {
  // The send path: emails and their dispatch rows in one transaction, then the send commands.
  dispatches: {
    imports: [MessagesModule, DispatchReconcilerModule],
    publisher: SendPublisher,
    entryId: ([command]) => (command as SendCommand).emailId,
    async commit(app, region, teamId) {
      // Four requests of three emails each: each request's emails share one outbox row.
      const rows = Array.from({ length: 4 }, () => {
        const dispatchId = newId();
        return Array.from({ length: 3 }, () => ({
          ...newEmailRow(teamId, normalizedEmail('a@outbox.example', 'outbox.example'), dispatchId),
          region,
        }));
      }).flat();
      await app.get(EmailStore).insert(rows);
      return { ids: rows.map((r) => r.id), publish: () => app.get(Dispatcher).dispatch(rows) };
    },
    relayOnce: (app) => app.get(DispatchReconciler).runOnce(),
  },
  // The late-report path: events recorded with the recipients' state, then published.
  'email-events': {
    imports: [MessagesModule],
    publisher: EventPublisher,
    entryId: ([, event]) => (event as HeraldEvent).id,
    async commit(app, region, teamId) {
      const store = app.get(EmailStore);
      const rows = Array.from({ length: 12 }, () => ({ ...newEmailRow(teamId, normalizedEmail('a@outbox.example', 'outbox.example')), region }));
      await store.insert(rows);
      const events = [];
      for (const row of rows) {
        const email = (await store.emailForReport(row.id))!;
        events.push(emailEvent('email.complained', email, email.recipients, new Date(), 'complaint'));
      }
      const fresh = await store.recordLate(events, []);
      return { ids: fresh.map((e) => e.id), publish: async () => app.get(EmailEventOutbox).publish(fresh) };
    },
    relayOnce: (app) => app.get(EmailEventOutbox).relayOnce(),
  },
  // A change to suppressions: its events recorded in the change's transaction, then published.
  'resource-events': {
    imports: [ResourceEventsModule],
    publisher: EventPublisher,
    entryId: ([, event]) => (event as HeraldEvent).id,
    async commit(app, region, teamId) {
      const outbox = app.get(ResourceEventOutbox);
      const events: HeraldEvent[] = Array.from({ length: 12 }, () => ({
        id: newId(),
        type: 'suppression.added',
        created_at: isoTimestamp(new Date()),
        team_id: teamId,
        data: { id: randomUUID(), email: 'lost@example.com' },
      }));
      await app.get(DataSource).transaction((m) => outbox.record(m, region, events));
      return { ids: events.map((e) => e.id), publish: () => outbox.publish(region, events) };
    },
    relayOnce: (app) => app.get(ResourceEventOutbox).relayOnce(),
  },
};

const tell = (message: FromOutboxProcess) => process.send!(message);
const never = new Promise<never>(() => undefined);

/**
 * Wraps the publisher's publish: with a fault, every publish stops for good at it (before the
 * call reaches NATS, or once NATS acknowledged it) and tells the parent; without, the ids of
 * acknowledged publishes are collected for the parent's count.
 */
function injectFault(
  publisher: { publish(...args: never[]): Promise<unknown> },
  entryId: (args: unknown[]) => string,
  fault: OutboxFault,
  published: string[],
): void {
  const publish = publisher.publish.bind(publisher) as (...args: unknown[]) => Promise<unknown>;
  (publisher as { publish: (...args: unknown[]) => Promise<unknown> }).publish = async (...args) => {
    const id = entryId(args);
    if (fault === 'before-publish') {
      tell({ halted: fault, id });
      return never;
    }
    const ack = await publish(...args);
    if (fault === 'after-publish') {
      tell({ halted: fault, id });
      return never;
    }
    published.push(id);
    return ack;
  };
}

async function main(): Promise<void> {
  const [kind, fault] = process.argv.slice(2) as [OutboxKind, OutboxFault];
  const outbox = outboxes[kind];
  const config = await new Promise<HeraldConfig>((resolve) => process.once('message', (m: ToOutboxProcess) => 'boot' in m && resolve(m.boot)));
  const app = await NestFactory.createApplicationContext(
    {
      module: class OutboxProcessModule {},
      imports: [ConfigModule.forRoot(config), DatabaseModule, BusModule, MetricsModule.forRole('test'), ...outbox.imports],
    },
    { logger: ['error', 'warn'] },
  );
  const published: string[] = [];
  injectFault(app.get<SendPublisher | EventPublisher>(outbox.publisher), outbox.entryId, fault, published);
  // A parent that is gone (its test failed or was killed) takes its children with it.
  process.on('disconnect', () => process.exit(1));

  process.on('message', (message: ToOutboxProcess) => {
    const handle = async () => {
      if (!('do' in message)) return;
      switch (message.do) {
        case 'commit': {
          const { ids, publish } = await outbox.commit(app, config.HERALD_REGION, message.teamId);
          tell({ committed: ids });
          await publish();
          return;
        }
        case 'relay': {
          published.length = 0;
          const relayed = await outbox.relayOnce(app);
          tell({ relayed, published: [...published] });
          return;
        }
        case 'close':
          await app.close();
          process.exit(0);
      }
    };
    handle().catch((error: Error) => tell({ failed: error.stack ?? error.message }));
  });
  tell({ ready: true });
}

main().catch((error: Error) => {
  tell({ failed: error.stack ?? error.message });
  process.exit(1);
});
