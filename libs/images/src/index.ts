export * from './image.types';
export * from './image-input.validation';
export * from './images.module';
export * from './images.service';
