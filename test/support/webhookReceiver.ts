/**
 * A real HTTPS webhook receiver for tests, on 127.0.0.1 with a self-signed certificate (made with openssl,
 * once per process) that the tests give the sender as a trusted CA. It records every delivery (headers, the
 * exact body bytes, when it arrived, how its answer went) and answers as the test says: a status, a status
 * with headers, once a promise settles, its headers and then a body a byte at a time (a receiver that
 * trickles), or never (a receiver that hangs).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { tempDir } from './env.ts';

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: string;
  /** Date.now() when the body was complete (fake under fake timers). */
  at: number;
  /** performance.now() at the same moment (never faked): for latency figures. */
  atPerf: number;
  /**
   * How its answer went, updated as it goes: `pending` until the headers are written, `sending` while the body
   * is, `ended` once the body ended, `cut` when the connection closed before that (the sender hung up).
   */
  answer: 'pending' | 'sending' | 'ended' | 'cut';
}

export type Answer =
  | {
      status: number;
      headers?: Record<string, string>;
      delayMs?: number;
      /** Answer once this settles (a receiver the test holds, then lets go). */
      after?: Promise<unknown>;
      /** Write the headers at once, then the body one byte every `everyMs`, `bytes` times, then end it. */
      trickle?: { everyMs: number; bytes: number };
    }
  | 'hang';
/** Answers the n-th delivery (0-based, over all deliveries this receiver got). */
export type Responder = (delivery: ReceivedWebhook, n: number) => Answer;

/** Names the certificate is valid for, besides 127.0.0.1: tests resolve them to 127.0.0.1 through the resolver seam. */
export const RECEIVER_NAMES = ['localhost', 'hooks.test', 'receiver.test'];

let cert: { key: string; cert: string; certPath: string } | undefined;
export function receiverCertificate(): { key: string; cert: string; certPath: string } {
  if (cert) return cert;
  const dir = tempDir('aw-receiver-cert-');
  const keyPath = join(dir, 'key.pem');
  const certPath = join(dir, 'cert.pem');
  const san = ['IP:127.0.0.1', ...RECEIVER_NAMES.map((n) => `DNS:${n}`)].join(',');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', keyPath, '-out', certPath, '-days', '2', '-subj', '/CN=agent-wallet test receiver', '-addext', `subjectAltName=${san}`,
  ], { stdio: 'ignore' });
  cert = { key: readFileSync(keyPath, 'utf8'), cert: readFileSync(certPath, 'utf8'), certPath };
  return cert;
}

export interface WebhookReceiver {
  /** https://127.0.0.1:<port> (append a path). */
  readonly origin: string;
  readonly port: number;
  /** The PEM to trust (sender option `ca`), and its file (NODE_EXTRA_CA_CERTS for child processes). */
  readonly ca: string;
  readonly caPath: string;
  readonly received: ReceivedWebhook[];
  respond: Responder;
  /** Resolves once `n` deliveries have arrived. */
  waitFor(n: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  /** Deliveries in flight right now (arrived, not yet answered). */
  readonly inFlight: number;
  readonly maxInFlight: number;
  close(): Promise<void>;
}

export async function startWebhookReceiver(opts: { respond?: Responder; port?: number; onDelivery?: (d: ReceivedWebhook) => void } = {}): Promise<WebhookReceiver> {
  const { key, cert: certificate, certPath } = receiverCertificate();
  const received: ReceivedWebhook[] = [];
  const sockets = new Set<Socket>();
  const waiters: { n: number; resolve: () => void }[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const state = { respond: opts.respond ?? ((): Answer => ({ status: 200 })) };

  const server: Server = createServer({ key, cert: certificate }, (req, res) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    let open = true;
    let delivery: ReceivedWebhook | undefined;
    let trickling: NodeJS.Timeout | undefined;
    const finished = () => {
      if (open) inFlight--;
      open = false;
      clearInterval(trickling);
      if (delivery && delivery.answer !== 'ended') delivery.answer = 'cut';
    };
    res.on('close', finished);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      delivery = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now(), atPerf: performance.now(), answer: 'pending' };
      const d = delivery;
      const n = received.length;
      received.push(delivery);
      opts.onDelivery?.(delivery);
      for (const w of waiters.filter((x) => received.length >= x.n)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
      const answer = state.respond(delivery, n);
      if (answer === 'hang') return;
      res.on('finish', () => (d.answer = 'ended'));
      const send = () => {
        if (!open) return;
        res.writeHead(answer.status, answer.headers ?? {});
        d.answer = 'sending';
        if (!answer.trickle) return void res.end('ok');
        res.flushHeaders();
        let left = answer.trickle.bytes;
        trickling = setInterval(() => (--left > 0 ? res.write('.') : (clearInterval(trickling), res.end('.'))), answer.trickle.everyMs);
      };
      const delayed = () => (answer.delayMs ? void setTimeout(send, answer.delayMs) : send());
      if (answer.after) void answer.after.then(delayed, delayed);
      else delayed();
    });
  });
  server.on('secureConnection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;

  return {
    origin: `https://127.0.0.1:${port}`,
    port,
    ca: certificate,
    caPath: certPath,
    received,
    get respond() {
      return state.respond;
    },
    set respond(fn: Responder) {
      state.respond = fn;
    },
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    waitFor(n, timeoutMs = 30_000) {
      if (received.length >= n) return Promise.resolve(received);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`receiver got ${received.length} of ${n} deliveries`)), timeoutMs);
        waiters.push({ n, resolve: () => (clearTimeout(timer), resolve(received)) });
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
