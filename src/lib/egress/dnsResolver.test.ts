import { createSocket, type Socket } from 'node:dgram';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDnsResolver } from './dnsResolver.ts';

/**
 * A real nameserver on a loopback UDP port: answers A records from a table, NXDOMAIN for names ending in
 * ".missing", and swallows every question about names ending in ".silent" (a resolver that never answers).
 */
function startNameserver(table: Record<string, string>): Promise<{ socket: Socket; server: string }> {
  const socket = createSocket('udp4');
  socket.on('message', (msg, peer) => {
    let i = 12;
    const labels: string[] = [];
    while (msg[i]! !== 0) {
      labels.push(msg.subarray(i + 1, i + 1 + msg[i]!).toString());
      i += msg[i]! + 1;
    }
    const name = labels.join('.');
    const qtype = msg.readUInt16BE(i + 1);
    const question = msg.subarray(12, i + 5);
    if (name.endsWith('.silent')) return;
    const address = qtype === 1 ? table[name] : undefined;
    const header = Buffer.alloc(12);
    header.writeUInt16BE(msg.readUInt16BE(0), 0);
    header.writeUInt16BE(name.endsWith('.missing') ? 0x8183 : 0x8180, 2); // response, RD+RA; rcode 3 = NXDOMAIN
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(address ? 1 : 0, 6);
    const answer = address
      ? Buffer.concat([Buffer.from([0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4]), Buffer.from(address.split('.').map(Number))])
      : Buffer.alloc(0);
    socket.send(Buffer.concat([header, question, answer]), peer.port, peer.address);
  });
  return new Promise((resolve) => socket.bind(0, '127.0.0.1', () => resolve({ socket, server: `127.0.0.1:${socket.address().port}` })));
}

describe('the webhook DNS resolver', () => {
  let ns: { socket: Socket; server: string };
  beforeAll(async () => {
    ns = await startNameserver({ 'hooks.example': '93.184.216.34' });
  });
  afterAll(() => ns.socket.close());

  it('answers from DNS, and tells a name that does not exist (refused at once) from one without records', async () => {
    const resolve = createDnsResolver({ servers: [ns.server], timeoutMs: 500, tries: 1 });
    await expect(resolve('hooks.example')).resolves.toEqual([{ address: '93.184.216.34', family: 4 }]);
    await expect(resolve('nothing.missing')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    await expect(resolve('norecords.example')).rejects.toMatchObject({ code: 'ENODATA' });
  });

  it('answers localhost itself, as loopback (RFC 6761), without asking a server', async () => {
    const resolve = createDnsResolver({ servers: [ns.server], timeoutMs: 200, tries: 1 });
    await expect(resolve('localhost')).resolves.toEqual([
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ]);
    await expect(resolve('Receiver.LOCALHOST.')).resolves.toHaveLength(2);
  });

  it('a nameserver that never answers costs a timeout, never a thread: file I/O goes on meanwhile', async () => {
    // getaddrinfo would hold one of libuv's 4 threads per pending name; 16 of them would queue every fs call.
    const resolve = createDnsResolver({ servers: [ns.server], timeoutMs: 1_500, tries: 1 });
    let settled = 0;
    const lookups = Array.from({ length: 16 }, (_, i) =>
      resolve(`name-${i}.silent`).then(
        () => (settled += 1),
        (e: NodeJS.ErrnoException) => {
          settled += 1;
          return e.code;
        },
      ),
    );
    await Promise.all(Array.from({ length: 8 }, () => readFile(import.meta.filename ?? new URL(import.meta.url).pathname)));
    expect(settled).toBe(0); // every read finished while all 16 lookups were still waiting
    expect(new Set(await Promise.all(lookups))).toEqual(new Set(['ETIMEOUT']));
  });
});
