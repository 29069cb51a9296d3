import { once } from 'node:events';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { TcpProxy } from './tcp-proxy';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('TcpProxy', () => {
  let echo: Server;
  let proxy: TcpProxy;
  let socket: Socket;
  let received: string;

  beforeEach(async () => {
    echo = createServer((s) => s.on('error', () => undefined).pipe(s));
    echo.listen(0, '127.0.0.1');
    await once(echo, 'listening');
    proxy = await TcpProxy.start({ port: (echo.address() as { port: number }).port });
    socket = createConnection({ host: '127.0.0.1', port: proxy.port });
    socket.on('error', () => undefined);
    received = '';
    socket.on('data', (d) => (received += d));
    await once(socket, 'connect');
  });
  afterEach(async () => {
    socket.destroy();
    await proxy.close();
    await new Promise((resolve) => echo.close(resolve));
  });

  it('passes bytes both ways', async () => {
    socket.write('hello');
    await sleep(100);
    expect(received).toBe('hello');
  });

  it('holds bytes in a black hole and delivers them, in order, on heal', async () => {
    proxy.set('blackhole');
    socket.write('one ');
    socket.write('two');
    await sleep(150);
    expect(received).toBe('');
    proxy.heal();
    await sleep(100);
    expect(received).toBe('one two');
  });

  it('cuts one direction: the service gets the bytes, the answers wait', async () => {
    proxy.set('cut-downstream');
    socket.write('ping');
    await sleep(150);
    expect(received).toBe('');
    proxy.heal();
    await sleep(100);
    expect(received).toBe('ping');
  });

  it('resets open connections and refuses new ones', async () => {
    const closed = new Promise((resolve) => socket.once('close', resolve));
    proxy.set('refuse').reset();
    await closed;
    const next = createConnection({ host: '127.0.0.1', port: proxy.port });
    const code = await new Promise<string | undefined>((resolve) => next.on('error', (error: NodeJS.ErrnoException) => resolve(error.code)));
    expect(code).toBe('ECONNRESET');
  });
});
