import type { LookupFunction, Socket } from 'node:net';
import { AgentWalletError } from '../errors.ts';
import { blockedCategory, parseIp, type BlockedCategory } from './addresses.ts';
import { createDnsResolver } from './dnsResolver.ts';

/**
 * Where webhooks may go, checked twice: when the execute call names the callback_url (a refused URL is a 400,
 * so the caller learns at once), and again when the sender connects, on the address it connects to. The
 * second check is what stops DNS rebinding: a name that resolved to a public address at request time and
 * resolves to 169.254.169.254 an hour later, at the retry, is refused then. Every name goes through one
 * resolver (a seam: tests point a name at a private address), and the connection is made to exactly the
 * addresses that resolver returned and this module approved.
 */

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

/** The default: DNS through c-ares with the system's nameservers, off the thread pool (see dnsResolver.ts). */
export const systemResolver: Resolver = createDnsResolver();

export interface EgressPolicy {
  /**
   * Development only: allow loopback destinations (127.0.0.0/8, ::1), for a receiver on the same machine as
   * the devnet. Every other private range stays refused.
   */
  allowLoopback?: boolean;
  /**
   * Only loopback destinations: what a plain http:// callback may reach (development, under allowLoopback).
   * Everything else, public addresses included, is refused.
   */
  loopbackOnly?: boolean;
  resolver?: Resolver;
}

/** Why an address may not be reached: its kind, or, under `loopbackOnly`, that it is not loopback. */
export type RefusedCategory = BlockedCategory | 'not_loopback';

export type EgressRefusalCode = 'blocked_address' | 'unresolvable' | 'invalid_callback_url';

export class EgressRefusedError extends AgentWalletError<EgressRefusalCode> {
  override readonly name = 'EgressRefusedError';
}

/** Why `address` may not be reached under `policy`, or undefined. */
export function refusedCategory(address: string, policy: EgressPolicy): RefusedCategory | undefined {
  const category = blockedCategory(address);
  if (policy.loopbackOnly === true && category !== 'loopback') return category ?? 'not_loopback';
  return category === 'loopback' && policy.allowLoopback === true ? undefined : category;
}

const DESCRIBED: Readonly<Record<RefusedCategory, string>> = {
  not_loopback: 'an address other than loopback (plain http:// goes to this machine only)',
  loopback: 'a loopback address',
  private: 'a private address',
  link_local: 'a link-local address',
  cgnat: 'a carrier-grade NAT (shared) address',
  multicast: 'a multicast address',
  unspecified: 'an unspecified address',
  metadata: 'a cloud metadata address',
  reserved: 'a reserved address',
};

const NO_SUCH_NAME = new Set(['ENOTFOUND', 'ENODATA', 'ENONAME']);

/**
 * The addresses a host (a name or an IP literal) may be reached at: all it resolves to, when none is refused.
 * A name with one refused address among others is refused whole: which of them a connection would use is not
 * ours to predict. The error names the kind of address, never the address (it could tell a caller about the
 * internal network).
 */
export async function resolveAllowed(host: string, policy: EgressPolicy): Promise<ResolvedAddress[]> {
  const literal = parseIp(host);
  const addresses: ResolvedAddress[] = literal
    ? [{ address: host.replace(/^\[|\]$/g, ''), family: literal.family }]
    : await (policy.resolver ?? systemResolver)(host).catch((e: unknown) => {
        const code = (e as NodeJS.ErrnoException)?.code;
        if (code !== undefined && NO_SUCH_NAME.has(code)) {
          throw new EgressRefusedError('unresolvable', `${host} does not resolve`, { cause: e });
        }
        throw e;
      });
  if (addresses.length === 0) throw new EgressRefusedError('unresolvable', `${host} does not resolve`);
  for (const a of addresses) {
    const category = refusedCategory(a.address, policy);
    if (category !== undefined) {
      throw new EgressRefusedError('blocked_address', `${literal ? 'is' : 'resolves to'} ${DESCRIBED[category]}`, {
        details: { category },
      });
    }
  }
  return addresses;
}

/** The URL's host as net.connect takes it: brackets of an IPv6 literal removed. */
export const hostOf = (url: URL): string => url.hostname.replace(/^\[|\]$/g, '');

/** Whether a URL's host is a loopback one by its spelling: `localhost` (RFC 6761) or an IPv4 literal in 127/8. */
export const isLoopbackHost = (url: URL): boolean => {
  const host = hostOf(url);
  return host === 'localhost' || blockedCategory(host) === 'loopback';
};

/** The setting that allows loopback receivers, as the refusals name it in each layout. */
export const EMBEDDED_LOOPBACK_SETTING = 'start the service with --allow-loopback-webhooks';
export const CLUSTER_LOOPBACK_SETTING = "set webhooks.allowLoopback in the service's config";

