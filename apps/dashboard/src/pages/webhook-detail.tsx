import { Anchor, Button, Code, Group, Paper, Text } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { Link, useNavigate, useParams } from '@tanstack/react-router';
import { useState } from 'react';
import { Confirm, Copy, ErrorAlert, Mono, PageHeader } from '../components/ui';
import { api } from '../lib/api';
import { useCanWrite, useTeamId, useTeamMutation, useTeamQuery } from '../lib/queries';
import type { Webhook } from '../lib/types';
import { WebhookDeliveries } from './webhook-deliveries';
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
  const remove = useTeamMutation((_: void) => ({ method: 'DELETE', path }), ['/webhooks']);
  const [editing, edit] = useDisclosure(false);
  const [deleting, del] = useDisclosure(false);
  if (webhook.error) return <ErrorAlert error={webhook.error} title="The webhook could not load" />;
  if (!webhook.data) return null;
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
      <WebhookDeliveries path={path} />
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
