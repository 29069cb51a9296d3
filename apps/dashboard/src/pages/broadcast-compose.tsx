import { Anchor, Button, Grid, Loader, Select, Stack, Text, TextInput } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams } from '@tanstack/react-router';
import { lazy, Suspense, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { MergeTagOption } from '../components/broadcast-editor';
import { CancelSchedule, DraftActions } from '../components/broadcast-actions';
import { EmailPreview } from '../components/email-preview';
import { ErrorAlert, PageHeader, StatusBadge } from '../components/ui';
import { api, type List } from '../lib/api';
import { errorMessage } from '../lib/api-error';
import { EMPTY_DOCUMENT } from '../lib/broadcast-document';
import { formatDate } from '../lib/format';
import { useCanWrite, useTeamId, useTeamQuery } from '../lib/queries';
import type { Broadcast, ContactProperty, Segment, Topic, UploadedImage } from '../lib/types';
import { broadcastCounts } from './broadcasts';

// TipTap and ProseMirror load with the compose page's editor, not with the dashboard.
const BroadcastEditor = lazy(() => import('../components/broadcast-editor').then((module) => ({ default: module.BroadcastEditor })));

const AUTOSAVE_MS = 800;

interface Fields {
  name: string;
  from: string;
  reply_to: string;
  subject: string;
  preview_text: string;
  segment_id: string;
  topic_id: string;
}

const BASE_TAGS: MergeTagOption[] = [
  { key: 'contact.first_name', label: 'First name (or “there”)', fallback: 'there' },
  { key: 'contact.last_name', label: 'Last name', fallback: null },
  { key: 'contact.email', label: 'Email address', fallback: null },
  { key: 'RESEND_UNSUBSCRIBE_URL', label: 'Unsubscribe link', fallback: null },
];

const fieldsOf = (broadcast: Broadcast | undefined): Fields => ({
  name: broadcast?.name ?? '',
  from: broadcast?.from ?? '',
  reply_to: broadcast?.reply_to?.join(', ') ?? '',
  subject: broadcast?.subject ?? '',
  preview_text: broadcast?.preview_text ?? '',
  segment_id: broadcast?.segment_id ?? '',
  topic_id: broadcast?.topic_id ?? '',
});

/** The API body of the form: empty optional fields are null (cleared), reply-to a list. */
function bodyOf(fields: Fields, document: unknown) {
  const replyTo = fields.reply_to
    .split(',')
    .map((address) => address.trim())
    .filter(Boolean);
  return {
    name: fields.name.trim() || null,
    from: fields.from.trim(),
    reply_to: replyTo.length ? replyTo : null,
    subject: fields.subject,
    preview_text: fields.preview_text || null,
    segment_id: fields.segment_id || null,
    topic_id: fields.topic_id || null,
    document,
  };
}

/** The file as base64 (the upload endpoint takes JSON, as the REST API's attachments do). */
function base64Of(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ''));
    reader.onerror = () => reject(reader.error ?? new Error('The file could not be read.'));
    reader.readAsDataURL(file);
  });
}

/**
 * Drafts created on this page load: when the first autosave creates one, the address moves from
 * `broadcasts/new` to the draft's, and the page must stay as it is (the editor keeps its cursor).
 */
const createdHere = new Set<string>();

/** `broadcasts/new` and `broadcasts/:broadcastId`: compose a draft (autosaved), or see one that has gone. */
export function BroadcastComposePage() {
  const { broadcastId = 'new' } = useParams({ strict: false }) as { broadcastId?: string };
  const isNew = broadcastId === 'new';
  const continued = isNew || createdHere.has(broadcastId);
  const broadcast = useTeamQuery<Broadcast>(`/broadcasts/${broadcastId}`, undefined, { enabled: !isNew });
  if (!continued && broadcast.isPending) return <Loader m="xl" aria-label="Loading" />;
  if (!continued && broadcast.error) return <ErrorAlert error={broadcast.error} title="The broadcast could not load" />;
  return <Compose key={continued ? 'new' : broadcastId} broadcast={isNew ? undefined : broadcast.data} />;
}

type SaveState = { kind: 'idle' } | { kind: 'saving' } | { kind: 'saved'; at: Date } | { kind: 'incomplete' } | { kind: 'failed'; error: unknown };

