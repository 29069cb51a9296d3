import { Injectable } from '@nestjs/common';
import { EmailStore, type EmailEventRecord } from '@herald/messages';
import type { AcceptedEmail } from './email.types';

/**
 * At most this many insert statements run at once in each region's database. Under light load
 * every request's emails go at once, alone; when both slots are busy, the requests arriving
 * meanwhile share the next statement. Measured on 2 vCPU (test/bench/api-bench.ts): 1–2 in flight
 * gave the most sends per second and the least Postgres CPU per email; 8 gave 15% fewer sends at
 * twice the Postgres CPU. Per region, so that another region's statements, a cross-region round
 * trip long each, never hold this region's requests (test/bench/regions-bench.ts, phase 6).
 */
const MAX_STATEMENTS_IN_FLIGHT = 2;
/** Caps on one shared statement: the emails in it, and their size (HTML, text, attachments). */
const MAX_GROUP_EMAILS = 500;
const MAX_GROUP_BYTES = 8 * 1024 * 1024;

interface Pending {
  emails: AcceptedEmail[];
  /** The region of the request's emails (one: SendService.route), whose database stores them. */
  region: string | undefined;
  bytes: number;
  resolve: (events: EmailEventRecord[]) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit for the send path. One INSERT per request costs Postgres a parse, a commit and a
 * WAL flush each, and the API a round trip each: at a few thousand sends a second that is most of
 * the machine. Requests that arrive while statements are running are written together, in one
 * statement (one transaction), and each request's promise settles when that statement commits,
 * so "answered with an id" still means "committed". A shared statement that fails is retried one
 * request at a time, so a request that Postgres refuses fails alone. A statement writes one
 * region's emails, into that region's database (EmailPlanes): requests of different regions are
 * never grouped, so a group's statement commits or fails whole.
 */
@Injectable()
export class EmailWriter {
  private readonly queue: Pending[] = [];
  /** Statements running, by region. */
  private readonly inFlight = new Map<string | undefined, number>();

  constructor(private readonly emails: EmailStore) {}

  /**
   * Resolves once the emails are committed (all of them, atomically), with the events recorded
   * with them (email.scheduled) to publish; rejects if they are not.
   */
  insert(emails: AcceptedEmail[]): Promise<EmailEventRecord[]> {
    return new Promise<EmailEventRecord[]>((resolve, reject) => {
      this.queue.push({ emails, region: emails[0]?.region, bytes: emails.reduce((sum, e) => sum + e.email.sizeBytes, 0), resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    for (;;) {
      const first = this.queue.findIndex((p) => (this.inFlight.get(p.region) ?? 0) < MAX_STATEMENTS_IN_FLIGHT);
      if (first < 0) return;
      const group = this.takeGroup(first);
      const { region } = group[0];
      this.inFlight.set(region, (this.inFlight.get(region) ?? 0) + 1);
      void this.write(group).finally(() => {
        this.inFlight.set(region, this.inFlight.get(region)! - 1);
        this.pump();
      });
    }
  }

  /** The oldest pending requests of the region of the one at `first` that fit in one statement (always at least that one). */
  private takeGroup(first: number): Pending[] {
    const { region } = this.queue[first];
    const group: Pending[] = [];
    let emails = 0;
    let bytes = 0;
    for (let n = first; n < this.queue.length;) {
      const next = this.queue[n];
      if (next.region !== region) {
        n++;
        continue;
      }
      if (group.length > 0 && (emails + next.emails.length > MAX_GROUP_EMAILS || bytes + next.bytes > MAX_GROUP_BYTES)) break;
      emails += next.emails.length;
      bytes += next.bytes;
      group.push(...this.queue.splice(n, 1));
    }
    return group;
  }

  private async write(group: Pending[]): Promise<void> {
    try {
      const events = await this.emails.insert(group.length === 1 ? group[0].emails : group.flatMap((p) => p.emails));
      for (const p of group) p.resolve(group.length === 1 ? events : eventsOf(p.emails, events));
    } catch (error) {
      if (group.length === 1) return group[0].reject(error);
      // Which request made the statement fail is unknown: give each its own statement.
      await Promise.all(group.map((p) => this.emails.insert(p.emails).then(p.resolve, p.reject)));
    }
  }
}

/** The events about these emails, among those of a shared statement. */
function eventsOf(emails: AcceptedEmail[], events: EmailEventRecord[]): EmailEventRecord[] {
  if (!events.length) return events;
  const ids = new Set(emails.map((e) => e.id));
  return events.filter((e) => ids.has(e.emailId));
}
