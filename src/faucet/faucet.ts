import { formatUnits } from 'viem';
import { CHAIN_NETWORK_NAMES, type ChainName } from '../config/chains.ts';
import { fieldError, HttpError } from '../http/errors.ts';
import type { FaucetChain, FaucetSettings } from './config.ts';
import { FaucetError, type FaucetErrorCode } from './errors.ts';
import type { DripLimits } from './limits.ts';
import type { DripBody, DripResult, FaucetInfo } from '../api/http/faucet.ts';
import type { TokenSender } from './sender.ts';

/** The faucet's one operation and its description, shared by the JSON API and the page. */
export interface Faucet {
  info: FaucetInfo;
  chain(name: ChainName): FaucetChain | undefined;
  /** Validated input in, a drip out; refusals and failures are HttpErrors (400, 429, 503) with our codes. */
  drip(body: DripBody, clientIp: string): Promise<DripResult>;
}

/** Retry-After of each failure, in seconds: soon for a passing hiccup, later for what needs an operator. */
const RETRY_AFTER_SECONDS: Readonly<Record<FaucetErrorCode, number>> = {
  chain_unavailable: 5,
  busy: 2,
  closed: 2,
  receipt_timeout: 30,
  transfer_failed: 5,
  faucet_empty: 600,
};

function unavailable(e: FaucetError): HttpError {
  const seconds = String(RETRY_AFTER_SECONDS[e.code]);
  // The service's code for a process that is stopping; the others are the faucet's own.
  const code = e.code === 'closed' ? 'service_unavailable' : e.code;
  return new HttpError(503, code, e.shortMessage, { details: e.details, headers: { 'retry-after': seconds }, cause: e });
}

function rateLimited(limit: 'address' | 'client', chain: ChainName, seconds: number): HttpError {
  const message =
    limit === 'address'
      ? `this address has had its drips of aUSD on ${chain} for now; retry after ${seconds} s`
      : `your client address has asked for too many drips; retry after ${seconds} s`;
  return new HttpError(429, 'rate_limited', message, {
    details: { limit, retry_after_seconds: seconds },
    headers: { 'retry-after': String(seconds) },
  });
}

export function createFaucet(deps: { settings: FaucetSettings; sender: TokenSender; limits: DripLimits }): Faucet {
  const { settings, sender, limits } = deps;
  const chains = new Map(settings.chains.map((c) => [c.name, c]));
  const served = settings.chains.map((c) => c.name).join(', ');
  const serviceAccounts = new Set(settings.serviceAccounts.map((a) => a.toLowerCase()));
  const notAllowed = (a: string) => serviceAccounts.has(a.toLowerCase()) || sender.addresses().some((x) => x.toLowerCase() === a.toLowerCase());
  const info: FaucetInfo = {
    token: 'aUSD',
    amount: settings.amount,
    faucet_address: sender.address,
    default_chain: 'ethereum',
    chains: settings.chains.map((c) => ({
      chain: c.name,
      network: CHAIN_NETWORK_NAMES[c.name],
      chain_id: c.chainId,
      token_address: c.token.address,
      decimals: c.token.decimals,
      amount_raw: String(c.amountRaw),
    })),
    limits: {
      per_address: { burst: settings.limits.perAddress.burst, every_seconds: settings.limits.perAddress.everySeconds },
      per_client: { burst: settings.limits.perClient.burst, every_seconds: settings.limits.perClient.everySeconds },
    },
  };

  return {
    info,
    chain: (name) => chains.get(name),
    async drip({ address, chain: name }, clientIp) {
      const chain = chains.get(name);
      if (!chain) throw fieldError('unsupported_chain', 'chain', `must be one of the chains this faucet serves: ${served}`);
      // Before the limits: a refused address uses up no one's drips.
      if (notAllowed(address)) {
        throw fieldError(
          'address_not_allowed',
          'address',
          "is one of the service's own accounts (a treasury, an executor, the settler, the paymaster signer or this faucet): the faucet sends only to agents' wallets",
        );
      }
      const decision = await limits.take(name, address, clientIp);
      if (!decision.allowed) throw rateLimited(decision.limit, name, decision.retryAfterSeconds);
      let receipt;
      try {
        receipt = await sender.send(name, address);
      } catch (e) {
        if (e instanceof FaucetError) throw unavailable(e);
        throw e;
      }
      const { decimals } = chain.token;
      return {
        chain: name,
        address,
        token: 'aUSD',
        amount: formatUnits(chain.amountRaw, decimals),
        amount_raw: String(chain.amountRaw),
        tx_hash: receipt.txHash,
        block_number: String(receipt.blockNumber),
        balance: receipt.balanceRaw === null ? null : formatUnits(receipt.balanceRaw, decimals),
        balance_raw: receipt.balanceRaw === null ? null : String(receipt.balanceRaw),
      };
    },
  };
}
