import { Foundation1764100000000 } from './1764100000000-foundation';

/** Every migration, in order. A new migration is a new file listed here. */
export const migrations = [Foundation1764100000000];