function Compose({ broadcast }: { broadcast: Broadcast | undefined }) {
  const teamId = useTeamId();
  const canWrite = useCanWrite();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const segments = useTeamQuery<List<Segment>>('/segments', { limit: 100 });
  const topics = useTeamQuery<List<Topic>>('/topics', { limit: 100 });
  const properties = useTeamQuery<List<ContactProperty>>('/contact-properties', { limit: 100 });
  const [fields, setFields] = useState<Fields>(() => fieldsOf(broadcast));
  const [document, setDocument] = useState<unknown>(broadcast ? broadcast.document : EMPTY_DOCUMENT);
  const [saveState, setSaveState] = useState<SaveState>({ kind: 'idle' });
  const [previewOpened, preview] = useDisclosure(false);
  const id = useRef(broadcast?.id);
  const dirty = useRef(false);
  const latest = useRef({ fields, document });
  latest.current = { fields, document };
  const queue = useRef<Promise<void>>(Promise.resolve());
  const editable = canWrite && (broadcast === undefined || broadcast.status === 'draft');

  /** Saves what changed since the last save; saves run one after another. Answers once this one is done. */
  const save = useCallback((): Promise<void> => {
    const run = async () => {
      if (!dirty.current) return;
      const { fields: now, document: doc } = latest.current;
      if (!id.current && !(now.from.trim() && now.subject && now.segment_id)) {
        setSaveState({ kind: 'incomplete' });
        return;
      }
      dirty.current = false;
      setSaveState({ kind: 'saving' });
      try {
        const body = bodyOf(now, doc);
        const saved = id.current
          ? await api<Broadcast>(`/teams/${teamId}/broadcasts/${id.current}`, { method: 'PATCH', body })
          : await api<Broadcast>(`/teams/${teamId}/broadcasts`, { method: 'POST', body });
        setSaveState({ kind: 'saved', at: new Date() });
        void queryClient.invalidateQueries({
          predicate: (q) => q.queryKey[0] === 'team' && q.queryKey[1] === teamId && q.queryKey[2] === '/broadcasts',
        });
        if (!id.current) {
          id.current = saved.id;
          createdHere.add(saved.id);
          await navigate({ to: `/t/${teamId}/broadcasts/${saved.id}`, replace: true });
        }
      } catch (error) {
        dirty.current = true;
        setSaveState({ kind: 'failed', error });
        throw error;
      }
    };
    const next = queue.current.then(run);
    queue.current = next.catch(() => undefined);
    return next;
  }, [teamId, navigate, queryClient]);

  // Autosave: a moment after the last change.
  useEffect(() => {
    if (!dirty.current) return;
    const timer = setTimeout(() => void save().catch(() => undefined), AUTOSAVE_MS);
    return () => clearTimeout(timer);
  }, [fields, document, save]);

  const change = (patch: Partial<Fields>) => {
    dirty.current = true;
    setFields((current) => ({ ...current, ...patch }));
  };
  const changeDocument = useCallback((next: unknown) => {
    dirty.current = true;
    setDocument(next);
  }, []);

  const uploadImage = useCallback(
    async (file: File) => {
      const image = await api<UploadedImage>(`/teams/${teamId}/images`, {
        method: 'POST',
        body: { filename: file.name, content_type: file.type, content: await base64Of(file) },
      });
      return { url: image.url };
    },
    [teamId],
  );

  const mergeTags = useMemo(
    () => [
      ...BASE_TAGS,
      ...(properties.data?.data ?? []).map((property) => ({
        key: `contact.${property.key}`,
        label: property.key,
        fallback: property.fallback_value === null ? null : String(property.fallback_value),
      })),
    ],
    [properties.data],
  );

  const title = broadcast ? broadcast.name || broadcast.subject || 'Untitled broadcast' : 'New broadcast';
  return (
    <>
      <Anchor component={Link} to={`/t/${teamId}/broadcasts`} size="sm">
        ← Broadcasts
      </Anchor>
      <PageHeader
        title={title}
        description={
          broadcast ? <StatusBadge status={broadcast.status} /> : 'Saved as a draft as you write, once it has a sender, a subject and a segment.'
        }
        actions={
          <>
            <Button variant="default" onClick={preview.open}>
              Preview
            </Button>
            {editable && <DraftActions id={id.current} save={save} />}
            {broadcast && broadcast.status === 'scheduled' && canWrite && <CancelSchedule broadcast={broadcast} />}
          </>
        }
      />
      {broadcast && broadcast.status !== 'draft' && <Summary broadcast={broadcast} />}
      <SaveStatus state={saveState} visible={editable} />
      <ErrorAlert error={segments.error} title="The segments could not load" />
      <Grid gap="sm" mb="md">
        <Grid.Col span={{ base: 12, sm: 6 }}>
          <TextInput
            label="From"
            placeholder="Acme <news@acme.com>"
            required
            value={fields.from}
            onChange={(e) => change({ from: e.currentTarget.value })}
            disabled={!editable}
          />
        </Grid.Col>
        <Grid.Col span={{ base: 12, sm: 6 }}>
          <TextInput
            label="Reply to"
            placeholder="support@acme.com"
            value={fields.reply_to}
            onChange={(e) => change({ reply_to: e.currentTarget.value })}
            disabled={!editable}
          />
        </Grid.Col>
        <Grid.Col span={12}>
          <TextInput
            label="Subject"
            placeholder="Hi {{{contact.first_name|there}}}, our spring sale starts today"
            required
            value={fields.subject}
            onChange={(e) => change({ subject: e.currentTarget.value })}
            disabled={!editable}
          />
        </Grid.Col>
        <Grid.Col span={12}>
          <TextInput
            label="Preview text"
            description="Shown after the subject in most inboxes."
            value={fields.preview_text}
            onChange={(e) => change({ preview_text: e.currentTarget.value })}
            disabled={!editable}
          />
        </Grid.Col>
        <Grid.Col span={{ base: 12, sm: 4 }}>
          <Select
            label="Segment"
            placeholder={segments.data?.data.length === 0 ? 'No segments yet' : 'Pick a segment'}
            description={segments.data?.data.length === 0 ? 'Create a segment on the Contacts page first.' : 'The contacts it goes to.'}
            required
            data={(segments.data?.data ?? []).map((segment) => ({ value: segment.id, label: segment.name }))}
            value={fields.segment_id || null}
            onChange={(value) => change({ segment_id: value ?? '' })}
            disabled={!editable}
            searchable
          />
        </Grid.Col>
        <Grid.Col span={{ base: 12, sm: 4 }}>
          <Select
            label="Topic"
            placeholder="No topic"
            description="Contacts opted out of it are skipped."
            data={(topics.data?.data ?? []).map((topic) => ({ value: topic.id, label: topic.name }))}
            value={fields.topic_id || null}
            onChange={(value) => change({ topic_id: value ?? '' })}
            disabled={!editable}
            clearable
          />
        </Grid.Col>
        <Grid.Col span={{ base: 12, sm: 4 }}>
          <TextInput
            label="Internal name"
            description="Only you see it."
            value={fields.name}
            onChange={(e) => change({ name: e.currentTarget.value })}
            disabled={!editable}
          />
        </Grid.Col>
      </Grid>
      {editable ? (
        <Suspense fallback={<Loader m="md" aria-label="Loading the editor" />}>
          <BroadcastEditor initial={broadcast?.document ?? null} onChange={changeDocument} uploadImage={uploadImage} mergeTags={mergeTags} />
        </Suspense>
      ) : (
        <Text size="sm" c="dimmed">
          {broadcast?.status === 'draft'
            ? 'Only admins and owners edit broadcasts.'
            : 'A broadcast that has left the draft stage cannot be edited. Preview shows what was sent.'}
        </Text>
      )}
      <EmailPreview opened={previewOpened} onClose={preview.close} document={document} subject={fields.subject} />
    </>
  );
}

function SaveStatus({ state, visible }: { state: SaveState; visible: boolean }) {
  if (!visible) return null;
  const words =
    state.kind === 'saving'
      ? 'Saving…'
      : state.kind === 'saved'
        ? `Draft saved at ${state.at.toLocaleTimeString()}`
        : state.kind === 'incomplete'
          ? 'Not saved yet: fill in From, Subject and Segment.'
          : state.kind === 'failed'
            ? `Not saved: ${errorMessage(state.error)}`
            : '';
  return (
    <Text size="sm" c={state.kind === 'failed' ? 'red' : 'dimmed'} mb="sm" role="status" aria-live="polite" data-save-status={state.kind} mih={20}>
      {words}
    </Text>
  );
}

function Summary({ broadcast }: { broadcast: Broadcast }) {
  return (
    <Stack gap={2} mb="md">
      <Text size="sm">{broadcastCounts(broadcast)}</Text>
      {broadcast.scheduled_at && <Text size="sm">Scheduled for {formatDate(broadcast.scheduled_at)}</Text>}
      {broadcast.sent_at && <Text size="sm">Sent {formatDate(broadcast.sent_at)}</Text>}
    </Stack>
  );
}
