import { Injectable } from '@nestjs/common';
import { ContactsDirectory } from '@herald/contacts';
import { BroadcastLinks } from './broadcast-links';
import { BroadcastRecipientsRepository } from './broadcast-recipients.repository';
import { BroadcastsRepository, type UnsubscribeTarget as Target } from './broadcasts.repository';
import { donePage, preferencePage, type PreferenceTopic } from './preference-page';

/** What the done page says after an unsubscribe from a broadcast without a topic. */
const UNSUBSCRIBED_FROM_ALL = 'You will no longer get these emails.';

/** A page to answer with: 200, or 404 when the token names nothing (nothing changed). */
export type UnsubscribeAnswer = { status: 200; html: string } | { status: 404 };

/** What the preference form sends: `action=all`, or `action=save` with the checked topics. */
export type PreferenceForm = { action: 'all' } | { action: 'save'; topics: string[] };

/**
 * Unsubscribing from broadcast emails, with no sign-in: the token in the link (or the mailbox of
 * the mailto:) is the credential, and it names one email, hence one contact. The one-click POST
 * (RFC 8058) and the mailto: drop the broadcast's topic when it has one (the contact keeps the
 * team's other topics), or unsubscribe from everything when it has none; the preference page
 * drops or keeps each topic, or everything. Each change is the contacts context's, which emits
 * `contact.updated` in the same transaction.
 */
@Injectable()
export class UnsubscribeService {
  constructor(
    private readonly repository: BroadcastsRepository,
    private readonly contacts: ContactsDirectory,
    private readonly links: BroadcastLinks,
    private readonly recipients: BroadcastRecipientsRepository,
  ) {}

  /** One click from the mail client, or the link followed with POST. */
  async oneClick(token: string): Promise<UnsubscribeAnswer> {
    const target = await this.byToken(token);
    if (!target) return { status: 404 };
    const what = await this.unsubscribe(target);
    return what ? { status: 200, html: donePage(target.teamName, what) } : { status: 404 };
  }

  /** A message to the List-Unsubscribe mailbox: the same as one click; false when the address is not one of ours. */
  async byMailbox(address: string): Promise<boolean> {
    const emailId = this.links.keys.verifyMailbox(address);
    const target = emailId ? await this.targetOf(emailId) : null;
    if (!target) return false;
    return (await this.unsubscribe(target)) !== null;
  }

  /** The mailbox names one of Herald's unsubscribe addresses (checked at RCPT TO). */
  isMailbox(address: string): boolean {
    return this.links.keys.verifyMailbox(address) !== null;
  }

  async preferences(token: string, action: string, notice?: string): Promise<UnsubscribeAnswer> {
    const target = await this.byToken(token);
    if (!target) return { status: 404 };
    const [contact, topics] = await Promise.all([
      this.contacts.findById(target.teamId, target.contactId),
      this.contacts.topicsOf(target.teamId, target.contactId),
    ]);
    if (!contact) return { status: 404 };
    const shown: PreferenceTopic[] = topics
      .filter((t) => t.topic.visibility === 'public' || t.topic.id === target.topic?.id)
      .map((t) => ({ id: t.topic.id, name: t.topic.name, description: t.topic.description, subscribed: t.subscription === 'opt_in' }));
    return {
      status: 200,
      html: preferencePage({ teamName: target.teamName, email: contact.email, unsubscribed: contact.unsubscribed, topics: shown, action, notice }),
    };
  }

  /** Applies the preference form; answers the page as it now stands. */
  async savePreferences(token: string, form: PreferenceForm, action: string): Promise<UnsubscribeAnswer> {
    const target = await this.byToken(token);
    if (!target) return { status: 404 };
    if (form.action === 'all') {
      if (await this.contacts.setUnsubscribed(target.teamId, target.contactId, true)) await this.recordUnsubscribe(target);
      return this.preferences(token, action, 'You are unsubscribed from everything.');
    }
    const topics = await this.contacts.topicsOf(target.teamId, target.contactId);
    const wanted = new Set(form.topics);
    const shown = topics.filter((t) => t.topic.visibility === 'public' || t.topic.id === target.topic?.id);
    for (const t of shown) {
      const subscription = wanted.has(t.topic.id) ? 'opt_in' : 'opt_out';
      if (subscription !== t.subscription) await this.contacts.setTopicSubscription(target.teamId, target.contactId, t.topic.id, subscription);
    }
    // Dropping the broadcast's own topic is unsubscribing from it.
    if (target.topic && shown.some((t) => t.topic.id === target.topic!.id) && !wanted.has(target.topic.id)) await this.recordUnsubscribe(target);
    // Saving with topics checked is asking for email again.
    const contact = await this.contacts.findById(target.teamId, target.contactId);
    if (contact?.unsubscribed && wanted.size > 0) await this.contacts.setUnsubscribed(target.teamId, target.contactId, false);
    return this.preferences(token, action, 'Your preferences are saved.');
  }

  private async byToken(token: string): Promise<Target | null> {
    const emailId = this.links.keys.verifyToken(token);
    return emailId ? this.targetOf(emailId) : null;
  }

  /**
   * The contact and broadcast an email was sent to, from its ledger row, then the team and the
   * broadcast's topic: two reads, the ledger being the email plane's and the rest the control
   * plane's (issue 15).
   */
  private async targetOf(emailId: string): Promise<Target | null> {
    const entry = await this.recipients.ofEmail(emailId);
    const context = entry ? await this.repository.unsubscribeContext(entry.teamId, entry.broadcastId) : null;
    return entry && context ? { ...entry, ...context } : null;
  }

  /**
   * What one click does; null when the contact is gone. Answered once the change is committed
   * (with its contact.updated in the outbox, and the broadcast's record of it: one commit): the
   * event's publish goes on after the answer, and the outbox's relay publishes it if that fails.
   */
  private async unsubscribe(target: Target): Promise<string | null> {
    const { teamId, contactId, topic, homeRegion } = target;
    // The usual case, a subscribed contact and a broadcast without a topic: the contact and its
    // event in one statement, then the broadcast's record in its own (the email plane's table,
    // which issue 15 moves to another database). A crash between the two leaves the contact
    // unsubscribed and announced and the broadcast's list without it; a retry of the click
    // (the general path below) writes it.
    if (!topic) {
      const changed = await this.contacts.unsubscribeAtOnce(teamId, contactId, homeRegion);
      if (changed) {
        await this.recipients.markUnsubscribed(target);
        return UNSUBSCRIBED_FROM_ALL;
      }
    }
    // The contact's change and its event commit first (the control plane), then the broadcast's
    // record (the email plane), as above: a retried click finds the contact and writes the record.
    const { result, publish } = await this.contacts.transaction((tx) =>
      topic
        ? this.contacts.setTopicSubscriptionWithin(tx, teamId, contactId, topic.id, 'opt_out', homeRegion)
        : this.contacts.setUnsubscribedWithin(tx, teamId, contactId, true, homeRegion),
    );
    void publish();
    if (!result) return null;
    await this.recipients.markUnsubscribed(target);
    return topic ? `You will no longer get “${topic.name}” emails.` : UNSUBSCRIBED_FROM_ALL;
  }

  /** The broadcast's record of it (GET /broadcasts/:id/recipients?type=unsubscribed). */
  private recordUnsubscribe(target: Target): Promise<void> {
    return this.recipients.markUnsubscribed(target);
  }
}
