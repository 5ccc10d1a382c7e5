import type { ClientRequest, IncomingMessage } from 'node:http';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createInterface } from 'node:readline';
import type { Kind, ResourceByKind } from '../../api/v1alpha1/index.ts';
import type { Logger } from '../../lib/logger.ts';
import { StoreError, type WatchEvent, type WatchHandle } from '../types.ts';
import type { KubeClient } from './client.ts';
import { decode, resourceOf } from './codec.ts';
import { parseStatus, storeErrorFromStatus } from './errors.ts';

export interface WatchTimings {
  /**
   * The API server ends each watch request after this long (jittered by up to +20%, as client-go does, so a
   * fleet of informers does not reconnect in step); the watch reconnects from the last version it saw.
   */
  serverTimeoutSeconds: number;
  /**
   * No byte for this long and the connection is treated as dead: the request is aborted and the watch ends
   * with Unavailable. With serverTimeoutSeconds set, the server closes every healthy watch by then, so
   * silence past it means a half-open connection, which the JavaScript client would wait on forever.
   */
  inactivityMs: number;
}

/** One line of a watch stream. */
interface RawEvent {
  type?: string;
  object?: { metadata?: { resourceVersion?: string } } & Record<string, unknown>;
}

export interface KubeWatchParams<K extends Kind> {
  client: KubeClient;
  kind: K;
  namespace: string;
  labelSelector: string | undefined;
  /** The version to watch after, or how to find it (may deliver initial events through onEvent). */
  resourceVersion: string | ((deliver: (event: WatchEvent<ResourceByKind[K]>) => void) => Promise<string>);
  timings: WatchTimings;
  logger: Logger;
  onEvent: (event: WatchEvent<ResourceByKind[K]>) => void;
  onEnd: () => void;
}

/**
 * A watch that looks like the embedded store's: one logical stream from a resourceVersion, ended only by
 * stop() or an error. Underneath, a chain of watch requests: when the server closes one (its timeout), the
 * next starts from the last version seen, BOOKMARK events included, so a quiet watch does not fall behind the
 * server's history. Bookmarks move that version and are not delivered.
 *
 * The requests are plain node:https with the kubeconfig's agent and headers, not client-node's Watch: that
 * one hands back its AbortController only once response headers have arrived (a request hung before then
 * cannot be aborted, which is the hang we guard against), swallows exceptions thrown by the event callback,
 * and drops the Status body of a refused request (403 vs 410 vs 500 all look alike).
 */
export class KubeWatch<K extends Kind> implements WatchHandle {
  readonly done: Promise<void>;
  private resolveDone!: () => void;
  private rejectDone!: (e: unknown) => void;
  private ended = false;
  private req: ClientRequest | undefined;
  private timer: NodeJS.Timeout | undefined;
  private lastResourceVersion = '';
  private requestCount = 0;

  constructor(private readonly p: KubeWatchParams<K>) {
    this.done = new Promise<void>((resolve, reject) => {
      this.resolveDone = resolve;
      this.rejectDone = reject;
    });
    // An ignored `done` must not become an unhandled rejection; whoever awaits it still sees the error.
    this.done.catch(() => undefined);
    void this.loop();
  }

  /** Watch requests made so far: one per server timeout, for tests and debugging. */
  get requests(): number {
    return this.requestCount;
  }

  /** The last version seen (an event's or a bookmark's). */
  get resourceVersion(): string {
    return this.lastResourceVersion;
  }

  stop(): void {
    this.finish(undefined);
  }

  /** Ends the watch with an error (also used by the store when it closes). */
  fail(error: StoreError): void {
    this.finish(error);
  }

  private finish(error: StoreError | undefined): void {
    if (this.ended) return;
    this.ended = true;
    if (this.timer) clearTimeout(this.timer);
    this.req?.destroy();
    this.p.onEnd();
    if (error) this.rejectDone(error);
    else this.resolveDone();
  }

  private async loop(): Promise<void> {
    // Never call the handler inside watch() itself.
    await Promise.resolve();
    try {
      const from = this.p.resourceVersion;
      this.lastResourceVersion = typeof from === 'string' ? from : await from((event) => this.deliver(event));
    } catch (e) {
      this.finish(e instanceof StoreError ? e : new StoreError('Unavailable', `watch of ${this.p.kind}: ${String(e)}`, { cause: e }));
      return;
    }
    while (!this.ended) {
      const started = Date.now();
      try {
        await this.once();
        // A server that ends watches at once (it should not) must not make this a busy loop.
        if (Date.now() - started < 1_000) await new Promise((r) => setTimeout(r, 1_000));
      } catch (e) {
        this.finish(
          e instanceof StoreError
            ? e
            : new StoreError('Unavailable', `watch of ${this.p.kind}: ${(e as Error).message ?? String(e)}`, { cause: e }),
        );
      }
    }
  }

