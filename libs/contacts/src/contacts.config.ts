import { configSlice, SliceOf } from '@herald/config';

/** What @herald/contacts reads: the pace of CSV imports. */
export const CONTACTS_CONFIG = configSlice('contacts', ['CONTACT_IMPORT_CHUNK_ROWS', 'CONTACT_IMPORT_LEASE_SECONDS']);
export type ContactsConfig = SliceOf<typeof CONTACTS_CONFIG>;
