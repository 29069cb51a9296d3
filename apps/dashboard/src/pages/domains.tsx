import { Anchor, Button, Group, Modal, Select, Stack, TextInput } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { Link, useNavigate } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { DataList } from '../components/data-list';
import { PausedBanner } from '../components/paused-banner';
import { EmptyState, ErrorAlert, Mono, PageHeader, StatusBadge } from '../components/ui';
import type { List } from '../lib/api';
import { formatDate } from '../lib/format';
import { useCanWrite, useRegions, useTeam, useTeamId, useTeamMutation, useTeamQuery } from '../lib/queries';
import type { Domain } from '../lib/types';

export function DomainsPage() {
  const teamId = useTeamId();
  const canWrite = useCanWrite();
  const domains = useTeamQuery<List<Domain>>('/domains');
  const [opened, { open, close }] = useDisclosure(false);
  const add = canWrite && <Button onClick={open}>Add domain</Button>;
  return (
    <>
      <PageHeader title="Domains" description="The domains your team sends from. A domain sends once its DNS records are verified." actions={add} />
      <ErrorAlert error={domains.error} title="The domains could not load" />
      {domains.data?.data.map((domain) => (
        <PausedBanner key={domain.id} domain={domain} />
      ))}
      {domains.data && domains.data.data.length === 0 && (
        <EmptyState title="No domains yet" action={add}>
          Add the domain you send from (for example mail.example.com); Herald shows the DNS records to publish, then verifies them.
        </EmptyState>
      )}
      {domains.data && domains.data.data.length > 0 && (
        <DataList
          rows={domains.data.data}
          rowKey={(domain) => domain.id}
          minWidth={520}
          columns={[
            {
              header: 'Domain',
              phone: 'title',
              cell: (domain) => (
                <Anchor component={Link} to={`/t/${teamId}/domains/${domain.id}`} ff="monospace" size="sm">
                  {domain.name}
                </Anchor>
              ),
            },
            { header: 'Status', phone: 'badge', cell: (domain) => <StatusBadge status={domain.paused ? 'paused' : domain.status} /> },
            { header: 'Region', phone: 'line', cell: (domain) => <Mono size="xs">{domain.region}</Mono> },
            { header: 'Added', phone: 'line', nowrap: true, cell: (domain) => formatDate(domain.created_at) },
          ]}
        />
      )}
      <AddDomain opened={opened} onClose={close} />
    </>
  );
}

function AddDomain({ opened, onClose }: { opened: boolean; onClose: () => void }) {
  const teamId = useTeamId();
  const team = useTeam();
  const regions = useRegions();
  const navigate = useNavigate();
  const [name, setName] = useState('');
  const [region, setRegion] = useState<string | null>(null);
  const create = useTeamMutation<Domain, { name: string; region: string }>((body) => ({ method: 'POST', path: '/domains', body }), ['/domains']);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate(
      { name: name.trim(), region: region ?? team?.region ?? regions.data?.default ?? '' },
      { onSuccess: (domain) => void navigate({ to: `/t/${teamId}/domains/${domain.id}` }) },
    );
  };
  return (
    <Modal opened={opened} onClose={onClose} title="Add a domain" centered>
      <form onSubmit={submit}>
        <Stack>
          <ErrorAlert error={create.error} title="The domain was not added" />
          <TextInput
            label="Domain name"
            placeholder="mail.example.com"
            required
            ff="monospace"
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
            data-autofocus
          />
          <Select
            label="Region"
            description="Where email from this domain is sent."
            data={regions.data?.data ?? (team ? [team.region] : [])}
            value={region ?? team?.region ?? null}
            onChange={setRegion}
            allowDeselect={false}
          />
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" loading={create.isPending}>
              Add domain
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
