import { randomUUID } from 'node:crypto';
import type { FaultTeam, FaultWorld } from './fault-world';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface KeyedSend {
  key: string;
  to: string;
  /** The id answered 200, once it was. */
  id?: string;
  /** When the attempt that got the 200 started. */
  answeredAttemptAt?: number;
  /** Every attempt's answer, `status name` (0: none), with ms since the key's first attempt: a mismatch's history. */
  attempts: string[];
}

export interface KeyedLoad {
  sends: KeyedSend[];
  /** Answers by status (0: no answer: refused, reset or timed out). */
  statuses: Record<number, number>;
  /** Error answers by status and name, e.g. `409 concurrent_idempotent_requests`. */
  errors: Record<string, number>;
  /** Stops starting new sends; each client still retries its current key until answered 200 (or `giveUpMs`). */
  stop(giveUpMs?: number): Promise<void>;
  /** What the accepted emails are, for the ledger: id → recipients. */
  accepted(): Map<string, string[]>;
}

/**
 * `clients` loops, each sending POST /emails with a fresh Idempotency-Key and retrying that key
 * (same body) on any answer but 200, as a careful client does: refusals, resets, timeouts, 503
 * and 409 in-progress alike. The retry schedule is short (fault scenarios are short).
 */
export function keyedLoad(
  world: FaultWorld,
  team: FaultTeam,
  to: (n: number) => string,
  options: { clients?: number; timeoutMs?: number } = {},
): KeyedLoad {
  const sends: KeyedSend[] = [];
  const statuses: Record<number, number> = {};
  const errors: Record<string, number> = {};
  let running = true;
  let giveUpAt = Infinity;
  let sequence = 0;
  const client = async () => {
    while (running) {
      const send: KeyedSend = { key: randomUUID(), to: to(sequence++), attempts: [] };
      const firstAt = Date.now();
      sends.push(send);
      const body = { from: team.from, to: send.to, subject: send.key, text: 'once' };
      while (Date.now() < giveUpAt) {
        const startedAt = Date.now();
        const reply = await world.call(team.token, 'POST', '/emails', body, { 'idempotency-key': send.key }, options.timeoutMs ?? 5_000);
        statuses[reply.status] = (statuses[reply.status] ?? 0) + 1;
        send.attempts.push(`${startedAt - firstAt}ms ${reply.status}${reply.body?.name ? ` ${reply.body.name}` : ''}`);
        if (reply.status === 200) {
          send.id = reply.body.id;
          send.answeredAttemptAt = startedAt;
          break;
        }
        if (reply.status >= 400) {
          const error = `${reply.status} ${reply.body?.name ?? ''}`;
          errors[error] = (errors[error] ?? 0) + 1;
        }
        await sleep(reply.status === 0 ? 200 : 100);
      }
    }
  };
  const clients = Array.from({ length: options.clients ?? 4 }, () => client());
  // A scenario that fails before stop() must not leave its clients looping after it.
  world.onClose(async () => {
    running = false;
    giveUpAt = 0;
    await Promise.all(clients);
  });
  return {
    sends,
    statuses,
    errors,
    async stop(giveUpMs = 30_000) {
      running = false;
      giveUpAt = Date.now() + giveUpMs;
      await Promise.all(clients);
    },
    accepted: () => new Map(sends.filter((s) => s.id).map((s) => [s.id!, [s.to]])),
  };
}

/** The emails stored under each idempotency key of the team: exactly one each is the promise. */
export async function emailsByKey(world: FaultWorld, teamId: string): Promise<Map<string, { ids: string[]; createdAt: Date }>> {
  const { rows } = await world.db.query<{ idempotency_key: string; ids: string[]; created_at: Date }>(
    `SELECT idempotency_key, array_agg(id::text) AS ids, min(created_at) AS created_at FROM emails
      WHERE team_id = $1 AND idempotency_key IS NOT NULL GROUP BY idempotency_key`,
    [teamId],
  );
  return new Map(rows.map((r) => [r.idempotency_key, { ids: r.ids, createdAt: r.created_at }]));
}

/** Every key answered 200 has exactly its one email, and every stored key was answered: the differences. */
export async function keyMismatches(world: FaultWorld, teamId: string, load: KeyedLoad): Promise<unknown[]> {
  const stored = await emailsByKey(world, teamId);
  const wrong: unknown[] = [];
  for (const send of load.sends) {
    const row = stored.get(send.key);
    if (!send.id && !row) continue;
    if (!send.id || !row || row.ids.length !== 1 || row.ids[0] !== send.id)
      wrong.push({ key: send.key, answered: send.id ?? null, stored: row?.ids ?? [], attempts: summarize(send.attempts) });
  }
  const known = new Set(load.sends.map((s) => s.key));
  for (const key of stored.keys()) if (!known.has(key)) wrong.push({ key, stored: stored.get(key)!.ids, answered: 'never sent' });
  return wrong;
}

/** Runs of equal answers folded (`+N like it`), so a key retried for 30 s reads in a few lines. */
function summarize(attempts: string[]): string[] {
  const out: string[] = [];
  let run = 0;
  for (let i = 0; i < attempts.length; i++) {
    const answer = attempts[i].replace(/^\d+ms /, '');
    const next = attempts[i + 1]?.replace(/^\d+ms /, '');
    if (run === 0) out.push(attempts[i]);
    if (next === answer) run++;
    else {
      if (run > 0) out.push(`+${run} like it, the last at ${attempts[i].split(' ')[0]}`);
      run = 0;
    }
  }
  return out;
}

/** Sends one email per address in batches; returns what was answered 200 (id → recipients). */
export async function sendAll(world: FaultWorld, team: FaultTeam, addresses: string[]): Promise<Map<string, string[]>> {
  const accepted = new Map<string, string[]>();
  for (let i = 0; i < addresses.length; i += 50) {
    const batch = addresses.slice(i, i + 50);
    const { status, body } = await world.call(
      team.token,
      'POST',
      '/emails/batch',
      batch.map((to) => ({ from: team.from, to, subject: `for ${to}`, text: 'hi' })),
    );
    if (status !== 200) throw new Error(`POST /emails/batch: ${status} ${JSON.stringify(body)}`);
    (body.data as { id: string }[]).forEach(({ id }, n) => accepted.set(id, [batch[n]]));
  }
  return accepted;
}
