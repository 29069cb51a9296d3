import { eventSubject, eventSubjects, eventsStreamName, sendStreamName, sendSubject, sendSubjects } from './subjects';

describe('subjects', () => {
  it('names the send subject and stream of a region', () => {
    expect(sendSubject('herald', 'us-east-1')).toBe('herald.us-east-1.send.email');
    expect(sendSubjects('herald', 'us-east-1')).toBe('herald.us-east-1.send.>');
    expect(sendStreamName('herald', 'us-east-1')).toBe('HERALD_SEND_US_EAST_1');
    expect(sendStreamName('t_k3x9ab12', 'ap-northeast-1')).toBe('T_K3X9AB12_SEND_AP_NORTHEAST_1');
  });

  it('names the events subject and stream of a region', () => {
    expect(eventSubject('herald', 'us-east-1', 'email.sent')).toBe('herald.us-east-1.events.email.sent');
    expect(eventSubject('herald', 'eu-west-1', 'contact.created')).toBe('herald.eu-west-1.events.contact.created');
    expect(eventSubjects('herald', 'eu-west-1')).toBe('herald.eu-west-1.events.>');
    expect(eventsStreamName('herald', 'sa-east-1')).toBe('HERALD_EVENTS_SA_EAST_1');
  });

  it('refuses an event type that would change the subject space', () => {
    for (const type of ['', 'email.*', 'email.>', 'email sent', 'email..sent', '.email', 'email.']) {
      expect(() => eventSubject('herald', 'us-east-1', type)).toThrow(/not a valid subject suffix/);
    }
  });
});
