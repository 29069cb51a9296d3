import { spawn, type ChildProcess } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { resetSocket } from '@herald/testing';

jest.setTimeout(30_000);

const DIST = join(__dirname, '..', '..', 'dist');

/**
 * A client that resets its TCP connection mid-transaction must not take the process down: the
 * bounce MX listens on port 25 to the whole internet. Run in a child process (from dist/), since
 * an uncaught 'error' would end the process itself, which an in-process test cannot observe.
 */
describe('the bounce MX survives connection resets', () => {
  let child: ChildProcess;
  let port: number;

  beforeAll(async () => {
    // dist/ requires the @herald/* aliases: mapped as bin/herald.js maps them
    const script = `
      const Module = require('node:module');
      const resolve = Module._resolveFilename;
      Module._resolveFilename = function (request, ...rest) {
        if (request.startsWith('@herald/')) request = require('node:path').join(${JSON.stringify(join(DIST, 'libs'))}, request.slice(8), 'src', 'index.js');
        return resolve.call(this, request, ...rest);
      };
      const { BounceMx } = require(${JSON.stringify(join(DIST, 'libs/smtp/src/bounce/bounce-mx.js'))});
      BounceMx.start({ host: '127.0.0.1', port: 0, hostname: 'mx.test', maxBytes: 100000, key: Buffer.alloc(32), onReport: async () => {} })
        .then((mx) => console.log('PORT ' + mx.port));`;
    child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    port = await new Promise<number>((resolve, reject) => {
      child.stdout!.on('data', (d: Buffer) => {
        const m = /PORT (\d+)/.exec(d.toString());
        if (m) resolve(Number(m[1]));
      });
      child.once('exit', (code) => reject(new Error(`bounce MX exited with ${code}`)));
    });
  });

  afterAll(() => child?.kill());

  const session = () =>
    new Promise<Socket>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('data', () => resolve(socket));
      socket.once('error', reject);
    });

  it('keeps answering after clients reset their connections with a transaction open', async () => {
    for (let i = 0; i < 3; i++) {
      const socket = await session();
      socket.on('error', () => undefined);
      socket.write('EHLO client.test\r\nMAIL FROM:<>\r\n');
      await new Promise((resolve) => setTimeout(resolve, 150));
      resetSocket(socket);
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(child.exitCode).toBeNull();
    const socket = await session();
    socket.destroy();
  });
});
