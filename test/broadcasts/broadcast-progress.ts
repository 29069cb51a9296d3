import type { Client } from 'pg';

/** A broadcast's progress as Postgres has it: for waits on committed counts, and for diagnoses when one is stuck. */
export class BroadcastProgress {
  constructor(
    private readonly db: Client,
    private readonly broadcastId: string,
  ) {}

  /** Its status and the emails the fan-out has written. */
  async broadcast(): Promise<{ status: string; recipients: number }> {
    const { rows } = await this.db.query(`SELECT status, recipients FROM broadcasts WHERE id = $1`, [this.broadcastId]);
    return rows[0];
  }

  /** Its recipients by status. */
  async statuses(): Promise<Record<string, number>> {
    const { rows } = await this.db.query<{ status: string; n: number }>(
      `SELECT r.status, count(*)::int AS n FROM emails e JOIN email_recipients r ON r.email_id = e.id WHERE e.broadcast_id = $1 GROUP BY r.status`,
      [this.broadcastId],
    );
    return Object.fromEntries(rows.map((r) => [r.status, r.n]));
  }

  /** Each email it wrote → its recipients (a ledger's `accepted`). */
  async emails(): Promise<Map<string, string[]>> {
    const { rows } = await this.db.query<{ id: string; address: string }>(
      `SELECT e.id, r.address FROM emails e JOIN email_recipients r ON r.email_id = e.id WHERE e.broadcast_id = $1`,
      [this.broadcastId],
    );
    const emails = new Map<string, string[]>();
    for (const r of rows) emails.set(r.id, [...(emails.get(r.id) ?? []), r.address]);
    return emails;
  }

  /** Which of `addresses` (answered at a sink) are not `delivered` in Postgres, with their state (the first 10). */
  async unrecorded(addresses: string[]): Promise<string> {
    const { rows } = await this.db.query(
      `SELECT r.address, r.status, r.attempts FROM emails e JOIN email_recipients r ON r.email_id = e.id
        WHERE e.broadcast_id = $1 AND r.address = ANY($2::text[]) AND r.status <> 'delivered' LIMIT 10`,
      [this.broadcastId, addresses],
    );
    return JSON.stringify(rows);
  }

  /** Why its deferred recipients wait, most common first. */
  async deferrals(): Promise<string> {
    const { rows } = await this.db.query(
      `SELECT r.last_response, count(*)::int AS n FROM emails e JOIN email_recipients r ON r.email_id = e.id
        WHERE e.broadcast_id = $1 AND r.status = 'deferred' GROUP BY 1 ORDER BY 2 DESC LIMIT 5`,
      [this.broadcastId],
    );
    return JSON.stringify(rows);
  }
}
