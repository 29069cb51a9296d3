import { ActionIcon, Alert, Badge, Button, CopyButton, Group, Modal, Stack, Text, Title, Tooltip } from '@mantine/core';
import { useNavigate } from '@tanstack/react-router';
import { useEffect, type ReactNode } from 'react';
import { errorMessage } from '../lib/api-error';
import { statusLabel, toneOf } from '../lib/format';

/** A status as a badge: its colour and its words. */
export function StatusBadge({ status }: { status: string | null | undefined }) {
  return (
    // The dot variant: the colour in the dot, the words in the body text colour (a tinted badge's text fails AA contrast).
    <Badge color={toneOf(status)} variant="dot" radius="sm" tt="none" fw={600} style={{ flexShrink: 0, minWidth: 'max-content' }}>
      {statusLabel(status)}
    </Badge>
  );
}

export function PageHeader({ title, description, actions }: { title: string; description?: ReactNode; actions?: ReactNode }) {
  return (
    <Group justify="space-between" align="flex-start" mb="md" gap="sm">
      <div>
        <Title order={1} size="h3" style={{ overflowWrap: 'anywhere' }}>
          {title}
        </Title>
        {description && (
          <Text c="dimmed" size="sm" mt={4}>
            {description}
          </Text>
        )}
      </div>
      {actions && <Group gap="xs">{actions}</Group>}
    </Group>
  );
}

/** An API error in words (Herald's `message`), never a blank page. */
export function ErrorAlert({ error, title = 'Something went wrong' }: { error: unknown; title?: string }) {
  if (!error) return null;
  return (
    <Alert color="red" variant="light" title={title} role="alert" mb="md">
      {errorMessage(error)}
    </Alert>
  );
}

export function EmptyState({ title, children, action }: { title: string; children: ReactNode; action?: ReactNode }) {
  return (
    <Stack align="center" gap="xs" py="xl" px="md" ta="center" style={{ border: '1px dashed var(--mantine-color-gray-4)', borderRadius: 8 }}>
      <Text fw={600}>{title}</Text>
      <Text c="dimmed" size="sm" maw={460}>
        {children}
      </Text>
      {action}
    </Stack>
  );
}

export function Mono({ children, size = 'sm' }: { children: ReactNode; size?: string }) {
  return (
    <Text component="span" ff="monospace" size={size} style={{ wordBreak: 'break-all' }}>
      {children}
    </Text>
  );
}

const ICON = {
  width: 14,
  height: 14,
  viewBox: '0 0 24 24',
  fill: 'none',
  stroke: 'currentColor',
  strokeWidth: 2,
  strokeLinecap: 'round',
  strokeLinejoin: 'round',
  'aria-hidden': true,
} as const;

function CopyIcon() {
  return (
    <svg {...ICON}>
      <rect x="9" y="9" width="12" height="12" rx="2" />
      <path d="M5 15H4a2 2 0 0 1-2-2V4a2 2 0 0 1 2-2h9a2 2 0 0 1 2 2v1" />
    </svg>
  );
}

function CheckIcon() {
  return (
    <svg {...ICON}>
      <path d="M20 6 9 17l-5-5" />
    </svg>
  );
}

/** A copy button for a value, labelled with what it copies. */
export function Copy({ value, label }: { value: string; label: string }) {
  return (
    <CopyButton value={value} timeout={1500}>
      {({ copied, copy }) => (
        <Tooltip label={copied ? 'Copied' : `Copy ${label}`} withArrow>
          <ActionIcon variant="subtle" color={copied ? 'teal' : 'gray'} onClick={copy} aria-label={`Copy ${label}`} size="sm">
            {copied ? <CheckIcon /> : <CopyIcon />}
          </ActionIcon>
        </Tooltip>
      )}
    </CopyButton>
  );
}

/** A confirmation dialog for a destructive action; the error of the action shows inside it. */
export function Confirm(props: {
  opened: boolean;
  title: string;
  children: ReactNode;
  confirmLabel: string;
  loading?: boolean;
  error?: unknown;
  onConfirm: () => void;
  onClose: () => void;
}) {
  return (
    <Modal opened={props.opened} onClose={props.onClose} title={props.title} centered closeButtonProps={{ 'aria-label': 'Close' }}>
      <Stack>
        <Text size="sm">{props.children}</Text>
        <ErrorAlert error={props.error} />
        <Group justify="flex-end">
          <Button variant="default" onClick={props.onClose}>
            Cancel
          </Button>
          <Button color="red" loading={props.loading} onClick={props.onConfirm}>
            {props.confirmLabel}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

/** Goes to `to` once, replacing the current entry (a redirect rendered by a page). */
export function Redirect({ to, search }: { to: string; search?: Record<string, unknown> }) {
  const navigate = useNavigate();
  const query = JSON.stringify(search ?? {});
  useEffect(() => {
    void navigate({ to, search: JSON.parse(query) as Record<string, unknown>, replace: true });
  }, [to, query, navigate]);
  return null;
}
