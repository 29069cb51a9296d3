import { HeraldError } from '@herald/core';
import { contactIdentifier, validateCreateContact, validateUpdateContact, validateUpdateContactTopics } from './contact-input.validation';
import { planColumns } from './contact-import.form';
import { readRow } from './contact-import-rows';
import { checkProperties } from './contacts.service';
import type { ContactProperty } from './contact.types';

const failure = (work: () => unknown): { code: string; message: string } => {
  try {
    work();
  } catch (error) {
    if (error instanceof HeraldError) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('no error');
};

const property = (key: string, type: 'string' | 'number', fallbackValue: string | number | null = null): ContactProperty => ({
  id: key,
  teamId: 't',
  key,
  type,
  fallbackValue,
  createdAt: new Date(),
});

describe('contact input', () => {
  it('lowercases the address, trims names and dedupes segments and topics (the last choice wins)', () => {
    const segment = '018f2b4e-0000-7000-8000-000000000001';
    const topic = '018f2b4e-0000-7000-8000-000000000002';
    expect(
      validateCreateContact({
        email: ' Ann.Lee@Example.COM ',
        first_name: '  Ann ',
        last_name: '',
        segments: [{ id: segment }, { id: segment.toUpperCase() }],
        topics: [
          { id: topic, subscription: 'opt_in' },
          { id: topic, subscription: 'opt_out' },
        ],
      }),
    ).toEqual({
      email: 'ann.lee@example.com',
      firstName: 'Ann',
      lastName: null,
      unsubscribed: false,
      properties: {},
      segmentIds: [segment],
      topics: [{ id: topic, subscription: 'opt_out' }],
    });
  });

  it('names the field of each problem', () => {
    expect(failure(() => validateCreateContact({}))).toEqual({ code: 'missing_required_field', message: 'The `email` field is required.' });
    expect(failure(() => validateCreateContact({ email: 'Ann <ann@example.com>' })).message).toContain('`email`');
    expect(failure(() => validateCreateContact({ email: 'a@b.co', properties: { n: {} } })).message).toContain('`properties.n`');
    expect(failure(() => validateCreateContact({ email: 'a@b.co', topics: [{ id: 'x', subscription: 'opt_in' }] })).message).toContain(
      '`topics[0].id`',
    );
    expect(failure(() => validateUpdateContact({ unsubscribed: 1 })).message).toContain('`unsubscribed`');
    expect(failure(() => validateUpdateContactTopics({ id: 'x' })).code).toBe('validation_error');
  });

  it('reads null as "clear" on update and leaves absent fields out', () => {
    expect(validateUpdateContact({ first_name: null, properties: { plan: null } })).toEqual({ firstName: null, properties: { plan: null } });
    expect(validateUpdateContact(undefined)).toEqual({});
  });

  it('takes a path identifier as a UUID or an address, raw or percent-encoded', () => {
    expect(contactIdentifier('018F2B4E-0000-7000-8000-000000000001')).toEqual({ id: '018f2b4e-0000-7000-8000-000000000001' });
    expect(contactIdentifier('Jane+news@Acme.com')).toEqual({ email: 'jane+news@acme.com' });
    expect(contactIdentifier('jane%2Bnews%40acme.com')).toEqual({ email: 'jane+news@acme.com' });
    expect(failure(() => contactIdentifier('nope')).code).toBe('invalid_parameter');
  });

  it('checks properties against their definitions: known keys, typed values, numeric strings for numbers', () => {
    const definitions = new Map([
      ['plan', property('plan', 'string')],
      ['seats', property('seats', 'number')],
    ]);
    expect(checkProperties({ plan: 3, seats: '12', gone: null } as never, new Map([...definitions, ['gone', property('gone', 'string')]]))).toEqual({
      plan: '3',
      seats: 12,
      gone: null,
    });
    expect(failure(() => checkProperties({ other: 'x' }, definitions)).message).toContain('`properties.other`');
    expect(failure(() => checkProperties({ seats: 'many' }, definitions)).message).toContain('`properties.seats`');
  });
});

describe('CSV rows', () => {
  const definitions = new Map([['seats', property('seats', 'number')]]);
  const plan = planColumns(['E-mail', 'First Name', 'Unsubscribed', 'seats'], {}, definitions);

  it('finds the columns by header, any case', () => {
    expect(plan).toEqual({
      email: 0,
      firstName: 1,
      lastName: null,
      unsubscribed: 2,
      properties: [{ key: 'seats', type: 'number', column: 3, header: 'seats' }],
    });
  });

  it('reads a row, empty cells absent', () => {
    expect(readRow(['Ann@Example.com', 'Ann', 'yes', '4'], plan)).toEqual({
      contact: { email: 'ann@example.com', firstName: 'Ann', lastName: null, unsubscribed: true, properties: { seats: 4 } },
    });
    expect(readRow(['bob@example.com', '', '', ''], plan)).toEqual({
      contact: { email: 'bob@example.com', firstName: null, lastName: null, unsubscribed: null, properties: {} },
    });
  });

  it('refuses a row with the reason, naming the cell', () => {
    expect(readRow(['', 'x'], plan)).toEqual({ reason: 'The `email` cell is empty.', email: null });
    expect(readRow(['ann@example.com', '', 'sometimes', ''], plan)).toMatchObject({ reason: expect.stringContaining('`unsubscribed`') });
    expect(readRow(['ann@example.com', '', '', 'four'], plan)).toMatchObject({
      reason: expect.stringContaining('`seats`'),
      email: 'ann@example.com',
    });
  });

  it('refuses a column_map naming a missing column or an unknown property', () => {
    expect(failure(() => planColumns(['email'], { first_name: 'given' }, definitions)).message).toContain('`column_map.first_name`');
    expect(failure(() => planColumns(['email'], { properties: { plan: { column: 'email' } } }, definitions)).message).toContain(
      '`column_map.properties.plan`',
    );
    expect(failure(() => planColumns(['name'], {}, definitions)).message).toContain('`email`');
  });
});
