import { Button, FileInput, Group, Menu, Paper, Popover, Stack, Text, TextInput } from '@mantine/core';
import { EmailEditor, type EmailEditorProps, type EmailEditorRef } from '@react-email/editor';
import { StarterKit } from '@react-email/editor/extensions';
import '@react-email/editor/themes/default.css';
import { Placeholder } from '@tiptap/extension-placeholder';
import { useMemo, useRef, useState, type FormEvent, type ReactNode } from 'react';
import { errorMessage } from '../lib/api-error';
import { EMPTY_DOCUMENT } from '../lib/broadcast-document';
import { FooterNode, MergeTagNode, SpacerNode } from './editor-nodes';
import './broadcast-editor.css';

type Extensions = NonNullable<EmailEditorProps['extensions']>;
/**
 * The commands the toolbar runs. Their types are declared by the TipTap extensions against the
 * top-level @tiptap/core, while the editor's own Editor type comes from the copy nested in
 * @react-email/editor, so they are named here once.
 */
interface Chain {
  focus(): Chain;
  toggleHeading(attributes: { level: 1 | 2 | 3 }): Chain;
  setParagraph(): Chain;
  setHorizontalRule(): Chain;
  insertContentAt(position: number, content: JSONContent | JSONContent[]): Chain;
  run(): boolean;
}
export type JSONContent = ReturnType<EmailEditorRef['getJSON']>;

export interface MergeTagOption {
  key: string;
  label: string;
  fallback: string | null;
}

export interface BroadcastEditorProps {
  /** The stored document, or null for a new broadcast. */
  initial: unknown;
  onChange: (document: JSONContent) => void;
  uploadImage: (file: File) => Promise<{ url: string }>;
  mergeTags: MergeTagOption[];
}

const STARTER = StarterKit.configure({
  // What libs/email-documents does not render: tables come only from pasted HTML, and are dropped.
  Table: false,
  TableRow: false,
  TableCell: false,
  TableHeader: false,
  // The toolbar and its forms take focus: the cursor must still be where the block goes.
  FocusScopes: { clearSelectionOnBlur: false },
});

/**
 * The no-code editor of a broadcast: @react-email/editor (TipTap) with Herald's spacer, footer and
 * merge-tag chips, and a toolbar that inserts each block (the slash menu offers the starter kit's too).
 * Lazy-loaded by the compose page: TipTap and ProseMirror stay out of the dashboard's first load.
 */
export function BroadcastEditor({ initial, onChange, uploadImage, mergeTags }: BroadcastEditorProps) {
  // The editor of the moment, read when a toolbar button is pressed (TipTap may replace its instance).
  const editorRef = useRef<EmailEditorRef>(null);
  const onChangeRef = useRef(onChange);
  onChangeRef.current = onChange;
  const extensions = useMemo(
    (): Extensions => [
      STARTER,
      Placeholder.configure({
        placeholder: ({ node }) => (node.type.name === 'heading' ? 'Heading' : "Write here, or press '/' for blocks"),
        includeChildren: true,
      }) as unknown as Extensions[number],
      MergeTagNode,
      SpacerNode,
      FooterNode,
    ],
    [],
  );
  const content = useMemo(() => (isDocument(initial) ? initial : (EMPTY_DOCUMENT as JSONContent)), [initial]);
  const chain = () => (editorRef.current?.editor?.chain() as unknown as Chain | undefined)?.focus();
  // At the end of the selection, never over it: a selected image or spacer stays when the next block goes in.
  const insert = (node: JSONContent | JSONContent[]) => {
    const at = editorRef.current?.editor?.state.selection.to;
    if (at !== undefined) chain()?.insertContentAt(at, node).run();
  };

  return (
    <Paper withBorder radius="md" className="herald-editor">
      <Group gap={6} p="xs" wrap="wrap" role="toolbar" aria-label="Insert a block" style={{ borderBottom: '1px solid var(--mantine-color-gray-3)' }}>
        <ToolButton onClick={() => chain()?.toggleHeading({ level: 2 }).run()}>Heading</ToolButton>
        <ToolButton onClick={() => chain()?.setParagraph().run()}>Text</ToolButton>
        <ButtonForm
          onInsert={(label, href) => insert({ type: 'button', attrs: { href, alignment: 'center' }, content: [{ type: 'text', text: label }] })}
        />
        <ImageForm
          upload={uploadImage}
          onInsert={(src, alt) => insert({ type: 'image', attrs: { src, alt, alignment: 'center', width: 'auto', height: 'auto' } })}
        />
        <ToolButton
          onClick={() =>
            insert({
              type: 'twoColumns',
              content: [
                { type: 'columnsColumn', content: [{ type: 'paragraph' }] },
                { type: 'columnsColumn', content: [{ type: 'paragraph' }] },
              ],
            })
          }
        >
          Columns
        </ToolButton>
        <ToolButton onClick={() => chain()?.setHorizontalRule().run()}>Divider</ToolButton>
        <ToolButton onClick={() => insert({ type: 'spacer', attrs: { height: 32 } })}>Spacer</ToolButton>
        <ToolButton
          onClick={() =>
            insert({ type: 'footer', content: [{ type: 'text', text: 'You receive this email because you subscribed to our updates.' }] })
          }
        >
          Footer
        </ToolButton>
        <Menu position="bottom-start" shadow="md" width={260} returnFocus={false}>
          <Menu.Target>
            <Button size="compact-sm" variant="light">
              Merge tag
            </Button>
          </Menu.Target>
          <Menu.Dropdown>
            <Menu.Label>Filled in for each contact</Menu.Label>
            {mergeTags.map((tag) => (
              <Menu.Item key={tag.key} onClick={() => insert({ type: 'mergeTag', attrs: { key: tag.key, fallback: tag.fallback } })}>
                {tag.label}
              </Menu.Item>
            ))}
          </Menu.Dropdown>
        </Menu>
      </Group>
      <EmailEditor
        className="herald-editor-canvas"
        content={content}
        extensions={extensions}
        onUploadImage={uploadImage}
        ref={editorRef}
        onReady={({ editor }) =>
          // The editing area's name for screen readers (ProseMirror gives the contenteditable none of its own).
          editor?.setOptions({
            editorProps: { ...editor.options.editorProps, attributes: { role: 'textbox', 'aria-multiline': 'true', 'aria-label': 'Email content' } },
          })
        }
        onUpdate={(ref: EmailEditorRef) => onChangeRef.current(ref.getJSON())}
      />
    </Paper>
  );
}

