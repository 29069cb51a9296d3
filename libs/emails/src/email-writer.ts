import { Injectable } from '@nestjs/common';
import { EmailStore, type EmailEventRecord } from '@herald/messages';
import type { AcceptedEmail } from './email.types';

/**
 * At most this many insert statements run at once. Under light load every request's emails go
 * at once, alone; when both slots are busy, the requests arriving meanwhile share the next
 * statement. Measured on 2 vCPU (test/bench/api-bench.ts): 1–2 in flight gave the most sends per
 * second and the least Postgres CPU per email; 8 gave 15% fewer sends at twice the Postgres CPU.
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
  private inFlight = 0;

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
    while (this.inFlight < MAX_STATEMENTS_IN_FLIGHT && this.queue.length) {
      const group = this.takeGroup();
      this.inFlight++;
      void this.write(group).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  /** The oldest pending requests of the oldest one's region that fit in one statement (always at least one). */
  private takeGroup(): Pending[] {
    const { region } = this.queue[0];
    const group: Pending[] = [];
    let emails = 0;
    let bytes = 0;
    for (let n = 0; n < this.queue.length;) {
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
