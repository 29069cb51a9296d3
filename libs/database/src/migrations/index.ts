import { Foundation1764100000000 } from './1764100000000-foundation';
import { Domains1764200000000 } from './1764200000000-domains';

/** Every migration, in order. A new migration is a new file listed here. */
export const migrations = [Foundation1764100000000, Domains1764200000000];
