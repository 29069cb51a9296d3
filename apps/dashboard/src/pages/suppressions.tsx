import { Button, Group, Modal, Stack, Table, Text, TextInput } from '@mantine/core';
import { useDebouncedValue, useDisclosure } from '@mantine/hooks';
import { useState, type FormEvent } from 'react';
import { Confirm, EmptyState, ErrorAlert, PageHeader, StatusBadge } from '../components/ui';
import type { List } from '../lib/api';
import { formatDate } from '../lib/format';
import { useCanWrite, useTeamMutation, useTeamQuery } from '../lib/queries';
import type { Suppression } from '../lib/types';

export function SuppressionsPage() {
  const canWrite = useCanWrite();
  const [search, setSearch] = useState('');
  const [q] = useDebouncedValue(search.trim(), 300);
  const list = useTeamQuery<List<Suppression>>('/suppressions', { q });
  const [adding, { open, close }] = useDisclosure(false);
  const [removing, setRemoving] = useState<Suppression | null>(null);
  const remove = useTeamMutation((id: string) => ({ method: 'DELETE', path: `/suppressions/${id}` }), ['/suppressions']);
  const add = canWrite && <Button onClick={open}>Add address</Button>;
  const rows = list.data?.data ?? [];
  return (
    <>
      <PageHeader
        title="Suppressions"
        description="Herald sends nothing to these addresses: they bounced, complained, unsubscribed or were added by hand."
        actions={add}
      />
      <TextInput label="Search" placeholder="Email address" value={search} onChange={(e) => setSearch(e.currentTarget.value)} mb="sm" maw={360} />
      <ErrorAlert error={list.error} title="The suppressions could not load" />
      {list.data && rows.length === 0 && (
        <EmptyState title={q ? 'No suppressed address matches' : 'No suppressed addresses'}>
          {q ? 'Try another address.' : 'Addresses that hard-bounce or complain are added here automatically. You can also add one by hand.'}
        </EmptyState>
      )}
      {rows.length > 0 && (
        <Table.ScrollContainer minWidth={520}>
          <Table verticalSpacing="xs" highlightOnHover>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Address</Table.Th>
                <Table.Th>Reason</Table.Th>
                <Table.Th>Added</Table.Th>
                {canWrite && <Table.Th aria-label="Actions" />}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((s) => (
                <Table.Tr key={s.id}>
                  <Table.Td style={{ whiteSpace: 'nowrap' }}>
                    <Text component="span" ff="monospace" size="xs">
                      {s.email}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <StatusBadge status={s.reason ?? 'manual'} />
                  </Table.Td>
                  <Table.Td style={{ whiteSpace: 'nowrap' }}>{formatDate(s.created_at)}</Table.Td>
                  {canWrite && (
                    <Table.Td>
                      <Button size="xs" variant="subtle" color="red" onClick={() => setRemoving(s)}>
                        Remove
                      </Button>
                    </Table.Td>
                  )}
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
      <AddSuppression opened={adding} onClose={close} />
      <Confirm
        opened={removing !== null}
        onClose={() => setRemoving(null)}
        title="Remove this address?"
        confirmLabel="Remove"
        loading={remove.isPending}
        error={remove.error}
        onConfirm={() => removing && remove.mutate(removing.id, { onSuccess: () => setRemoving(null) })}
      >
        Herald will send to {removing?.email} again.
      </Confirm>
    </>
  );
}

function AddSuppression({ opened, onClose }: { opened: boolean; onClose: () => void }) {
  const [email, setEmail] = useState('');
  const add = useTeamMutation<Suppression, { email: string; reason: string }>(
    (body) => ({ method: 'POST', path: '/suppressions', body }),
    ['/suppressions'],
  );
  const submit = (event: FormEvent) => {
    event.preventDefault();
    add.mutate(
      { email: email.trim(), reason: 'manual' },
      {
        onSuccess: () => {
          setEmail('');
          onClose();
        },
      },
    );
  };
  return (
    <Modal opened={opened} onClose={onClose} title="Suppress an address" centered>
      <form onSubmit={submit}>
        <Stack>
          <ErrorAlert error={add.error} title="The address was not added" />
          <TextInput label="Email address" type="email" required value={email} onChange={(e) => setEmail(e.currentTarget.value)} data-autofocus />
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" loading={add.isPending}>
              Suppress
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
