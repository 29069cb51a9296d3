import { Injectable } from '@nestjs/common';
import { HeraldError, newId } from '@herald/core';
import { resourceId, validateListQuery } from './contact-input.validation';
import { presentSegment, presentSegmentListItem, wireList } from './contact.presenter';
import { validateSegmentName } from './catalog-input.validation';
import { SegmentsRepository } from './segments.repository';

const notFound = () => new HeraldError('not_found', 'Segment not found');

/** /segments, and the legacy /audiences paths (the same objects). */
@Injectable()
export class SegmentsService {
  constructor(private readonly segments: SegmentsRepository) {}

  async create(teamId: string, body: unknown) {
    const segment = await this.segments.insert(teamId, newId(), validateSegmentName(body));
    return { object: 'segment' as const, id: segment.id, name: segment.name };
  }

  async list(teamId: string, query: unknown) {
    return wireList(await this.segments.listPage(teamId, validateListQuery(query)), presentSegmentListItem);
  }

  async get(teamId: string, id: string) {
    const segment = await this.segments.get(teamId, resourceId(id, 'segment'));
    if (!segment) throw notFound();
    return presentSegment(segment);
  }

  async rename(teamId: string, id: string, body: unknown) {
    const segmentId = resourceId(id, 'segment');
    const segment = await this.segments.rename(teamId, segmentId, validateSegmentName(body));
    if (!segment) throw notFound();
    return { object: 'segment' as const, id: segment.id };
  }

  /** Deletes the segment and its memberships (the contacts stay). */
  async remove(teamId: string, id: string) {
    const segmentId = resourceId(id, 'segment');
    if (!(await this.segments.delete(teamId, segmentId))) throw notFound();
    return { object: 'segment' as const, id: segmentId, deleted: true as const };
  }

  /** The segment id of a path, checked to be the team's (for the legacy /audiences/:id/contacts paths). */
  async existing(teamId: string, id: string): Promise<string> {
    const segmentId = resourceId(id, 'segment');
    if (!(await this.segments.get(teamId, segmentId))) throw notFound();
    return segmentId;
  }
}
