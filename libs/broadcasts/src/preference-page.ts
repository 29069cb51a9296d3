import { escapeHtml } from '@herald/messages';

/*
 * The hosted unsubscribe and preference pages: server-rendered HTML with inline styles and no
 * asset from anywhere (no fonts, scripts or images), readable at 320 px, usable with a keyboard
 * and a screen reader (one form, labelled checkboxes in a fieldset, a status region).
 */

export interface PreferenceTopic {
  id: string;
  name: string;
  description: string | null;
  subscribed: boolean;
}

export interface PreferenceView {
  teamName: string;
  email: string;
  unsubscribed: boolean;
  topics: PreferenceTopic[];
  /** The page's own URL, which its form posts to. */
  action: string;
  /** What was just done, shown at the top. */
  notice?: string;
}

export function preferencePage(v: PreferenceView): string {
  const topics = v.topics.length
    ? `<fieldset><legend>Emails you get from ${escapeHtml(v.teamName)}</legend>${v.topics
        .map(
          (t) =>
            `<div class="topic"><input type="checkbox" id="t-${escapeHtml(t.id)}" name="topic" value="${escapeHtml(t.id)}"${
              t.subscribed && !v.unsubscribed ? ' checked' : ''
            }><label for="t-${escapeHtml(t.id)}"><strong>${escapeHtml(t.name)}</strong>${
              t.description ? `<span>${escapeHtml(t.description)}</span>` : ''
            }</label></div>`,
        )
        .join('')}</fieldset>`
    : '';
  const state = v.unsubscribed
    ? `<p>You are unsubscribed from every email of ${escapeHtml(v.teamName)}. Save with topics checked to get them again.</p>`
    : '';
  return page(
    `Email preferences · ${v.teamName}`,
    `<h1>Email preferences</h1>
<p class="who">${escapeHtml(v.teamName)} · <span>${escapeHtml(v.email)}</span></p>
${v.notice ? `<p class="notice" role="status">${escapeHtml(v.notice)}</p>` : '<p class="notice" role="status" hidden></p>'}
${state}
<form method="post" action="${escapeHtml(v.action)}">
<input type="hidden" name="action" value="save">
${topics}
<button type="submit">Save preferences</button>
</form>
<form method="post" action="${escapeHtml(v.action)}">
<input type="hidden" name="action" value="all">
<button type="submit" class="secondary">Unsubscribe from everything</button>
</form>`,
  );
}

/** The answer to a one-click unsubscribe, and to a mail client that shows it. */
export function donePage(teamName: string, what: string): string {
  return page(`Unsubscribed · ${teamName}`, `<h1>You are unsubscribed</h1><p role="status">${escapeHtml(what)}</p>`);
}

/** A link that does not verify, or names nothing on record: nothing was changed. */
export function invalidLinkPage(): string {
  return page(
    'Link not valid',
    `<h1>This unsubscribe link is not valid</h1><p>It may have been changed or cut short when it was copied. Nothing was changed. Use the link in the email you received, as it is.</p>`,
  );
}

/** The link of a test send from the dashboard. */
export function testLinkPage(): string {
  return page(
    'Test email',
    `<h1>This was a test email</h1><p>In the broadcast itself this link opens each recipient's own preference page. Nothing was changed.</p>`,
  );
}

function page(title: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title>
<style>
body{margin:0;background:#f4f4f5;color:#18181b;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:560px;margin:0 auto;padding:32px 20px}
.card{background:#fff;border:1px solid #e4e4e7;border-radius:12px;padding:24px}
h1{font-size:1.5rem;margin:0 0 8px}
.who{color:#52525b;margin:0 0 16px;overflow-wrap:anywhere}
.notice{background:#ecfdf5;border:1px solid #6ee7b7;border-radius:8px;padding:8px 12px}
fieldset{border:0;padding:0;margin:0 0 16px}
legend{font-weight:600;margin-bottom:8px}
.topic{display:flex;gap:12px;align-items:flex-start;padding:10px 0;border-top:1px solid #f4f4f5}
.topic input{width:20px;height:20px;margin-top:3px;flex:none}
.topic span{display:block;color:#52525b;font-size:.9rem}
button{font:inherit;border-radius:8px;padding:10px 16px;border:1px solid #18181b;background:#18181b;color:#fff;cursor:pointer;margin-top:8px}
button.secondary{background:#fff;color:#b91c1c;border-color:#b91c1c}
button:focus-visible,input:focus-visible{outline:3px solid #2563eb;outline-offset:2px}
</style></head>
<body><main><div class="card">${body}</div></main></body></html>`;
}
