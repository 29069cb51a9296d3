/**
 * Every NATS subject and stream name Herald uses, derived from the namespace and the region so a
 * deployment (or a test run, through its own namespace) never collides with another one.
 *
 * Subjects keep the region as written (`us-east-1`); stream names cannot hold `-` or `.`, so
 * there the region becomes `US_EAST_1`.
 */

/** One dotted subject token or several (`email.sent`): no wildcards, spaces or empty tokens. */
const SUBJECT_TOKENS = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

export const isSubjectTokens = (value: string): boolean => SUBJECT_TOKENS.test(value);

const streamToken = (value: string): string => value.toUpperCase().replace(/[-.]/g, '_');

/** Where send commands for a region are published: `herald.us-east-1.send.email`. */
export const sendSubject = (namespace: string, region: string): string => `${namespace}.${region}.send.email`;

/**
 * Where the send commands of a chunk of emails (a broadcast's, written in one transaction) are
 * published as one message: `herald.us-east-1.send.chunk`. A consumer of its own takes them, so a
 * worker that knows only single commands never sees one.
 */
export const sendChunkSubject = (namespace: string, region: string): string => `${namespace}.${region}.send.chunk`;

/** Everything the region's send stream captures. */
export const sendSubjects = (namespace: string, region: string): string => `${namespace}.${region}.send.>`;

/** Where an event of a type is published: `herald.us-east-1.events.email.sent`. */
export const eventSubject = (namespace: string, region: string, type: string): string => {
  if (!isSubjectTokens(type)) throw new Error(`event type "${type}" is not a valid subject suffix`);
  return `${namespace}.${region}.events.${type}`;
};

/** Everything the region's events stream captures; also the filter of a consumer of all events. */
export const eventSubjects = (namespace: string, region: string): string => `${namespace}.${region}.events.>`;

/** Where the tracking host hands over opens and clicks to be recorded: `herald.us-east-1.tracking.hits`. */
export const trackingHitsSubject = (namespace: string, region: string): string => `${namespace}.${region}.tracking.hits`;

/** `HERALD_SEND_US_EAST_1`: the work-queue stream of send commands. */
export const sendStreamName = (namespace: string, region: string): string => `${streamToken(namespace)}_SEND_${streamToken(region)}`;

/** `HERALD_EVENTS_US_EAST_1`: the stream of email events. */
export const eventsStreamName = (namespace: string, region: string): string => `${streamToken(namespace)}_EVENTS_${streamToken(region)}`;

/** `HERALD_TRACKING_US_EAST_1`: the work-queue stream of tracking hits waiting to be recorded. */
export const trackingStreamName = (namespace: string, region: string): string => `${streamToken(namespace)}_TRACKING_${streamToken(region)}`;
