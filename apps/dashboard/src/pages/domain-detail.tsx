import { Anchor, Button, Group, Text } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { Link, useNavigate, useParams } from '@tanstack/react-router';
import { DnsRecords } from '../components/dns-records';
import { PausedBanner } from '../components/paused-banner';
import { Confirm, EmptyState, ErrorAlert, Mono, PageHeader, StatusBadge } from '../components/ui';
import { formatDate } from '../lib/format';
import { useCanWrite, useTeamId, useTeamMutation, useTeamQuery } from '../lib/queries';
import type { Domain } from '../lib/types';

const SETTLED = new Set(['verified', 'failed', 'not_started']);

export function DomainDetailPage() {
  const teamId = useTeamId();
  const { domainId } = useParams({ strict: false }) as { domainId: string };
  const navigate = useNavigate();
  const canWrite = useCanWrite();
  const path = `/domains/${domainId}`;
  // While a verification runs the status is polled, so "pending" turns into the answer without a reload.
  const domain = useTeamQuery<Domain>(path, undefined, {
    refetchInterval: (query) => (query.state.data && !SETTLED.has(query.state.data.status) ? 2000 : false),
  });
  const verify = useTeamMutation((_: void) => ({ method: 'POST', path: `${path}/verify` }), [path, '/domains']);
  const rotate = useTeamMutation((_: void) => ({ method: 'POST', path: `${path}/dkim/rotate` }), [path]);
  const remove = useTeamMutation((_: void) => ({ method: 'DELETE', path }), ['/domains']);
  const [confirming, { open, close }] = useDisclosure(false);

  if (domain.error) return <ErrorAlert error={domain.error} title="The domain could not load" />;
  if (!domain.data) return null;
  const records = domain.data.records ?? [];
  return (
    <>
      <Anchor component={Link} to={`/t/${teamId}/domains`} size="sm">
        ← Domains
      </Anchor>
      <PageHeader
        title={domain.data.name}
        description={
          <Group gap="xs" component="span">
            <StatusBadge status={domain.data.status} /> <span>Region</span> <Mono>{domain.data.region}</Mono>{' '}
            <span>Added {formatDate(domain.data.created_at)}</span>
          </Group>
        }
        actions={
          canWrite && (
            <>
              <Button onClick={() => verify.mutate()} loading={verify.isPending}>
                Verify DNS records
              </Button>
              <Button variant="default" onClick={() => rotate.mutate()} loading={rotate.isPending}>
                Rotate DKIM key
              </Button>
              <Button variant="light" color="red" onClick={open}>
                Delete
              </Button>
            </>
          )
        }
      />
      <PausedBanner domain={domain.data} />
      <ErrorAlert error={verify.error} title="Verification did not start" />
      <ErrorAlert error={rotate.error} title="The DKIM key was not rotated" />
      <Text size="sm" mb="sm">
        Publish these records at your DNS provider, then press Verify. Each record shows what DNS answered the last time Herald looked.
      </Text>
      {records.length === 0 ? (
        <EmptyState title="No records">This domain has no DNS records to publish.</EmptyState>
      ) : (
        <DnsRecords records={records} />
      )}
      <Confirm
        opened={confirming}
        onClose={close}
        title="Delete this domain?"
        confirmLabel="Delete domain"
        loading={remove.isPending}
        error={remove.error}
        onConfirm={() => remove.mutate(undefined, { onSuccess: () => void navigate({ to: `/t/${teamId}/domains` }) })}
      >
        Email can no longer be sent from {domain.data.name} once it is deleted. Its DNS records can be removed afterwards.
      </Confirm>
    </>
  );
}
