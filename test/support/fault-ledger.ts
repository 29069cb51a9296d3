import type { Client } from 'pg';
import type { WebhookReceiver } from '../webhooks/webhook-receiver';
import { waitUntil } from './worker-process';

const FINAL = ['delivered', 'bounced', 'failed', 'suppressed'] as const;
const EMAIL_EVENTS = [
  'email.sent',
  'email.delivered',
  'email.bounced',
  'email.failed',
  'email.suppressed',
  'email.delivery_delayed',
  'email.complained',
];

/** What a sink took in: smtp-server sinks and scripted MXs alike. */
interface Received {
  messages: { recipients: string[] }[];
}

export interface LedgerInput {
  db: Client;
  /** Every email the client was answered 200 for: id → its recipients. */
  accepted: Map<string, string[]>;
  sinks: Received[];
  /** With a receiver, every email event of the accepted emails must reach it once (path `/<team id>`). */
  webhooks?: { receiver: WebhookReceiver; teamId: string };
}

export interface Ledger {
  accepted: number;
  delivered: number;
  bounced: number;
  failed: number;
  suppressed: number;
  /** Accepted recipients with no final state: lost, as far as the customer can tell. */
  lost: number;
  /** Copies at the sinks beyond the first, per address. */
  duplicates: number;
  /** Addresses at a sink that no 200 answered for (a request whose answer the fault ate): not an error, counted. */
  unanswered: number;
  webhookEvents: number;
  webhookMissing: number;
  webhookDuplicates: number;
  details: { lost: unknown[]; duplicated: Record<string, number>; webhookMissing: unknown[]; webhookDuplicated: Record<string, number> };
}

/**
 * Waits (up to `timeoutMs`) until every accepted recipient has a final state and, with webhooks,
 * every email event of the accepted emails has reached the receiver; then counts.
 */
export async function settleLedger(input: LedgerInput, timeoutMs = 30_000): Promise<Ledger> {
  let ledger = await countLedger(input);
  await waitUntil(
    'the ledger to settle',
    async () => {
      ledger = await countLedger(input);
      return (ledger.lost === 0 && ledger.webhookMissing === 0) || `${ledger.lost} lost, ${ledger.webhookMissing} webhook events missing`;
    },
    timeoutMs,
    250,
  ).catch(() => undefined);
  // Late copies and late webhook retries land after the last state change: one more look.
  await new Promise((r) => setTimeout(r, 1_000));
  return countLedger(input);
}

