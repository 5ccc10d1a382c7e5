import { STATUS_CODES, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * What one client connection may hold, so a slow or idle client cannot keep a socket (and a file descriptor)
 * for ever. An audit held ~1,000 unauthenticated slow bodies open and exhausted a 1,024 file limit: fresh
 * /health and execute calls got connection resets.
 */
export interface ConnectionLimits {
  /** The headers must arrive within this (Node's headersTimeout). */
  headersTimeoutMs: number;
  /** The whole request, body included, must arrive within this (Node's requestTimeout): a slow body ends. */
  requestTimeoutMs: number;
  /** A keep-alive connection idle between requests is closed after this. */
  keepAliveTimeoutMs: number;
  /** A socket with no traffic at all (in either direction) is closed after this. */
  idleTimeoutMs: number;
  /** Open connections per client address; more are closed as they arrive. 0: no bound. */
  maxConnectionsPerAddress: number;
  /** After an early error answer to a body not read yet: how long its rest is read and dropped before closing. */
  lingerMs: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  idleTimeoutMs: 60_000,
  maxConnectionsPerAddress: 128,
  lingerMs: 2_000,
};

/**
 * All request headers together, at most (Node's default is 16 KiB). The largest the schema allows — an x402
 * PAYMENT-SIGNATURE (16 KiB), an X-Payment-Proof (4 KiB), an Idempotency-Key and the rest — fit in this.
 */
export const MAX_HEADER_BYTES = 32 * 1024;

/** Options for http.createServer (Fastify's `http`): Node checks the two timeouts on this period. */
export function serverOptions(limits: ConnectionLimits) {
  return {
    maxHeaderSize: MAX_HEADER_BYTES,
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    // Node enforces both on a timer (default every 30 s): check at least as often as the shorter one needs.
    connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(limits.headersTimeoutMs / 4))),
  };
}

/** Bounds the connections of each client address: one address cannot take every file descriptor. */
export function boundConnectionsPerAddress(server: Server, max: number, onRefused?: (address: string) => void): void {
  if (max <= 0) return;
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? 'unknown';
    const count = open.get(address) ?? 0;
    if (count >= max) {
      onRefused?.(address);
      socket.destroy();
      return;
    }
    open.set(address, count + 1);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left <= 0) open.delete(address);
      else open.set(address, left);
    });
  });
}

/**
 * An onSend hook: an error answered before the request's body was read (a 401 from the auth hook, a 413 from
 * the declared length, a 415...) closes the connection, so a slow body cannot keep it. It closes lingering:
 * the answer is sent, our side ends, and what the client still sends is read and dropped for `lingerMs`,
 * then the socket is destroyed. Destroying at once would answer the client's next bytes with a reset, and a
 * client still writing its body would see a broken pipe instead of the 413 (or 401) it was sent.
 */
export function closeAfterEarlyError(lingerMs: number) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (reply.statusCode < 400 || request.raw.complete || !hasBody(request)) return;
    reply.header('connection', 'close');
    const socket = request.raw.socket;
    // Node ends a `Connection: close` response with socket.destroySoon(): end, then destroy once flushed.
    // Here it ends and lingers instead.
    socket.destroySoon = () => lingeringClose(socket, lingerMs);
  };
}

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

function lingeringClose(socket: Socket, lingerMs: number): void {
  if (socket.destroyed) return;
  socket.end(); // FIN after the answer: the client reads all of it, then the end
  socket.resume(); // and whatever it still sends is read and dropped
  const timer = setTimeout(() => socket.destroy(), lingerMs);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  socket.once('end', () => socket.destroy()); // the client finished too
}

/**
 * Fastify's clientErrorHandler: what Node refuses before any route (headers over MAX_HEADER_BYTES, a request
 * that took longer than its timeout, bytes that are not HTTP) answered in the API's error shape, then closed.
 */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, code, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'headers_too_large', `the request headers are over ${MAX_HEADER_BYTES} bytes in total`]
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'request_timeout', 'the request did not arrive in time']
        : [400, 'bad_request', 'the request is not valid HTTP/1.1'];
  const body = JSON.stringify({ error: code, message });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nconnection: close\r\ncontent-type: application/json; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

/** The Fastify constructor options that carry `limits` (spread them into Fastify({...})). */
export function connectionOptions(limits: ConnectionLimits) {
  return {
    http: serverOptions(limits),
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionTimeout: limits.idleTimeoutMs,
    clientErrorHandler,
  };
}

/** What `limits` needs on a built app: the per-address bound and the lingering close after early errors. */
export function guardConnections(app: FastifyInstance, limits: ConnectionLimits): void {
  boundConnectionsPerAddress(app.server, limits.maxConnectionsPerAddress, (address) =>
    app.log.warn({ address, max: limits.maxConnectionsPerAddress }, 'connection refused: too many open from this address'),
  );
  app.addHook('onSend', closeAfterEarlyError(limits.lingerMs));
}
