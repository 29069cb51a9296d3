import { Alert, Button, Stack, Text } from '@mantine/core';
import { useTeam, useTeamMutation } from '../lib/queries';
import type { Domain } from '../lib/types';
import { ErrorAlert } from './ui';

/**
 * The reputation guardrail's pause of a domain, in words, with the owner's Resume. Admins and
 * members see who can lift it (the API refuses them with 403 too).
 */
export function PausedBanner({ domain }: { domain: Domain }) {
  const isOwner = useTeam()?.role === 'owner';
  const resume = useTeamMutation((_: void) => ({ method: 'POST', path: `/domains/${domain.id}/resume` }), ['/domains']);
  if (!domain.paused) return null;
  return (
    <Alert color="red" variant="light" title={`${domain.name} is paused for new sends`} role="alert" mb="md">
      <Stack gap="xs" align="flex-start">
        <Text size="sm">{domain.paused.message}</Text>
        <ErrorAlert error={resume.error} title="The domain was not resumed" />
        {isOwner ? (
          <Button size="xs" color="red" onClick={() => resume.mutate()} loading={resume.isPending}>
            Resume {domain.name}
          </Button>
        ) : (
          <Text size="sm" fw={600}>
            Only a team owner can resume it.
          </Text>
        )}
      </Stack>
    </Alert>
  );
}
