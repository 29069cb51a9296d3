import { Badge, Button, Group, Modal, NativeSelect, Stack, Text, TextInput, Title } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { keepPreviousData } from '@tanstack/react-query';
import { useState } from 'react';
import { ImportContacts } from '../components/contact-import';
import { RecentImports } from '../components/recent-imports';
import { DataList } from '../components/data-list';
import { Pager, useKeysetPages } from '../components/pager';
import { EmptyState, ErrorAlert, PageHeader, StatusBadge } from '../components/ui';
import type { List } from '../lib/api';
import { formatDate } from '../lib/format';
import { useCanWrite, useTeamQuery } from '../lib/queries';
import type { Contact, ContactDetail, ContactImportReport, Segment } from '../lib/types';

const fullName = (c: Contact) => [c.first_name, c.last_name].filter(Boolean).join(' ');
const subscription = (c: Contact) => (c.unsubscribed ? 'unsubscribed' : 'subscribed');

export function ContactsPage() {
  const canWrite = useCanWrite();
  const [search, setSearch] = useState('');
  const [segmentId, setSegmentId] = useState('');
  const [q] = useDebouncedValue(search.trim(), 300);
  const pages = useKeysetPages();
  const list = useTeamQuery<List<Contact>>(
    '/contacts',
    { q, segment_id: segmentId, limit: 50, after: pages.after },
    { placeholderData: keepPreviousData },
  );
  const segments = useTeamQuery<List<Segment>>('/segments', { limit: 100 });
  const [viewing, setViewing] = useState<Contact | null>(null);
  const [importing, setImporting] = useState(false);
  const [following, setFollowing] = useState<ContactImportReport | null>(null);
  const rows = list.data?.data ?? [];
  const filtered = Boolean(q || segmentId);
  return (
    <>
      <PageHeader
        title="Contacts"
        description="The people your broadcasts go to: one contact per address, grouped in segments, with their topic preferences."
        actions={canWrite && <Button onClick={() => setImporting(true)}>Import CSV</Button>}
      />
      <RecentImports
        onOpen={(report) => {
          setFollowing(report);
          setImporting(true);
        }}
      />
      <Group align="flex-end" gap="sm" mb="sm" wrap="wrap">
        <TextInput
          label="Search"
          description="The start of an address, or any part of it from 3 characters"
          placeholder="Email address"
          value={search}
          onChange={(e) => {
            setSearch(e.currentTarget.value);
            pages.reset();
          }}
          w={{ base: '100%', sm: 360 }}
        />
        <NativeSelect
          label="Segment"
          value={segmentId}
          onChange={(e) => {
            setSegmentId(e.currentTarget.value);
            pages.reset();
          }}
          data={[{ value: '', label: 'All contacts' }, ...(segments.data?.data ?? []).map((s) => ({ value: s.id, label: s.name }))]}
          w={{ base: '100%', sm: 240 }}
        />
      </Group>
      <ErrorAlert error={list.error} title="The contacts could not load" />
      {list.data && rows.length === 0 && (
        <EmptyState
          title={filtered ? 'No contact matches' : 'No contacts yet'}
          action={!filtered && canWrite ? <Button onClick={() => setImporting(true)}>Import a CSV</Button> : undefined}
        >
          {filtered
            ? 'No contact in this view has these characters in its address. Try fewer, the domain alone, or all contacts.'
            : 'Import a CSV file with an email column (names, an unsubscribed column and your custom properties are read too), or add contacts through the API with POST /contacts.'}
        </EmptyState>
      )}
      {rows.length > 0 && (
        <DataList
          rows={rows}
          rowKey={(c) => c.id}
          minWidth={600}
          columns={[
            {
              header: 'Address',
              phone: 'title',
              cell: (c) => (
                <Text component="span" ff="monospace" size="xs">
                  {c.email}
                </Text>
              ),
            },
            { header: 'Name', phone: 'line', cell: (c) => fullName(c) || '—' },
            { header: 'Status', phone: 'badge', cell: (c) => <StatusBadge status={subscription(c)} /> },
            { header: 'Added', phone: 'line', nowrap: true, cell: (c) => formatDate(c.created_at) },
            {
              header: '',
              phone: 'action',
              cell: (c) => (
                <Button size="xs" variant="subtle" onClick={() => setViewing(c)} aria-label={`Details of ${c.email}`}>
                  Details
                </Button>
              ),
            },
          ]}
        />
      )}
      <Pager pages={pages} hasMore={list.data?.has_more} lastId={rows[rows.length - 1]?.id} />
      <Modal
        opened={viewing !== null}
        onClose={() => setViewing(null)}
        title={viewing?.email ?? 'Contact'}
        centered
        size="lg"
        closeButtonProps={{ 'aria-label': 'Close' }}
      >
        {viewing && <ContactDetails id={viewing.id} />}
      </Modal>
      <ImportContacts opened={importing} following={following} onClose={() => setImporting(false)} onClosed={() => setFollowing(null)} />
    </>
  );
}

function ContactDetails({ id }: { id: string }) {
  const detail = useTeamQuery<ContactDetail>(`/contacts/${id}`);
  if (detail.error) return <ErrorAlert error={detail.error} title="The contact could not load" />;
  if (!detail.data) return <Text size="sm">Loading…</Text>;
  const { contact, segments, topics } = detail.data;
  const properties = Object.entries(contact.properties);
  return (
    <Stack gap="md">
      <Group gap="xs">
        <StatusBadge status={subscription(contact)} />
        <Text size="sm">{fullName(contact) || 'No name'}</Text>
      </Group>
      <section aria-labelledby="contact-segments">
        <Title order={2} size="h5" id="contact-segments" mb={4}>
          Segments
        </Title>
        {segments.length ? (
          <Group gap={6}>
            {segments.map((s) => (
              <Badge key={s.id} variant="outline" color="gray" tt="none">
                {s.name}
              </Badge>
            ))}
          </Group>
        ) : (
          <Text size="sm" c="dimmed">
            In no segment. Add it to one with POST /contacts/{'{id}'}/segments/{'{segmentId}'}, or import it with a segment.
          </Text>
        )}
      </section>
      <section aria-labelledby="contact-topics">
        <Title order={2} size="h5" id="contact-topics" mb={4}>
          Topics
        </Title>
        {topics.length ? (
          <Stack gap={4}>
            {topics.map((t) => (
              <Group key={t.id} justify="space-between" wrap="nowrap" gap="xs">
                <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
                  {t.name}
                </Text>
                <StatusBadge status={t.subscription === 'opt_in' ? 'subscribed' : 'opted_out'} />
              </Group>
            ))}
          </Stack>
        ) : (
          <Text size="sm" c="dimmed">
            The team has no topics yet (POST /topics).
          </Text>
        )}
        {contact.unsubscribed && (
          <Text size="xs" c="dimmed" mt={4}>
            Unsubscribed from everything: no broadcast reaches this contact, whatever its topics say.
          </Text>
        )}
      </section>
      {properties.length > 0 && (
        <section aria-labelledby="contact-properties">
          <Title order={2} size="h5" id="contact-properties" mb={4}>
            Properties
          </Title>
          <Stack gap={4}>
            {properties.map(([key, p]) => (
              <Group key={key} gap="xs" wrap="nowrap" align="baseline">
                <Text size="sm" c="dimmed" ff="monospace" style={{ flexShrink: 0 }}>
                  {key}
                </Text>
                <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
                  {String(p.value)}
                </Text>
              </Group>
            ))}
          </Stack>
        </section>
      )}
    </Stack>
  );
}
