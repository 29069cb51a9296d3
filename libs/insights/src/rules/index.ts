import type { ContentFacts, Insight, OutcomeFacts, Rule } from '../insight.types';
import { BODY_RULES } from './body-rules';
import { LINK_RULES } from './link-rules';
import { OUTCOME_RULES } from './outcome-rules';
import { RECIPIENT_RULES } from './recipient-rules';
import { SENDER_RULES } from './sender-rules';
import { TRACKING_RULES } from './tracking-rules';

/** Content rules, in the order the findings are listed (then sorted attention first). */
export const CONTENT_RULES: Rule<ContentFacts>[] = [...SENDER_RULES, ...LINK_RULES, ...BODY_RULES, ...TRACKING_RULES, ...RECIPIENT_RULES];
export { OUTCOME_RULES };

/** Every rule's finding for these facts, in rule order. */
export function evaluate<F>(rules: Rule<F>[], facts: F): Insight[] {
  return rules.flatMap((rule) => {
    const finding = rule.check(facts);
    return finding ? [{ id: rule.id, ...finding }] : [];
  });
}

/** Attention before improvement; within a severity, rule order. A stable sort: the same facts list the same way. */
export function ordered(insights: Insight[]): Insight[] {
  const rank = (i: Insight) => (i.severity === 'attention' ? 0 : 1);
  return [...insights].sort((a, b) => rank(a) - rank(b));
}

export { looksBulk, looksTransactional, GMAIL_CLIP_BYTES } from './body-rules';
