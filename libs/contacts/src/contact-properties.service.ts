import { Injectable } from '@nestjs/common';
import { HeraldError, newId } from '@herald/core';
import { resourceId, validateListQuery } from './contact-input.validation';
import { presentContactProperty, wireList } from './contact.presenter';
import { validateCreateProperty, validateUpdateProperty } from './catalog-input.validation';
import { ContactPropertiesRepository } from './contact-properties.repository';
import { ContactsRepository } from './contacts.repository';

const notFound = () => new HeraldError('not_found', 'Contact property not found');

/** /contact-properties: the team's typed custom fields of contacts, with their fallbacks. */
@Injectable()
export class ContactPropertiesService {
  constructor(
    private readonly properties: ContactPropertiesRepository,
    private readonly contacts: ContactsRepository,
  ) {}

  async create(teamId: string, body: unknown) {
    const input = validateCreateProperty(body);
    const property = await this.properties.insert(teamId, newId(), input.key, input.type, input.fallback);
    if (!property) throw new HeraldError('validation_error', `The \`key\` field names a property that exists already (${input.key}).`);
    return { object: 'contact_property' as const, id: property.id };
  }

  async list(teamId: string, query: unknown) {
    return wireList(await this.properties.listPage(teamId, validateListQuery(query)), presentContactProperty);
  }

  async get(teamId: string, id: string) {
    const property = await this.properties.get(teamId, resourceId(id, 'contact property'));
    if (!property) throw notFound();
    return presentContactProperty(property);
  }

  async update(teamId: string, id: string, body: unknown) {
    const propertyId = resourceId(id, 'contact property');
    const current = await this.properties.get(teamId, propertyId);
    if (!current) throw notFound();
    const fallback = validateUpdateProperty(body, current);
    if (fallback !== undefined && !(await this.properties.setFallback(teamId, propertyId, fallback))) throw notFound();
    return { object: 'contact_property' as const, id: propertyId };
  }

  /** Deletes the definition and every contact's value of it. */
  async remove(teamId: string, id: string) {
    const propertyId = resourceId(id, 'contact property');
    await this.properties.transaction(async (tx) => {
      const property = await this.properties.delete(teamId, propertyId, tx);
      if (!property) throw notFound();
      await this.contacts.dropProperty(teamId, property.key, tx);
    });
    return { object: 'contact_property' as const, id: propertyId, deleted: true as const };
  }
}
