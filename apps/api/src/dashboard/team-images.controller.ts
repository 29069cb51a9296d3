import { Body, Controller, HttpCode, Param, Post, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ImagesService } from '@herald/images';
import { DashboardController } from './dashboard.guard';
import { imageUrl } from '../images/images.routes';

/** The broadcast editor's image upload: `{ content_type, content (base64), filename? }` → the public URL it is served at. */
@DashboardController()
@Controller('dashboard/api/teams/:teamId/images')
export class TeamImagesController {
  constructor(private readonly images: ImagesService) {}

  @Post()
  @HttpCode(201)
  async upload(@Param('teamId') teamId: string, @Body() body: unknown, @Req() request: FastifyRequest) {
    const image = await this.images.upload(teamId, body);
    return {
      object: 'image',
      id: image.id,
      url: imageUrl(request, image.id),
      content_type: image.contentType,
      size: image.byteSize,
      created_at: image.createdAt,
    };
  }
}
