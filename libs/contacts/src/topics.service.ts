import { Injectable } from '@nestjs/common';
import { HeraldError, newId } from '@herald/core';
import { ContactEvents } from './contact-events';
import { resourceId, validateListQuery } from './contact-input.validation';
import { presentTopic, wireList } from './contact.presenter';
import { validateCreateTopic, validateUpdateTopic } from './catalog-input.validation';
import { TopicsRepository } from './topics.repository';

const notFound = () => new HeraldError('not_found', 'Topic not found');

/** /topics: the subscription preferences a team offers its contacts. Emits topic.created/updated/deleted. */
@Injectable()
export class TopicsService {
  constructor(
    private readonly topics: TopicsRepository,
    private readonly events: ContactEvents,
  ) {}

  async create(teamId: string, body: unknown, homeRegion?: string) {
    const input = validateCreateTopic(body);
    const topic = await this.events.change(
      teamId,
      async (tx) => {
        const topic = await this.topics.insert(teamId, { id: newId(), ...input }, tx);
        return { result: topic, announce: [{ type: 'topic.created', topic }] };
      },
      homeRegion,
    );
    return { object: 'topic' as const, id: topic.id };
  }

  /** GET /topics: the SDK pages nothing, so without `limit` the whole list comes back (a team has a handful). */
  async list(teamId: string, query: unknown) {
    const page = validateListQuery({ limit: '100', ...(query as object) });
    return wireList(await this.topics.listPage(teamId, page), presentTopic);
  }

  async get(teamId: string, id: string) {
    const topic = await this.topics.get(teamId, resourceId(id, 'topic'));
    if (!topic) throw notFound();
    return presentTopic(topic);
  }

  async update(teamId: string, id: string, body: unknown, homeRegion?: string) {
    const topicId = resourceId(id, 'topic');
    const current = await this.topics.get(teamId, topicId);
    if (!current) throw notFound();
    const patch = validateUpdateTopic(body, current);
    const topic = await this.events.change(
      teamId,
      async (tx) => {
        const topic = await this.topics.update(teamId, topicId, patch, tx);
        if (!topic) throw notFound();
        return { result: topic, announce: [{ type: 'topic.updated', topic }] };
      },
      homeRegion,
    );
    return { object: 'topic' as const, id: topic.id };
  }

  /** Deletes the topic and every contact's choice about it. */
  async remove(teamId: string, id: string, homeRegion?: string) {
    const topicId = resourceId(id, 'topic');
    await this.events.change(
      teamId,
      async (tx) => {
        const topic = await this.topics.delete(teamId, topicId, tx);
        if (!topic) throw notFound();
        return { result: topic, announce: [{ type: 'topic.deleted', topic }] };
      },
      homeRegion,
    );
    return { object: 'topic' as const, id: topicId, deleted: true as const };
  }
}
