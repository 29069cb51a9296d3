import { Anchor, Button, Code, Group, Paper, Stack, Table, Text } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { Link, useNavigate, useParams } from '@tanstack/react-router';
import { useState } from 'react';
import { Confirm, Copy, EmptyState, ErrorAlert, Mono, PageHeader, StatusBadge } from '../components/ui';
import { api, type List } from '../lib/api';
import { formatDate } from '../lib/format';
import { useCanWrite, useTeamId, useTeamMutation, useTeamQuery } from '../lib/queries';
import type { Webhook, WebhookMessage } from '../lib/types';
import { WebhookForm } from './webhooks';

function Secret({ path }: { path: string }) {
  const teamId = useTeamId();
  const [secret, setSecret] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const canWrite = useCanWrite();
  const rotate = useTeamMutation<{ secret?: string }>(() => ({ method: 'POST', path: `${path}/secret/rotate` }));
  const reveal = async () => {
    setError(null);
    try {
      setSecret((await api<{ secret: string }>(`/teams/${teamId}${path}/secret`)).secret);
    } catch (failure) {
      setError(failure);
    }
  };
  return (
    <Paper withBorder p="md" mb="md">
      <Text fw={600} mb={4}>
        Signing secret
      </Text>
      <Text size="sm" c="dimmed" mb="xs">
        Verify each request's signature with this secret (Standard Webhooks).
      </Text>
      <ErrorAlert error={error ?? rotate.error} title="The secret could not be read" />
      <Group gap="xs">
        {secret ? (
          <>
            <Mono>{secret}</Mono>
            <Copy value={secret} label="the signing secret" />
            <Button size="xs" variant="subtle" onClick={() => setSecret(null)}>
              Hide
            </Button>
          </>
        ) : (
          <Button size="xs" variant="default" onClick={() => void reveal()}>
            Reveal secret
          </Button>
        )}
        {canWrite && (
          <Button size="xs" variant="default" loading={rotate.isPending} onClick={() => rotate.mutate(undefined, { onSuccess: () => void reveal() })}>
            Rotate secret
          </Button>
        )}
      </Group>
    </Paper>
  );
}

export function WebhookDetailPage() {
  const teamId = useTeamId();
  const navigate = useNavigate();
  const canWrite = useCanWrite();
  const { webhookId } = useParams({ strict: false }) as { webhookId: string };
  const path = `/webhooks/${webhookId}`;
  const webhook = useTeamQuery<Webhook>(path);
  const messages = useTeamQuery<List<WebhookMessage>>(`${path}/messages`, undefined, { refetchInterval: 5000 });
  const replay = useTeamMutation((id: string) => ({ method: 'POST', path: `${path}/messages/${id}/replay` }), [`${path}/messages`]);
  const remove = useTeamMutation((_: void) => ({ method: 'DELETE', path }), ['/webhooks']);
  const [editing, edit] = useDisclosure(false);
  const [deleting, del] = useDisclosure(false);
  if (webhook.error) return <ErrorAlert error={webhook.error} title="The webhook could not load" />;
  if (!webhook.data) return null;
  const rows = messages.data?.data ?? [];
  return (
    <>
      <Anchor component={Link} to={`/t/${teamId}/webhooks`} size="sm">
        ← Webhooks
      </Anchor>
      <PageHeader
        title="Webhook endpoint"
        description={<Mono>{webhook.data.endpoint}</Mono>}
        actions={
          canWrite && (
            <>
              <Button variant="default" onClick={edit.open}>
                Edit
              </Button>
              <Button variant="light" color="red" onClick={del.open}>
                Delete
              </Button>
            </>
          )
        }
      />
      <Text size="sm" mb="md">
        Events:{' '}
        {webhook.data.events.map((event) => (
          <Code key={event} mr={4}>
            {event}
          </Code>
        ))}
      </Text>
      <Secret path={path} />
      <Text fw={600} mb="xs">
        Deliveries
      </Text>
      <ErrorAlert error={messages.error ?? replay.error} title="The delivery log could not load" />
      {messages.data && rows.length === 0 && (
        <EmptyState title="No deliveries yet">Events appear here as soon as Herald sends one to this endpoint.</EmptyState>
      )}
      {rows.length > 0 && (
        <Table.ScrollContainer minWidth={720}>
          <Table verticalSpacing="xs">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Event</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th>Response</Table.Th>
                <Table.Th>Attempts</Table.Th>
                <Table.Th>Created</Table.Th>
                {canWrite && <Table.Th aria-label="Actions" />}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((m) => (
                <Table.Tr key={m.id}>
                  <Table.Td>
                    <Stack gap={0}>
                      <Mono size="xs">{m.event_type}</Mono>
                      <Text size="xs" c="dimmed" ff="monospace">
                        {m.event_id}
                      </Text>
                    </Stack>
                  </Table.Td>
                  <Table.Td>
                    <StatusBadge status={m.status} />
                    {m.next_attempt_at && <Text size="xs">next try {formatDate(m.next_attempt_at)}</Text>}
                  </Table.Td>
                  <Table.Td maw={260}>
                    <Mono size="xs">{m.response_status ?? '—'}</Mono>
                    {m.response_excerpt && (
                      <Text size="xs" c="dimmed" lineClamp={2} ff="monospace">
                        {m.response_excerpt}
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td>{m.attempts}</Table.Td>
                  <Table.Td style={{ whiteSpace: 'nowrap' }}>{formatDate(m.created_at)}</Table.Td>
                  {canWrite && (
                    <Table.Td>
                      <Button size="xs" variant="subtle" loading={replay.isPending && replay.variables === m.id} onClick={() => replay.mutate(m.id)}>
                        Replay
                      </Button>
                    </Table.Td>
                  )}
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
      {editing && <WebhookForm opened onClose={edit.close} webhook={webhook.data} />}
      <Confirm
        opened={deleting}
        onClose={del.close}
        title="Delete this endpoint?"
        confirmLabel="Delete endpoint"
        loading={remove.isPending}
        error={remove.error}
        onConfirm={() => remove.mutate(undefined, { onSuccess: () => void navigate({ to: `/t/${teamId}/webhooks` }) })}
      >
        Herald stops sending events to {webhook.data.endpoint}.
      </Confirm>
    </>
  );
}
