import { Button, Popover, Stack, Text, TextInput } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useQueryClient } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { api } from '../lib/api';
import { errorMessage } from '../lib/api-error';
import { formatDate } from '../lib/format';
import { useTeamId } from '../lib/queries';
import type { Broadcast } from '../lib/types';
import { Confirm } from './ui';

/** Send a test, schedule, send now: each saves the draft first, so what goes is what is on screen. */
export function DraftActions({ id, save }: { id: string | undefined; save: () => Promise<void> }) {
  const teamId = useTeamId();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [confirming, confirm] = useDisclosure(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const act = async (path: string, body: unknown) => {
    setBusy(true);
    setError(null);
    try {
      await save();
      if (!id) throw new Error('Fill in From, Subject and Segment first: the draft is not saved yet.');
      await api(`/teams/${teamId}/broadcasts/${id}${path}`, { method: 'POST', body });
      await queryClient.invalidateQueries({
        predicate: (q) => q.queryKey[0] === 'team' && q.queryKey[1] === teamId && String(q.queryKey[2]).startsWith('/broadcasts'),
      });
      if (path === '/send') await navigate({ to: `/t/${teamId}/broadcasts` });
    } catch (failure) {
      setError(failure);
      throw failure;
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <TestSend send={(to) => act('/test', { to })} />
      <ScheduleSend schedule={(at) => act('/send', { scheduled_at: at })} />
      <Button onClick={confirm.open} disabled={!id}>
        Send now
      </Button>
      <Confirm
        opened={confirming}
        title="Send this broadcast now?"
        confirmLabel="Send now"
        loading={busy}
        error={error}
        onConfirm={() => void act('/send', {}).catch(() => undefined)}
        onClose={confirm.close}
      >
        It goes to every contact of the segment who has not unsubscribed. It cannot be stopped once sending starts.
      </Confirm>
    </>
  );
}

function TestSend({ send }: { send: (to: string) => Promise<void> }) {
  const [opened, setOpened] = useState(false);
  const [to, setTo] = useState('');
  const [state, setState] = useState<{ kind: 'idle' | 'busy' | 'sent' } | { kind: 'failed'; error: unknown }>({ kind: 'idle' });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setState({ kind: 'busy' });
    send(to.trim()).then(
      () => setState({ kind: 'sent' }),
      (error: unknown) => setState({ kind: 'failed', error }),
    );
  };
  return (
    <Popover opened={opened} onChange={setOpened} position="bottom-end" shadow="md" trapFocus width={300}>
      <Popover.Target>
        <Button variant="default" onClick={() => setOpened((o) => !o)} aria-expanded={opened}>
          Send test
        </Button>
      </Popover.Target>
      <Popover.Dropdown>
        <form onSubmit={submit} aria-label="Send a test">
          <Stack gap="xs">
            <TextInput
              label="Send a test to"
              type="email"
              placeholder="you@example.com"
              required
              value={to}
              onChange={(e) => setTo(e.currentTarget.value)}
              data-autofocus
            />
            <Text size="xs" c="dimmed">
              Merge tags are filled with their fallbacks.
            </Text>
            {state.kind === 'sent' && (
              <Text size="xs" c="green.9" role="status">
                Test sent to {to}.
              </Text>
            )}
            {state.kind === 'failed' && (
              <Text size="xs" c="red" role="alert">
                {errorMessage(state.error)}
              </Text>
            )}
            <Button type="submit" size="xs" loading={state.kind === 'busy'}>
              Send test
            </Button>
          </Stack>
        </form>
      </Popover.Dropdown>
    </Popover>
  );
}

function ScheduleSend({ schedule }: { schedule: (at: string) => Promise<void> }) {
  const [opened, setOpened] = useState(false);
  const [at, setAt] = useState('');
  const [error, setError] = useState<unknown>(null);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    const when = new Date(at);
    if (Number.isNaN(when.getTime()) || when.getTime() <= Date.now()) {
      setError(new Error('Pick a time in the future.'));
      return;
    }
    schedule(when.toISOString()).then(() => setOpened(false), setError);
  };
  return (
    <Popover opened={opened} onChange={setOpened} position="bottom-end" shadow="md" trapFocus width={300}>
      <Popover.Target>
        <Button variant="default" onClick={() => setOpened((o) => !o)} aria-expanded={opened}>
          Schedule
        </Button>
      </Popover.Target>
      <Popover.Dropdown>
        <form onSubmit={submit} aria-label="Schedule the broadcast">
          <Stack gap="xs">
            <TextInput
              label="Send at"
              description="Your local time"
              type="datetime-local"
              required
              value={at}
              onChange={(e) => setAt(e.currentTarget.value)}
              data-autofocus
            />
            {Boolean(error) && (
              <Text size="xs" c="red" role="alert">
                {errorMessage(error)}
              </Text>
            )}
            <Button type="submit" size="xs">
              Schedule
            </Button>
          </Stack>
        </form>
      </Popover.Dropdown>
    </Popover>
  );
}

export function CancelSchedule({ broadcast }: { broadcast: Broadcast }) {
  const teamId = useTeamId();
  const queryClient = useQueryClient();
  const [opened, { open, close }] = useDisclosure(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const cancel = async () => {
    setBusy(true);
    try {
      await api(`/teams/${teamId}/broadcasts/${broadcast.id}/cancel`, { method: 'POST' });
      await queryClient.invalidateQueries({
        predicate: (q) => q.queryKey[0] === 'team' && q.queryKey[1] === teamId && String(q.queryKey[2]).startsWith('/broadcasts'),
      });
      close();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <Button color="red" variant="light" onClick={open}>
        Cancel schedule
      </Button>
      <Confirm
        opened={opened}
        title="Cancel this broadcast?"
        confirmLabel="Cancel broadcast"
        loading={busy}
        error={error}
        onConfirm={() => void cancel()}
        onClose={close}
      >
        It will not be sent at {formatDate(broadcast.scheduled_at)}.
      </Confirm>
    </>
  );
}
