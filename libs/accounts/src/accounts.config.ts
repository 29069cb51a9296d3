import { configSlice, SliceOf } from '@herald/config';

/** What @herald/accounts reads of the configuration. */
export const ACCOUNTS_CONFIG = configSlice('accounts', ['HERALD_REGIONS', 'API_KEY_CACHE_SECONDS']);
export type AccountsConfig = SliceOf<typeof ACCOUNTS_CONFIG>;