export interface CallbackCheckOptions extends EgressPolicy {
  /**
   * How a refusal of a loopback receiver names the development setting that would allow it (the embedded
   * flag or the cluster config's), so a person trying webhooks locally learns what to turn on. An operator
   * setting either way: nothing an API caller sends can change it.
   */
  loopbackSetting?: string;
  /** How long the request-time lookup may take (default 2 s); past it the URL is accepted, checked at connect time. */
  resolveTimeoutMs?: number;
  /**
   * Request-time lookups in flight at once (default 64). Past it a named host is accepted unchecked and the
   * connect-time check decides: a flood of made-up names must not queue sockets and memory without bound.
   */
  maxLookupsInFlight?: number;
}

export interface CallbackGuard {
  /** undefined when the callback URL may be used; else why not (the 400's message, after "callback_url "). */
  check(url: string): Promise<string | undefined>;
}

/**
 * The request-time check of POST /execute. A name that does not exist is refused (nothing could ever be
 * delivered); a resolver that fails otherwise or is slow does not fail the execute: the connect-time check
 * still guards the delivery.
 */
export function createCallbackGuard(opts: CallbackCheckOptions = {}): CallbackGuard {
  const timeoutMs = opts.resolveTimeoutMs ?? 2_000;
  const maxInFlight = opts.maxLookupsInFlight ?? 64;
  let inFlight = 0;
  return {
    async check(raw) {
      let url: URL;
      try {
        url = new URL(raw);
      } catch {
        return 'must be an absolute https:// URL';
      }
      const setting = opts.loopbackSetting ?? 'run the service with the development setting allowLoopback';
      // Plain http:// only to a receiver on this machine, in development: the payload and its signature would
      // cross any other network in the clear.
      const plain = url.protocol === 'http:';
      if (plain && !(isLoopbackHost(url) && opts.allowLoopback === true)) {
        return isLoopbackHost(url)
          ? `is a plain http:// loopback receiver: allowed in development only; to try webhooks locally, ${setting}`
          : 'must be an https:// URL (plain http:// only to a loopback receiver, in development)';
      }
      if (!plain && url.protocol !== 'https:') return 'must be an https:// URL';
      const policy: EgressPolicy = plain ? { ...opts, loopbackOnly: true } : opts;
      const host = hostOf(url);
      const needsLookup = parseIp(host) === undefined;
      if (needsLookup && inFlight >= maxInFlight) return undefined; // the connect-time check decides
      if (needsLookup) inFlight += 1;
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), timeoutMs);
        timer.unref();
      });
      try {
        await Promise.race([resolveAllowed(host, policy), timedOut]);
        return undefined; // allowed, or not known in time: the connect-time check decides then
      } catch (e) {
        if (e instanceof EgressRefusedError) {
          const loopback = (e.details as { category?: string } | undefined)?.category === 'loopback';
          return loopback ? `${e.shortMessage}: a receiver on this machine is allowed in development only; to try webhooks locally, ${setting}` : e.shortMessage;
        }
        return undefined;
      } finally {
        clearTimeout(timer);
        if (needsLookup) inFlight -= 1;
      }
    },
  };
}

/**
 * A `lookup` for net/tls connections that resolves through the policy's resolver and hands the socket only
 * approved addresses: the connect-time check.
 */
export function guardedLookup(policy: EgressPolicy): LookupFunction {
  return (hostname, options, callback) => {
    resolveAllowed(hostname, policy).then(
      (addresses) => {
        const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
        if (wanted.length === 0) {
          callback(Object.assign(new Error(`${hostname} has no IPv${options.family} address`), { code: 'ENOTFOUND' }), '', 0);
        } else if (options.all) {
          callback(null, wanted);
        } else {
          callback(null, wanted[0]!.address, wanted[0]!.family);
        }
      },
      (e: unknown) => callback(e as NodeJS.ErrnoException, '', 0),
    );
  };
}

/**
 * Checks the address a socket is connected to (before any HTTP byte is written, or now for a reused
 * keep-alive socket) and destroys it when refused: the last line, behind the lookup and the literal check.
 */
export function guardSocket(socket: Socket, policy: EgressPolicy): void {
  const check = () => {
    const remote = socket.remoteAddress;
    const category = remote === undefined ? 'unspecified' : refusedCategory(remote, policy);
    if (category !== undefined) {
      socket.destroy(new EgressRefusedError('blocked_address', `connected to ${DESCRIBED[category]}`, { details: { category } }));
    }
  };
  if (socket.connecting) socket.once('connect', check);
  else check();
}
