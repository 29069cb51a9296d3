import { Button, Group, Stack, Text } from '@mantine/core';
import { useState } from 'react';
import { DataList } from '../components/data-list';
import { EmptyState, ErrorAlert, Mono, StatusBadge } from '../components/ui';
import type { List } from '../lib/api';
import { formatDate } from '../lib/format';
import { useCanWrite, useTeamMutation, useTeamQuery } from '../lib/queries';
import type { WebhookAttempt, WebhookMessage } from '../lib/types';

/** Each HTTP attempt of one delivery: when, the status the endpoint answered, and the start of its response. */
function Attempts({ path }: { path: string }) {
  const attempts = useTeamQuery<List<WebhookAttempt>>(`${path}/attempts`, undefined, { refetchInterval: 5000 });
  if (attempts.error) return <ErrorAlert error={attempts.error} title="The attempts could not load" />;
  if (!attempts.data) return <Text size="xs">Loading the attempts…</Text>;
  if (attempts.data.data.length === 0) return <Text size="xs">Not attempted yet.</Text>;
  return (
    <Stack gap={6}>
      {attempts.data.data.map((attempt) => (
        <div key={attempt.id}>
          <Text size="xs">
            {formatDate(attempt.sent_at)} ·{' '}
            {attempt.http_status_code === null ? 'no response' : <Mono size="xs">HTTP {attempt.http_status_code}</Mono>}
          </Text>
          {attempt.response && (
            <Text size="xs" ff="monospace" lineClamp={3} style={{ wordBreak: 'break-all' }}>
              {attempt.response}
            </Text>
          )}
        </div>
      ))}
    </Stack>
  );
}

/** The delivery log of a webhook: each event sent, its status, its attempts on demand, and replay. */
export function WebhookDeliveries({ path }: { path: string }) {
  const canWrite = useCanWrite();
  const [open, setOpen] = useState<string | null>(null);
  const messages = useTeamQuery<List<WebhookMessage>>(`${path}/messages`, undefined, { refetchInterval: 5000 });
  const replay = useTeamMutation((id: string) => ({ method: 'POST', path: `${path}/messages/${id}/replay` }), [`${path}/messages`]);
  const rows = messages.data?.data ?? [];
  return (
    <>
      <Text fw={600} mb="xs">
        Deliveries
      </Text>
      <ErrorAlert error={messages.error ?? replay.error} title="The delivery log could not load" />
      {messages.data && rows.length === 0 && (
        <EmptyState title="No deliveries yet">
          Each event this endpoint subscribes to is sent here as it happens; send an email and its events appear within seconds.
        </EmptyState>
      )}
      {rows.length > 0 && (
        <DataList
          rows={rows}
          rowKey={(m) => m.id}
          expanded={(m) => (open === m.id ? <Attempts path={`${path}/messages/${m.id}`} /> : null)}
          columns={[
            {
              header: 'Event',
              phone: 'title',
              cell: (m) => (
                <Stack gap={0}>
                  <Mono size="xs">{m.type}</Mono>
                  <Text size="xs" ff="monospace" style={{ wordBreak: 'break-all' }}>
                    {m.id}
                  </Text>
                </Stack>
              ),
            },
            { header: 'Status', phone: 'badge', cell: (m) => <StatusBadge status={m.status} /> },
            { header: 'Created', phone: 'line', nowrap: true, cell: (m) => formatDate(m.created_at) },
            {
              header: '',
              phone: 'action',
              cell: (m) => (
                <Group gap={4} wrap="nowrap" justify="flex-end">
                  <Button size="xs" variant="subtle" aria-expanded={open === m.id} onClick={() => setOpen(open === m.id ? null : m.id)}>
                    {open === m.id ? 'Hide attempts' : 'Attempts'}
                  </Button>
                  {canWrite && (
                    <Button size="xs" variant="subtle" loading={replay.isPending && replay.variables === m.id} onClick={() => replay.mutate(m.id)}>
                      Replay
                    </Button>
                  )}
                </Group>
              ),
            },
          ]}
        />
      )}
    </>
  );
}