function isDocument(value: unknown): value is JSONContent {
  return typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'doc';
}

function ToolButton({ onClick, children }: { onClick: () => void; children: ReactNode }) {
  return (
    <Button size="compact-sm" variant="light" onClick={onClick}>
      {children}
    </Button>
  );
}

/** A button block: its words and where it leads (a URL, or a merge tag such as the unsubscribe link). */
function ButtonForm({ onInsert }: { onInsert: (label: string, href: string) => void }) {
  const [opened, setOpened] = useState(false);
  const [label, setLabel] = useState('');
  const [href, setHref] = useState('https://');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    event.stopPropagation();
    onInsert(label.trim() || 'Button', href.trim());
    setOpened(false);
    setLabel('');
    setHref('https://');
  };
  return (
    <Popover opened={opened} onChange={setOpened} position="bottom-start" shadow="md" trapFocus width={300}>
      <Popover.Target>
        <Button size="compact-sm" variant="light" onClick={() => setOpened((o) => !o)} aria-expanded={opened}>
          Button
        </Button>
      </Popover.Target>
      <Popover.Dropdown>
        <form onSubmit={submit} aria-label="Add a button">
          <Stack gap="xs">
            <TextInput label="Button text" value={label} onChange={(e) => setLabel(e.currentTarget.value)} required data-autofocus />
            <TextInput
              label="Link"
              description="https:// or mailto: address"
              value={href}
              onChange={(e) => setHref(e.currentTarget.value)}
              required
              pattern="(https?://|mailto:|\{\{\{).+"
            />
            <Button type="submit" size="xs">
              Add button
            </Button>
          </Stack>
        </form>
      </Popover.Dropdown>
    </Popover>
  );
}

/** An image block: the file is uploaded to Herald, which serves it to the recipients' mail clients. */
function ImageForm({ upload, onInsert }: { upload: (file: File) => Promise<{ url: string }>; onInsert: (src: string, alt: string) => void }) {
  const [opened, setOpened] = useState(false);
  const [file, setFile] = useState<File | null>(null);
  const [alt, setAlt] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    event.stopPropagation();
    if (!file) return;
    setBusy(true);
    setError(null);
    try {
      const { url } = await upload(file);
      onInsert(url, alt.trim());
      setOpened(false);
      setFile(null);
      setAlt('');
    } catch (failure) {
      setError(errorMessage(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Popover opened={opened} onChange={setOpened} position="bottom-start" shadow="md" trapFocus width={300}>
      <Popover.Target>
        <Button size="compact-sm" variant="light" onClick={() => setOpened((o) => !o)} aria-expanded={opened}>
          Image
        </Button>
      </Popover.Target>
      <Popover.Dropdown>
        <form onSubmit={(event) => void submit(event)} aria-label="Add an image">
          <Stack gap="xs">
            <FileInput
              label="Image file"
              description="PNG, JPEG, GIF or WebP, up to 5 MB"
              accept="image/png,image/jpeg,image/gif,image/webp"
              value={file}
              onChange={setFile}
              required
              clearable
            />
            <TextInput
              label="Alternative text"
              description="Read aloud, and shown when images are off"
              value={alt}
              onChange={(e) => setAlt(e.currentTarget.value)}
            />
            {error && (
              <Text size="xs" c="red" role="alert">
                {error}
              </Text>
            )}
            <Button type="submit" size="xs" loading={busy} disabled={!file}>
              Upload and add
            </Button>
          </Stack>
        </form>
      </Popover.Dropdown>
    </Popover>
  );
}
