import { Anchor, Button, Text } from '@mantine/core';
import { Link } from '@tanstack/react-router';
import { DataList } from '../components/data-list';
import { Pager, useKeysetPages } from '../components/pager';
import { EmptyState, ErrorAlert, PageHeader, StatusBadge } from '../components/ui';
import type { List } from '../lib/api';
import { formatDate, readableSubject } from '../lib/format';
import { useCanWrite, useTeamId, useTeamQuery } from '../lib/queries';
import type { Broadcast } from '../lib/types';

/** The counts a list row shows: who it went to, and how it went. */
export function broadcastCounts(broadcast: Broadcast): string {
  const counts = broadcast.counts ?? {};
  if (broadcast.status === 'draft' || broadcast.status === 'scheduled' || broadcast.status === 'cancelled') return '—';
  const parts = [`${counts.recipients ?? 0} recipients`];
  if (counts.delivered) parts.push(`${counts.delivered} delivered`);
  if (counts.opened) parts.push(`${counts.opened} opened`);
  if (counts.bounced) parts.push(`${counts.bounced} bounced`);
  return parts.join(' · ');
}

export function BroadcastsPage() {
  const teamId = useTeamId();
  const canWrite = useCanWrite();
  const pages = useKeysetPages();
  const broadcasts = useTeamQuery<List<Broadcast>>('/broadcasts', { limit: 20, after: pages.after });
  const rows = broadcasts.data?.data ?? [];
  const compose = canWrite && (
    <Button component={Link} to={`/t/${teamId}/broadcasts/new`}>
      New broadcast
    </Button>
  );
  return (
    <>
      <PageHeader title="Broadcasts" description="Marketing emails to a segment of your contacts, composed without writing HTML." actions={compose} />
      <ErrorAlert error={broadcasts.error} title="The broadcasts could not load" />
      {broadcasts.data && rows.length === 0 && pages.first && (
        <EmptyState title="No broadcasts yet" action={compose}>
          Write a newsletter or an announcement in the editor, preview it, send yourself a test, then send it to a segment now or at a set time.
        </EmptyState>
      )}
      {rows.length > 0 && (
        <DataList
          rows={rows}
          rowKey={(broadcast) => broadcast.id}
          columns={[
            {
              header: 'Broadcast',
              phone: 'title',
              maw: 340,
              cell: (broadcast) => (
                <Anchor component={Link} to={`/t/${teamId}/broadcasts/${broadcast.id}`} size="sm" style={{ overflowWrap: 'anywhere' }}>
                  {broadcast.name || (broadcast.subject && readableSubject(broadcast.subject)) || 'Untitled broadcast'}
                </Anchor>
              ),
            },
            { header: 'Status', phone: 'badge', cell: (broadcast) => <StatusBadge status={broadcast.status} /> },
            {
              header: 'Recipients',
              phone: 'line',
              cell: (broadcast) => (
                <Text size="sm" component="span">
                  {broadcastCounts(broadcast)}
                </Text>
              ),
            },
            {
              header: 'When',
              phone: 'line',
              nowrap: true,
              cell: (broadcast) =>
                broadcast.sent_at
                  ? `Sent ${formatDate(broadcast.sent_at)}`
                  : broadcast.scheduled_at
                    ? `For ${formatDate(broadcast.scheduled_at)}`
                    : `Created ${formatDate(broadcast.created_at)}`,
            },
          ]}
        />
      )}
      <Pager pages={pages} hasMore={broadcasts.data?.has_more} lastId={rows[rows.length - 1]?.id} />
    </>
  );
}
