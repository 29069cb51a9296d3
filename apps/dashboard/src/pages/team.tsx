import { Box, Button, Group, Paper, Progress, Select, SimpleGrid, Stack, Text, TextInput } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { DataList } from '../components/data-list';
import { EmptyState, ErrorAlert, Mono, PageHeader } from '../components/ui';
import { formatDate, usagePercent } from '../lib/format';
import { useMe, useTeam, useTeamMutation, useTeamQuery } from '../lib/queries';
import type { Invitation, Member, Role, Usage } from '../lib/types';

const ROLES: { value: Role; label: string }[] = [
  { value: 'owner', label: 'Owner' },
  { value: 'admin', label: 'Admin' },
  { value: 'member', label: 'Member' },
];

function Meter({ label, used, quota }: { label: string; used: number; quota: number | null }) {
  return (
    <div>
      <Group justify="space-between" mb={4}>
        <Text size="sm">{label}</Text>
        <Text size="sm" ff="monospace">
          {used.toLocaleString('en')} / {quota === null ? 'unlimited' : quota.toLocaleString('en')}
        </Text>
      </Group>
      <Progress
        value={usagePercent(used, quota)}
        aria-label={`${label}: ${used} of ${quota ?? 'unlimited'}`}
        color={usagePercent(used, quota) > 90 ? 'red' : 'indigo'}
      />
    </div>
  );
}

export function TeamPage() {
  const team = useTeam();
  const me = useMe();
  const isOwner = team?.role === 'owner';
  const canManage = isOwner || team?.role === 'admin';
  const members = useTeamQuery<Member[] | { data: Member[] }>('/members');
  const invitations = useTeamQuery<Invitation[] | { data: Invitation[] }>('/invitations');
  const usage = useTeamQuery<Usage>('/usage');
  const setRole = useTeamMutation(
    (v: { userId: string; role: string }) => ({ method: 'PATCH', path: `/members/${v.userId}`, body: { role: v.role } }),
    ['/members'],
  );
  const removeMember = useTeamMutation((userId: string) => ({ method: 'DELETE', path: `/members/${userId}` }), ['/members']);
  const revokeInvitation = useTeamMutation((id: string) => ({ method: 'DELETE', path: `/invitations/${id}` }), ['/invitations']);
  const memberRows = Array.isArray(members.data) ? members.data : (members.data?.data ?? []);
  // Owners change anyone but themselves; admins change admins and members.
  const editable = (m: Member) => canManage && m.user_id !== me.data?.user.id && (isOwner || m.role !== 'owner');
  const invitationRows = Array.isArray(invitations.data) ? invitations.data : (invitations.data?.data ?? []);
  return (
    <>
      <PageHeader
        title={team?.name ?? 'Team'}
        description={
          <>
            Region <Mono>{team?.region}</Mono> · plan {team?.plan}
          </>
        }
      />
      <Paper withBorder p="md" mb="md">
        <Text fw={600} mb="sm">
          Usage{' '}
          {usage.data && (
            <Text span c="dimmed" size="sm">
              ({usage.data.plan} plan)
            </Text>
          )}
        </Text>
        <ErrorAlert error={usage.error} title="Usage could not load" />
        {usage.data && (
          <SimpleGrid cols={{ base: 1, sm: 2 }}>
            <Meter label="Emails this month" used={usage.data.used.month} quota={usage.data.quota.monthly} />
            <Meter label="Emails today" used={usage.data.used.today} quota={usage.data.quota.daily} />
          </SimpleGrid>
        )}
      </Paper>
      <Text fw={600} mb="xs">
        Members
      </Text>
      <ErrorAlert error={members.error ?? setRole.error ?? removeMember.error} title="Members" />
      <Box mb="md">
        <DataList
          rows={memberRows}
          rowKey={(m) => m.user_id}
          columns={[
            {
              header: 'Name',
              phone: 'title',
              cell: (m) => (
                <Text size="sm" fw={500}>
                  {m.name}
                </Text>
              ),
            },
            {
              header: 'Email',
              phone: 'line',
              nowrap: true,
              cell: (m) => (
                <Text component="span" ff="monospace" size="xs">
                  {m.email}
                </Text>
              ),
            },
            {
              header: 'Role',
              phone: 'line',
              cell: (m) =>
                editable(m) ? (
                  <Select
                    aria-label={`Role of ${m.email}`}
                    size="xs"
                    w={120}
                    allowDeselect={false}
                    data={isOwner ? ROLES : ROLES.filter((r) => r.value !== 'owner')}
                    value={m.role}
                    onChange={(role) => role && setRole.mutate({ userId: m.user_id, role })}
                  />
                ) : (
                  ROLES.find((r) => r.value === m.role)?.label
                ),
            },
            { header: 'Joined', phone: 'line', nowrap: true, cell: (m) => formatDate(m.joined_at) },
            ...(canManage
              ? [
                  {
                    header: '',
                    phone: 'action' as const,
                    cell: (m: Member) =>
                      editable(m) && (
                        <Button
                          size="xs"
                          variant="subtle"
                          color="red"
                          onClick={() => removeMember.mutate(m.user_id)}
                          aria-label={`Remove ${m.email}`}
                        >
                          Remove
                        </Button>
                      ),
                  },
                ]
              : []),
          ]}
        />
      </Box>
      <Text fw={600} mb="xs">
        Invitations
      </Text>
      <ErrorAlert error={invitations.error ?? revokeInvitation.error} title="Invitations" />
      {canManage && <Invite isOwner={isOwner} />}
      {invitations.data && invitationRows.length === 0 ? (
        <EmptyState title="No pending invitations">
          {canManage ? 'Invite a colleague by email above; the link is valid for a week.' : 'Owners and admins can invite people.'}
        </EmptyState>
      ) : (
        <Stack gap={4}>
          {invitationRows.map((i) => (
            <Group key={i.id} justify="space-between" p="xs" style={{ borderBottom: '1px solid var(--mantine-color-gray-2)' }}>
              <Text size="sm">
                <Mono size="xs">{i.email}</Mono> · {i.role} · sent {formatDate(i.created_at)}
              </Text>
              {canManage && (
                <Button size="xs" variant="subtle" color="red" onClick={() => revokeInvitation.mutate(i.id)}>
                  Revoke
                </Button>
              )}
            </Group>
          ))}
        </Stack>
      )}
    </>
  );
}

function Invite({ isOwner }: { isOwner: boolean }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<string>('member');
  const invite = useTeamMutation<Invitation, { email: string; role: string }>(
    (body) => ({ method: 'POST', path: '/invitations', body }),
    ['/invitations'],
  );
  const submit = (event: FormEvent) => {
    event.preventDefault();
    invite.mutate({ email: email.trim(), role }, { onSuccess: () => setEmail('') });
  };
  return (
    <form onSubmit={submit}>
      <ErrorAlert error={invite.error} title="The invitation was not sent" />
      <Group align="flex-end" gap="xs" mb="sm">
        <TextInput
          label="Invite by email"
          type="email"
          required
          value={email}
          onChange={(e) => setEmail(e.currentTarget.value)}
          w={{ base: '100%', sm: 280 }}
        />
        <Select
          label="Role"
          data={isOwner ? ROLES : ROLES.filter((r) => r.value !== 'owner')}
          value={role}
          onChange={(v) => setRole(v ?? 'member')}
          allowDeselect={false}
          w={120}
        />
        <Button type="submit" loading={invite.isPending}>
          Send invitation
        </Button>
      </Group>
    </form>
  );
}
