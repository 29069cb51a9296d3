import type { INestApplicationContext } from '@nestjs/common';
import { ContactPropertiesService, ContactsService, SegmentsService, TopicsService } from '@herald/contacts';

/**
 * A team's contacts, segment and topic for a broadcast test, made through the contacts context's
 * services (the same calls its REST endpoints make).
 */
export class TestAudience {
  constructor(
    private readonly app: INestApplicationContext,
    readonly teamId: string,
  ) {}

  async segment(name = 'Newsletter'): Promise<string> {
    return ((await this.app.get(SegmentsService).create(this.teamId, { name })) as { id: string }).id;
  }

  async topic(name = 'Product news', default_subscription: 'opt_in' | 'opt_out' = 'opt_in', visibility = 'public'): Promise<string> {
    return ((await this.app.get(TopicsService).create(this.teamId, { name, default_subscription, visibility })) as { id: string }).id;
  }

  async property(key: string, fallback_value: string | number | null, type = 'string'): Promise<void> {
    await this.app.get(ContactPropertiesService).create(this.teamId, { key, type, fallback_value });
  }

  async contact(body: Record<string, unknown>): Promise<string> {
    return ((await this.app.get(ContactsService).create(this.teamId, body)) as { id: string }).id;
  }

  /** Many contacts, a few at a time. */
  async contacts(bodies: Record<string, unknown>[], concurrency = 8): Promise<string[]> {
    const ids: string[] = new Array(bodies.length);
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < bodies.length) {
          const i = next++;
          ids[i] = await this.contact(bodies[i]!);
        }
      }),
    );
    return ids;
  }
}
