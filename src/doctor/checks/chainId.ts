import { CHAIN_IDS, CHAIN_NETWORK_NAMES } from '../../config/chains.ts';
import { result, shownUrl, type DoctorCheck } from '../types.ts';

/** The node answers for the chain the configuration names: a wrong URL signs operations for another chain's ids. */
export const chainIdCheck: DoctorCheck = {
  id: 'chain.id',
  summary: "eth_chainId equals the configured chainId (and the network's canonical one)",
  async run(ctx) {
    const { name, chainId, rpcUrl } = ctx.target.config;
    const answered = Number(await ctx.rpc('eth_chainId', []));
    if (answered !== chainId) {
      return [
        result(ctx, 'chain.id', 'fail', `${shownUrl(rpcUrl)} answers chain id ${answered}; the configuration says ${chainId}`, `point rpcUrl at a node of chain ${chainId}, or correct chainId if the node is the one you meant`),
      ];
    }
    const canonical = CHAIN_IDS[name];
    if (chainId !== canonical) {
      return [
        result(ctx, 'chain.id', 'warn', `chain id ${chainId}: "${name}" stands for ${CHAIN_NETWORK_NAMES[name]} (${canonical})`, `agents name chains by their canonical names (spec §1.9): serve ${CHAIN_NETWORK_NAMES[name]} under "${name}"`),
      ];
    }
    return [result(ctx, 'chain.id', 'ok', `chain id ${chainId}`)];
  },
};
