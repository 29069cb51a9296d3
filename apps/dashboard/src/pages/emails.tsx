import { Alert, Anchor, Button, Group, Select, Stack, Table, Text, TextInput, UnstyledButton } from '@mantine/core';
import { useDebouncedValue, useDisclosure } from '@mantine/hooks';
import { keepPreviousData } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { Pager, useKeysetPages } from '../components/pager';
import { EmptyState, ErrorAlert, Mono, PageHeader, StatusBadge } from '../components/ui';
import type { List } from '../lib/api';
import { dayBound, formatDate } from '../lib/format';
import { useTeamId, useTeamQuery } from '../lib/queries';
import type { ApiKey, Domain, EmailSummary } from '../lib/types';

export const EVENTS = [
  'queued',
  'scheduled',
  'sent',
  'delivered',
  'delivery_delayed',
  'bounced',
  'complained',
  'failed',
  'suppressed',
  'canceled',
  'opened',
  'clicked',
];
const PAGE = 50;

export function EmailsPage() {
  const teamId = useTeamId();
  const [search, setSearch] = useState('');
  const [q] = useDebouncedValue(search.trim(), 300);
  const [filters, setFilters] = useState({ last_event: '', domain_id: '', api_key_id: '', from: '', to: '' });
  const pages = useKeysetPages();
  const after = pages.after;
  const query = {
    limit: PAGE,
    q,
    last_event: filters.last_event,
    domain_id: filters.domain_id,
    api_key_id: filters.api_key_id,
    from: dayBound(filters.from),
    to: dayBound(filters.to, true),
    after,
  };
  // The first page is polled every second, so a new email appears within 2 s without a reload.
  const emails = useTeamQuery<List<EmailSummary> & { unavailable_regions?: string[] }>('/emails', query, {
    refetchInterval: after ? false : 1000,
    placeholderData: keepPreviousData,
  });
  const domains = useTeamQuery<List<Domain>>('/domains');
  const keys = useTeamQuery<List<ApiKey>>('/api-keys');
  const set = (field: keyof typeof filters) => (value: string | null) => {
    setFilters((current) => ({ ...current, [field]: value ?? '' }));
    pages.reset();
  };
  const activeFilters = Object.values(filters).filter(Boolean).length;
  const filtered = Boolean(q || activeFilters);
  const [showFilters, { toggle: toggleFilters }] = useDisclosure(false);
  const rows = emails.data?.data ?? [];

  return (
    <>
      <PageHeader title="Emails" description="Every email your team sent, newest first. New emails appear here as they are accepted." />
      <Group gap="xs" mb="sm" align="flex-end" wrap="wrap">
        <TextInput
          label="Search"
          placeholder="Recipient or subject"
          value={search}
          onChange={(e) => {
            setSearch(e.currentTarget.value);
            pages.reset();
          }}
          w={{ base: '100%', sm: 240 }}
        />
        {/* At phone width the filters fold away behind this button, so the emails start on the first screen. */}
        <Button hiddenFrom="sm" variant="default" size="xs" aria-expanded={showFilters} aria-controls="email-filters" onClick={toggleFilters}>
          {showFilters ? 'Hide filters' : activeFilters ? `Filters (${activeFilters} on)` : 'Filters'}
        </Button>
        <Group
          id="email-filters"
          gap="xs"
          align="flex-end"
          wrap="wrap"
          w={{ base: '100%', sm: 'auto' }}
          display={{ base: showFilters ? 'flex' : 'none', sm: 'flex' }}
        >
          <Select
            label="Status"
            placeholder="Any"
            clearable
            data={EVENTS}
            value={filters.last_event || null}
            onChange={set('last_event')}
            w={{ base: '48%', sm: 150 }}
          />
          <Select
            label="Domain"
            placeholder="Any"
            clearable
            data={(domains.data?.data ?? []).map((d) => ({ value: d.id, label: d.name }))}
            value={filters.domain_id || null}
            onChange={set('domain_id')}
            w={{ base: '48%', sm: 180 }}
          />
          <Select
            label="API key"
            placeholder="Any"
            clearable
            data={(keys.data?.data ?? []).map((k) => ({ value: k.id, label: k.name }))}
            value={filters.api_key_id || null}
            onChange={set('api_key_id')}
            w={{ base: '100%', sm: 180 }}
          />
          <TextInput
            label="From"
            type="date"
            value={filters.from}
            onChange={(e) => set('from')(e.currentTarget.value)}
            w={{ base: '48%', sm: 150 }}
          />
          <TextInput label="To" type="date" value={filters.to} onChange={(e) => set('to')(e.currentTarget.value)} w={{ base: '48%', sm: 150 }} />
        </Group>
      </Group>
      <ErrorAlert error={emails.error} title="The emails could not load" />
      {!!emails.data?.unavailable_regions?.length && (
        <Alert
          color="yellow"
          variant="light"
          role="status"
          title={`Emails from your ${emails.data.unavailable_regions.join(', ')} domains are not shown`}
        >
          The database of {emails.data.unavailable_regions.join(', ')} is not answering right now. Those emails are safe and appear here again as soon
          as it answers; the rest of the list is complete.
        </Alert>
      )}
      {emails.data && rows.length === 0 && (
        <EmptyState title={filtered ? 'No emails match' : 'No emails yet'}>
          {filtered
            ? 'Clear a filter or change the search to see more.'
            : 'Send your first email with an API key (API keys page) from a verified domain; it appears here within seconds.'}
        </EmptyState>
      )}
      {rows.length > 0 && (
        <Stack hiddenFrom="sm" gap={0}>
          {rows.map((email) => (
            <UnstyledButton
              key={email.id}
              component={Link}
              to={`/t/${teamId}/emails/${email.id}`}
              py="xs"
              style={{ borderBottom: '1px solid var(--mantine-color-gray-3)' }}
            >
              <Group justify="space-between" wrap="nowrap" gap="xs">
                <Text size="sm" fw={600} truncate>
                  {email.subject || '(no subject)'}
                </Text>
                <StatusBadge status={email.last_event} />
              </Group>
              <Group justify="space-between" wrap="nowrap" gap="xs">
                <Text size="xs" c="dimmed" truncate>
                  {email.to.join(', ')}
                </Text>
                <Text size="xs" c="dimmed" style={{ whiteSpace: 'nowrap' }}>
                  {formatDate(email.created_at)}
                </Text>
              </Group>
            </UnstyledButton>
          ))}
        </Stack>
      )}
      {rows.length > 0 && (
        <Table.ScrollContainer minWidth={720} visibleFrom="sm">
          <Table highlightOnHover verticalSpacing="xs">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>To</Table.Th>
                <Table.Th>Subject</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th>From</Table.Th>
                <Table.Th>Sent</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((email) => (
                <Table.Tr key={email.id}>
                  <Table.Td maw={220}>
                    <Anchor component={Link} to={`/t/${teamId}/emails/${email.id}`} size="sm" lineClamp={2}>
                      {email.to.join(', ') || '—'}
                    </Anchor>
                  </Table.Td>
                  <Table.Td maw={320}>
                    <Text size="sm" truncate>
                      {email.subject || '(no subject)'}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <StatusBadge status={email.last_event} />
                  </Table.Td>
                  <Table.Td maw={200}>
                    <Mono size="xs">{email.from}</Mono>
                  </Table.Td>
                  <Table.Td style={{ whiteSpace: 'nowrap' }}>{formatDate(email.created_at)}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
      <Pager pages={pages} hasMore={emails.data?.has_more} lastId={rows[rows.length - 1]?.id} />
    </>
  );
}
