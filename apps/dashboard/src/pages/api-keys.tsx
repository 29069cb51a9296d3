import { Alert, Button, Group, Modal, Select, Stack, Text, TextInput } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useState, type FormEvent } from 'react';
import { DataList } from '../components/data-list';
import { Confirm, Copy, EmptyState, ErrorAlert, Mono, PageHeader } from '../components/ui';
import type { List } from '../lib/api';
import { formatDate } from '../lib/format';
import { useCanWrite, useTeamMutation, useTeamQuery } from '../lib/queries';
import type { ApiKey, Domain } from '../lib/types';

const PERMISSIONS = [
  { value: 'full_access', label: 'Full access' },
  { value: 'sending_access', label: 'Sending access' },
];

export function ApiKeysPage() {
  const canWrite = useCanWrite();
  const keys = useTeamQuery<List<ApiKey>>('/api-keys');
  const domains = useTeamQuery<List<Domain>>('/domains');
  const [creating, { open, close }] = useDisclosure(false);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const revoke = useTeamMutation((id: string) => ({ method: 'DELETE', path: `/api-keys/${id}` }), ['/api-keys']);
  const domainName = (id?: string | null) => (id ? (domains.data?.data.find((d) => d.id === id)?.name ?? id) : 'All domains');
  const add = canWrite && <Button onClick={open}>Create API key</Button>;
  const rows = keys.data?.data ?? [];
  return (
    <>
      <PageHeader
        title="API keys"
        description="Keys authenticate the REST API and SMTP. A key's token is shown once, when it is created."
        actions={add}
      />
      <ErrorAlert error={keys.error} title="The API keys could not load" />
      {keys.data && rows.length === 0 && (
        <EmptyState title="No API keys yet" action={add}>
          Create a key to send email from your application with the REST API or SMTP.
        </EmptyState>
      )}
      {rows.length > 0 && (
        <DataList
          rows={rows}
          rowKey={(key) => key.id}
          minWidth={640}
          columns={[
            {
              header: 'Name',
              phone: 'title',
              cell: (key) => (
                <Text size="sm" fw={500}>
                  {key.name}
                </Text>
              ),
            },
            { header: 'Permission', phone: 'line', cell: (key) => PERMISSIONS.find((p) => p.value === key.permission)?.label ?? key.permission },
            { header: 'Domain', phone: 'line', cell: (key) => <Mono size="xs">{domainName(key.domain_id)}</Mono> },
            { header: 'Created', phone: 'line', nowrap: true, cell: (key) => formatDate(key.created_at) },
            { header: 'Last used', phone: 'line', nowrap: true, cell: (key) => (key.last_used_at ? formatDate(key.last_used_at) : 'Never') },
            ...(canWrite
              ? [
                  {
                    header: '',
                    phone: 'action' as const,
                    cell: (key: ApiKey) => (
                      <Button size="xs" variant="subtle" color="red" onClick={() => setRevoking(key)} aria-label={`Revoke ${key.name}`}>
                        Revoke
                      </Button>
                    ),
                  },
                ]
              : []),
          ]}
        />
      )}
      <CreateKey opened={creating} onClose={close} domains={domains.data?.data ?? []} />
      <Confirm
        opened={revoking !== null}
        onClose={() => setRevoking(null)}
        title="Revoke this API key?"
        confirmLabel="Revoke key"
        loading={revoke.isPending}
        error={revoke.error}
        onConfirm={() => revoking && revoke.mutate(revoking.id, { onSuccess: () => setRevoking(null) })}
      >
        Requests with “{revoking?.name}” fail from now on. This cannot be undone.
      </Confirm>
    </>
  );
}

function CreateKey({ opened, onClose, domains }: { opened: boolean; onClose: () => void; domains: Domain[] }) {
  const [name, setName] = useState('');
  const [permission, setPermission] = useState('full_access');
  const [domainId, setDomainId] = useState<string | null>(null);
  const create = useTeamMutation<{ id: string; token: string }, { name: string; permission: string; domain_id?: string }>(
    (body) => ({ method: 'POST', path: '/api-keys', body }),
    ['/api-keys'],
  );
  const finish = () => {
    create.reset();
    setName('');
    onClose();
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate({ name: name.trim(), permission, domain_id: permission === 'sending_access' && domainId ? domainId : undefined });
  };
  return (
    <Modal opened={opened} onClose={finish} title={create.data ? 'Your new API key' : 'Create an API key'} centered>
      {create.data ? (
        <Stack>
          <Alert color="yellow" variant="light">
            Copy the token now: it is shown only once. Store it as a secret.
          </Alert>
          <Group gap="xs" wrap="nowrap" p="xs" bg="gray.0" style={{ borderRadius: 4 }}>
            <Mono>{create.data.token}</Mono>
            <Copy value={create.data.token} label="the API key token" />
          </Group>
          <Button onClick={finish}>Done</Button>
        </Stack>
      ) : (
        <form onSubmit={submit}>
          <Stack>
            <ErrorAlert error={create.error} title="The key was not created" />
            <TextInput label="Name" required value={name} onChange={(e) => setName(e.currentTarget.value)} data-autofocus />
            <Select
              label="Permission"
              data={PERMISSIONS}
              value={permission}
              onChange={(v) => setPermission(v ?? 'full_access')}
              allowDeselect={false}
            />
            {permission === 'sending_access' && (
              <Select
                label="Domain"
                description="Limit the key to sending from one domain."
                placeholder="All domains"
                clearable
                data={domains.map((d) => ({ value: d.id, label: d.name }))}
                value={domainId}
                onChange={setDomainId}
              />
            )}
            <Text size="xs" c="dimmed">
              Full access manages domains, keys and webhooks too; sending access can only send.
            </Text>
            <Group justify="flex-end">
              <Button variant="default" onClick={finish}>
                Cancel
              </Button>
              <Button type="submit" loading={create.isPending}>
                Create key
              </Button>
            </Group>
          </Stack>
        </form>
      )}
    </Modal>
  );
}