export async function countLedger({ db, accepted, sinks, webhooks }: LedgerInput): Promise<Ledger> {
  const ids = [...accepted.keys()];
  const { rows } = await db.query<{ email_id: string; address: string; status: string }>(
    `SELECT email_id, address, status FROM email_recipients WHERE email_id = ANY($1::uuid[])`,
    [ids],
  );
  const byKey = new Map(rows.map((r) => [`${r.email_id} ${r.address.toLowerCase()}`, r.status]));
  const counts: Record<string, number> = { delivered: 0, bounced: 0, failed: 0, suppressed: 0 };
  const lost: unknown[] = [];
  let total = 0;
  for (const [id, recipients] of accepted) {
    for (const address of recipients) {
      total++;
      const status = byKey.get(`${id} ${address.toLowerCase()}`);
      if (status && (FINAL as readonly string[]).includes(status)) counts[status]++;
      else lost.push({ id, address, status: status ?? 'no row' });
    }
  }

  const copies = new Map<string, number>();
  for (const sink of sinks) {
    for (const message of sink.messages)
      for (const address of message.recipients) copies.set(address.toLowerCase(), (copies.get(address.toLowerCase()) ?? 0) + 1);
  }
  const answered = new Set([...accepted.values()].flat().map((a) => a.toLowerCase()));
  const duplicated = Object.fromEntries([...copies].filter(([, n]) => n > 1));

  let webhookEvents = 0;
  const webhookMissing: unknown[] = [];
  const webhookDuplicated: Record<string, number> = {};
  if (webhooks) {
    const events = await db.query<{ id: string; type: string; email_id: string }>(
      `SELECT id, type, email_id FROM email_events WHERE email_id = ANY($1::uuid[]) AND type = ANY($2::text[])`,
      [ids, EMAIL_EVENTS],
    );
    const messages = await db.query<{ id: string; event_id: string; status: string; attempts: number; due_in_ms: number }>(
      `SELECT id, event_id, status, attempts, round(extract(epoch FROM next_attempt_at - now()) * 1000)::int AS due_in_ms
         FROM webhook_messages WHERE team_id = $1`,
      [webhooks.teamId],
    );
    // Where a missing event's delivery stands: no message (never fanned out), or its message's state.
    const messageOf = new Map(messages.rows.map((m) => [m.event_id, { status: m.status, attempts: m.attempts, dueInMs: m.due_in_ms }]));
    const eventOf = new Map(messages.rows.map((m) => [m.id, m.event_id]));
    const seen = new Map<string, number>();
    // A delivery the receiver refused (a scenario's 5xx) is retried: only the accepted ones count.
    const taken = webhooks.receiver.at(`/${webhooks.teamId}`).filter((d) => typeof d.answered === 'number' && d.answered < 300);
    for (const delivery of taken) {
      const event = eventOf.get(String(delivery.headers['webhook-id'])) ?? `unknown message ${String(delivery.headers['webhook-id'])}`;
      seen.set(event, (seen.get(event) ?? 0) + 1);
    }
    webhookEvents = events.rows.length;
    for (const event of events.rows) if (!seen.has(event.id)) webhookMissing.push({ ...event, message: messageOf.get(event.id) ?? null });
    for (const [event, n] of seen) if (n > 1) webhookDuplicated[event] = n;
  }

  return {
    accepted: total,
    delivered: counts.delivered,
    bounced: counts.bounced,
    failed: counts.failed,
    suppressed: counts.suppressed,
    lost: lost.length,
    duplicates: Object.values(duplicated).reduce((sum, n) => sum + n - 1, 0),
    unanswered: [...copies.keys()].filter((a) => !answered.has(a)).length,
    webhookEvents,
    webhookMissing: webhookMissing.length,
    webhookDuplicates: Object.values(webhookDuplicated).reduce((sum, n) => sum + n - 1, 0),
    details: { lost, duplicated, webhookMissing, webhookDuplicated },
  };
}

/** The ledger as a table in the test output, with the scenario's duplicate bound beside the count. */
export function printLedger(scenario: string, ledger: Ledger, duplicateBound: number): void {
  const columns: [string, string | number][] = [
    ['accepted', ledger.accepted],
    ['delivered', ledger.delivered],
    ['bounced', ledger.bounced],
    ['failed', ledger.failed],
    ['suppressed', ledger.suppressed],
    ['lost', ledger.lost],
    ['duplicates', `${ledger.duplicates} (bound ${duplicateBound})`],
    ['unanswered', ledger.unanswered],
    ['webhook events', ledger.webhookEvents],
    ['missing', ledger.webhookMissing],
    ['twice', ledger.webhookDuplicates],
  ];
  const widths = columns.map(([name, value]) => Math.max(name.length, String(value).length));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padStart(widths[i])).join(' | ')} |`;
  const detail =
    ledger.lost || ledger.duplicates || ledger.webhookMissing || ledger.webhookDuplicates
      ? `\n${JSON.stringify(ledger.details, null, 1).slice(0, 3000)}`
      : '';
  console.log(`ledger: ${scenario}\n${line(columns.map(([n]) => n))}\n${line(columns.map(([, v]) => String(v)))}${detail}`);
}

/** The pass criteria every scenario shares: nothing lost, the books balance, duplicates within the bound, webhooks once per event. */
export function expectLedger(ledger: Ledger, duplicateBound: number): void {
  expect(ledger.details.lost).toEqual([]);
  expect(ledger.delivered + ledger.bounced + ledger.failed + ledger.suppressed).toBe(ledger.accepted);
  expect(ledger.duplicates).toBeLessThanOrEqual(duplicateBound);
  expect(ledger.details.webhookMissing).toEqual([]);
  expect(ledger.details.webhookDuplicated).toEqual({});
}