  /** One watch request: resolves when the server ends it cleanly, rejects with the reason otherwise. */
  private async once(): Promise<void> {
    const { client, kind, namespace, timings } = this.p;
    const { group, version, plural } = resourceOf(kind);
    const url = new URL(`${client.server.replace(/\/$/, '')}/apis/${group}/${version}/namespaces/${namespace}/${plural}`);
    const timeoutSeconds = Math.round(timings.serverTimeoutSeconds * (1 + Math.random() * 0.2));
    url.searchParams.set('watch', 'true');
    url.searchParams.set('resourceVersion', this.lastResourceVersion);
    url.searchParams.set('allowWatchBookmarks', 'true');
    url.searchParams.set('timeoutSeconds', String(timeoutSeconds));
    if (this.p.labelSelector) url.searchParams.set('labelSelector', this.p.labelSelector);
    const what = `${kind} in ${namespace}`;
    const { agent, headers } = await client.requestOptions();
    if (this.ended) return;
    this.requestCount++;

    await new Promise<void>((resolve, reject) => {
      let settled = false;
      const settle = (e?: StoreError) => {
        if (settled) return;
        settled = true;
        if (this.timer) clearTimeout(this.timer);
        this.req?.destroy();
        this.req = undefined;
        if (e) reject(e);
        else resolve();
      };
      // Armed before the request: a server that never answers the request counts as silence too.
      const arm = () => {
        if (this.timer) clearTimeout(this.timer);
        this.timer = setTimeout(() => {
          settle(new StoreError('Unavailable', `watch of ${what}: no data for ${timings.inactivityMs} ms; connection presumed dead`));
        }, timings.inactivityMs);
        this.timer.unref();
      };
      arm();
      const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
      const req = send(url, { method: 'GET', agent, headers: { ...headers, Accept: 'application/json' } }, (res: IncomingMessage) => {
        arm();
        if (res.statusCode !== 200) {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (body += d));
          res.on('end', () => settle(storeErrorFromStatus(res.statusCode ?? 0, parseStatus(body), { verb: 'watch', what })));
          res.on('error', (e) => settle(unavailable(what, e)));
          return;
        }
        res.on('data', arm);
        res.on('error', (e) => settle(unavailable(what, e)));
        res.on('aborted', () => settle(new StoreError('Unavailable', `watch of ${what}: connection aborted`)));
        const lines = createInterface({ input: res, crlfDelay: Infinity });
        lines.on('line', (line) => {
          if (settled || this.ended || line.trim() === '') return;
          const error = this.handleLine(line, what);
          if (error) settle(error);
        });
        lines.on('error', (e) => settle(unavailable(what, e)));
        lines.on('close', () => settle());
      });
      this.req = req;
      req.on('error', (e) => settle(unavailable(what, e)));
      req.end();
    });
  }

  /** Hands an event to the caller's handler; a handler that throws ends the watch, as in the embedded store. */
  private deliver(event: WatchEvent<ResourceByKind[K]>): void {
    if (this.ended) return;
    try {
      this.p.onEvent(event);
    } catch (cause) {
      throw new StoreError('Unavailable', `watch of ${this.p.kind} ended: its event handler threw`, { cause });
    }
  }

  /** Applies one event line; returns the error that ends the watch, if it is one. */
  private handleLine(line: string, what: string): StoreError | undefined {
    let event: RawEvent;
    try {
      event = JSON.parse(line) as RawEvent;
    } catch (cause) {
      return new StoreError('Unavailable', `watch of ${what}: unparseable event`, { cause });
    }
    const rv = event.object?.metadata?.resourceVersion;
    switch (event.type) {
      case 'BOOKMARK':
        if (rv) this.lastResourceVersion = rv;
        return undefined;
      case 'ERROR': {
        const status = parseStatus(event.object);
        return storeErrorFromStatus(status?.code ?? 500, status, { verb: 'watch', what });
      }
      case 'ADDED':
      case 'MODIFIED':
      case 'DELETED': {
        if (rv) this.lastResourceVersion = rv;
        let object: ResourceByKind[K];
        try {
          object = decode(this.p.kind, event.object);
        } catch (err) {
          // Skipped rather than ending the watch: one malformed object must not blind every informer.
          this.p.logger.error({ kind: this.p.kind, err }, 'kube store: watch event skipped: object does not match its schema');
          return undefined;
        }
        try {
          this.deliver({ type: event.type, object });
        } catch (e) {
          return e as StoreError;
        }
        return undefined;
      }
      default:
        return new StoreError('Unavailable', `watch of ${what}: unexpected event type ${JSON.stringify(event.type)}`);
    }
  }
}

const unavailable = (what: string, cause: unknown) =>
  new StoreError('Unavailable', `watch of ${what}: ${(cause as Error)?.message ?? String(cause)}`, { cause });
