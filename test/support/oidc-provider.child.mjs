// A local OpenID Connect provider standing in for Google (oauth2-mock-server), run in its own
// Node process: jose, which it signs with, checks object prototypes that differ inside jest's
// sandbox. The parent steers it over IPC: { user } is who signs in next, { deny } refuses consent.
import { OAuth2Server } from 'oauth2-mock-server';

let user = null;
let deny = false;
const server = new OAuth2Server();
await server.issuer.keys.generate('RS256');
await server.start(0, '127.0.0.1');
server.service.on('beforeTokenSigning', (token) => {
  if (user) Object.assign(token.payload, user);
});
server.service.on('beforeUserinfo', (response) => {
  if (user) response.body = { ...user };
});
server.service.on('beforeAuthorizeRedirect', (redirect) => {
  if (!deny) return;
  redirect.url.searchParams.delete('code');
  redirect.url.searchParams.set('error', 'access_denied');
});
process.on('message', (message) => {
  if ('user' in message) user = message.user;
  if ('deny' in message) deny = message.deny;
  process.send({ ok: true });
});
process.on('disconnect', () => void server.stop().then(() => process.exit(0)));
process.send({ issuer: server.issuer.url });
