import { Module } from '@nestjs/common';
import { ImagesRepository } from './images.repository';
import { ImagesService } from './images.service';

/** The broadcast editor's images. Relies on the app importing DatabaseModule. */
@Module({
  providers: [ImagesRepository, ImagesService],
  exports: [ImagesService],
})
export class ImagesModule {}
