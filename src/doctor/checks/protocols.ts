import { isAddress, zeroAddress, type Address } from 'viem';
import { result, type CheckResult, type DoctorCheck } from '../types.ts';
import { hasCode } from './contracts.ts';

/** Every address of a protocol section with its path (`pool`, `markets[0].comet`); the zero address (native coin, no hooks) is left out. */
export function addressesOf(section: unknown, path = ''): { path: string; address: Address }[] {
  if (typeof section === 'string') return isAddress(section, { strict: false }) && section.toLowerCase() !== zeroAddress ? [{ path, address: section }] : [];
  if (Array.isArray(section)) return section.flatMap((v, i) => addressesOf(v, `${path}[${i}]`));
  if (section !== null && typeof section === 'object') return Object.entries(section).flatMap(([k, v]) => addressesOf(v, path === '' ? k : `${path}.${k}`));
  return [];
}

/**
 * Each configured protocol family's contracts have code on this chain. The family's own schema checked the
 * shape when the configuration was read; this checks the chain has what the addresses name.
 */
export const protocolsCheck: DoctorCheck = {
  id: 'protocols',
  summary: "every address in a chain's protocols sections has code",
  async run(ctx) {
    const sections = Object.entries(ctx.target.config.protocols ?? {});
    if (sections.length === 0) return [result(ctx, 'protocols', 'ok', 'no protocol configured on this chain')];
    return Promise.all(
      sections.map(async ([family, section]): Promise<CheckResult> => {
        const addresses = addressesOf(section);
        const empty = (await Promise.all(addresses.map(async (a) => ((await hasCode(ctx, a.address)) ? undefined : a)))).filter((a) => a !== undefined);
        if (empty.length > 0) {
          return result(
            ctx,
            `protocols.${family}`,
            'fail',
            `no code at ${empty.map((a) => `${a.path} ${a.address}`).join(', ')}`,
            `correct protocols.${family} for this chain (docs/protocols/ lists the verified testnet deployments), or remove the section: the family is then not served here`,
          );
        }
        return result(ctx, `protocols.${family}`, 'ok', `${addresses.length} contracts, each with code`);
      }),
    );
  },
};
