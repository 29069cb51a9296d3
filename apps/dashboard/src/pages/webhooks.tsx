import { Anchor, Button, Checkbox, Group, Modal, SimpleGrid, Stack, Text, TextInput } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { Link } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { DataList } from '../components/data-list';
import { EmptyState, ErrorAlert, Mono, PageHeader, StatusBadge } from '../components/ui';
import type { List } from '../lib/api';
import { formatDate } from '../lib/format';
import { useCanWrite, useTeamId, useTeamMutation, useTeamQuery } from '../lib/queries';
import type { Webhook } from '../lib/types';

// Herald's event types (libs/webhooks webhook.types.ts).
export const WEBHOOK_EVENTS = [
  'email.sent',
  'email.scheduled',
  'email.delivered',
  'email.delivery_delayed',
  'email.complained',
  'email.bounced',
  'email.opened',
  'email.clicked',
  'email.failed',
  'email.suppressed',
  'contact.created',
  'contact.updated',
  'contact.deleted',
  'contact.topics.updated',
  'domain.created',
  'domain.updated',
  'domain.deleted',
  'suppression.added',
  'suppression.removed',
  'topic.created',
  'topic.updated',
  'topic.deleted',
];

export function WebhooksPage() {
  const teamId = useTeamId();
  const canWrite = useCanWrite();
  const webhooks = useTeamQuery<List<Webhook>>('/webhooks');
  const [opened, { open, close }] = useDisclosure(false);
  const add = canWrite && <Button onClick={open}>Add endpoint</Button>;
  const rows = webhooks.data?.data ?? [];
  return (
    <>
      <PageHeader title="Webhooks" description="Herald POSTs signed events to your endpoints and retries until they answer 2xx." actions={add} />
      <ErrorAlert error={webhooks.error} title="The webhooks could not load" />
      {webhooks.data && rows.length === 0 && (
        <EmptyState title="No webhook endpoints yet" action={add}>
          Add an HTTPS endpoint of yours and choose the events it receives, such as email.delivered and email.bounced.
        </EmptyState>
      )}
      {rows.length > 0 && (
        <DataList
          rows={rows}
          rowKey={(webhook) => webhook.id}
          columns={[
            {
              header: 'Endpoint',
              phone: 'title',
              maw: 320,
              cell: (webhook) => (
                <Anchor component={Link} to={`/t/${teamId}/webhooks/${webhook.id}`} ff="monospace" size="sm" style={{ wordBreak: 'break-all' }}>
                  {webhook.endpoint}
                </Anchor>
              ),
            },
            { header: 'Events', phone: 'line', cell: (webhook) => webhook.events.length },
            { header: 'Status', phone: 'badge', cell: (webhook) => <StatusBadge status={webhook.status ?? 'enabled'} /> },
            { header: 'Created', phone: 'line', nowrap: true, cell: (webhook) => formatDate(webhook.created_at) },
          ]}
        />
      )}
      <WebhookForm opened={opened} onClose={close} />
    </>
  );
}

export function EventPicker({ value, onChange }: { value: string[]; onChange: (events: string[]) => void }) {
  return (
    <Checkbox.Group label="Events" description="The events sent to this endpoint." value={value} onChange={onChange} withAsterisk>
      <Group gap="xs" mb={4} mt={4}>
        <Button size="compact-xs" variant="subtle" onClick={() => onChange(WEBHOOK_EVENTS)}>
          Select all
        </Button>
        <Button size="compact-xs" variant="subtle" onClick={() => onChange([])}>
          Clear
        </Button>
      </Group>
      <SimpleGrid cols={{ base: 1, xs: 2 }} spacing={6} verticalSpacing={6}>
        {WEBHOOK_EVENTS.map((event) => (
          <Checkbox key={event} value={event} size="xs" label={<Mono size="xs">{event}</Mono>} />
        ))}
      </SimpleGrid>
    </Checkbox.Group>
  );
}

export function WebhookForm({ opened, onClose, webhook }: { opened: boolean; onClose: () => void; webhook?: Webhook }) {
  const [endpoint, setEndpoint] = useState(webhook?.endpoint ?? '');
  const [events, setEvents] = useState<string[]>(webhook?.events ?? ['email.delivered', 'email.bounced', 'email.complained']);
  const save = useTeamMutation<Webhook, { endpoint: string; events: string[] }>(
    (body) => (webhook ? { method: 'PATCH', path: `/webhooks/${webhook.id}`, body } : { method: 'POST', path: '/webhooks', body }),
    ['/webhooks'],
  );
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate({ endpoint: endpoint.trim(), events }, { onSuccess: onClose });
  };
  return (
    <Modal opened={opened} onClose={onClose} title={webhook ? 'Edit endpoint' : 'Add a webhook endpoint'} centered size="lg">
      <form onSubmit={submit}>
        <Stack>
          <ErrorAlert error={save.error} title="The endpoint was not saved" />
          <TextInput
            label="Endpoint URL"
            placeholder="https://example.com/webhooks/herald"
            type="url"
            required
            ff="monospace"
            value={endpoint}
            onChange={(e) => setEndpoint(e.currentTarget.value)}
          />
          <EventPicker value={events} onChange={setEvents} />
          {events.length === 0 && (
            <Text size="xs" c="red">
              Choose at least one event.
            </Text>
          )}
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" loading={save.isPending} disabled={events.length === 0}>
              Save
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
