import { Button, Stack, Text } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useNavigate, useParams } from '@tanstack/react-router';
import { ErrorAlert } from '../../components/ui';
import { api } from '../../lib/api';
import { isSignedOut } from '../../lib/api-error';
import type { Team } from '../../lib/types';
import { AuthLayout, TextLink } from './auth-layout';

export function InvitationPage() {
  const { token } = useParams({ strict: false }) as { token: string };
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const accept = useMutation({
    mutationFn: () => api<{ team: Team }>(`/invitations/${encodeURIComponent(token)}/accept`, { method: 'POST' }),
    onSuccess: async ({ team }) => {
      await queryClient.invalidateQueries({ queryKey: ['me'] });
      await navigate({ to: `/t/${team.id}/domains` });
    },
  });
  return (
    <AuthLayout title="Join a team" subtitle="You were invited to a team on Herald.">
      <Stack gap="sm">
        {isSignedOut(accept.error) ? (
          <Text size="sm">
            Sign in (or <TextLink to="/sign-up">create an account</TextLink> with the invited address) first, then open the link again.{' '}
            <TextLink to="/sign-in">Sign in</TextLink>
          </Text>
        ) : (
          <ErrorAlert error={accept.error} title="The invitation could not be accepted" />
        )}
        <Button loading={accept.isPending} onClick={() => accept.mutate()}>
          Accept the invitation
        </Button>
      </Stack>
    </AuthLayout>
  );
}
