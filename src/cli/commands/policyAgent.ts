import { bool, type Command } from '../command.ts';
import { BATCH_OPTION, callBodyOf, CALL_OPTIONS } from '../callsInput.ts';
import { agentIdOf, AGENT_OPTIONS, clientContext } from '../context.ts';
import { EXIT, fields, printError, printJson } from '../output.ts';
import type { PolicyEvaluation } from '../../api/http/index.ts';

/** `policy show`: the policies that govern an agent of this API key (GET /policy), as the agent sees them. */
export const policyShowCommand: Command = {
  name: 'policy show',
  summary: "the operator's policies that govern an agent of this key",
  usage: 'policy show --agent-id ID [--json]',
  description:
    'Lists the AgentPolicies that apply to the agent, in the order they are judged (docs/policies.md): the key-level\n' +
    'policy first, with each one\'s kill switch, validity window and rules. An API key reads them; only an operator writes them.',
  options: AGENT_OPTIONS,
  examples: ['agent-wallet policy show --agent-id bot-1'],
  async run(values) {
    const { client } = clientContext(values);
    const json = bool(values, 'json');
    const r = await client.policy(agentIdOf(values));
    if (!r.ok) return printError(r.error, json);
    if (json) printJson(r.value);
    else if (r.value.policies.length === 0) process.stdout.write(`no policy governs ${r.value.agent_id}: the key allows what its payment mode allows\n`);
    else
      for (const p of r.value.policies) {
        const scope = p.applies_to ? `${p.applies_to.match} ${p.applies_to.agent_id}` : 'every agent of the key';
        const budgets = p.budgets.map((b) => `  budget ${b.name} ${budgetFigures(b)} per ${b.window}`).join('');
        process.stdout.write(`${p.name}  ${p.suspended ? 'SUSPENDED' : 'active'}  ${scope}  ${p.rules.map((x) => `${x.action} ${x.name}`).join(', ') || 'no rules: accepts nothing'}${budgets}\n`);
      }
    return 0;
  },
};

/** `1/2` executions, `3.1/50 USD`, or both: spent (as last summed, `?` before the first) over the limit. */
function budgetFigures(b: { usd: string | null; count: number | null; spent: { usd: string; count: number } | null }): string {
  const parts = [];
  if (b.count !== null) parts.push(`${b.spent?.count ?? '?'}/${b.count}`);
  if (b.usd !== null) parts.push(`${b.spent?.usd ?? '?'}/${b.usd} USD`);
  return parts.join(' ');
}

/** `policy test`: a dry run of an execute body against the agent's policies (POST /policy/evaluate). */
export const policyTestCommand: Command = {
  name: 'policy test',
  summary: 'would the agent\'s policies accept this call (or batch)? Nothing is sent',
  usage: 'policy test --agent-id ID [--chain CHAIN] (--to ADDRESS (--data HEX | --abi SIG --function NAME [ARG...]) [--value WEI] | --file FILE|-) [--json]',
  description:
    'Judges the call (or the batch of --file) as POST /execute would, against the agent\'s policies, and prints the\n' +
    'decision and the rule that decides it. Nothing is created or paid; the calls are simulated only when an outflow or\n' +
    'USD rule applies, and then what leaves the wallet and its USD value are printed. Exit 0 when accepted, 3 when refused.',
  options: { ...CALL_OPTIONS, ...BATCH_OPTION },
  examples: ["agent-wallet policy test --agent-id bot-1 --chain base --to 0xCounter --abi 'function increment()' --function increment"],
  async run(values, positionals) {
    const { client } = clientContext(values);
    const json = bool(values, 'json');
    const r = await client.evaluatePolicy((await callBodyOf(values, positionals)) as never);
    if (!r.ok) return printError(r.error, json);
    const d = r.value;
    if (json) printJson(d);
    else
      process.stdout.write(
        fields([
          ['decision', d.decision],
          ...(d.error ? ([['error', d.error]] as [string, string][]) : []),
          ...(d.policy ? ([['policy', d.policy]] as [string, string][]) : []),
          ...(d.decision === 'deny' ? ([['rule', d.rule ?? '(none accepted it)']] as [string, string][]) : []),
          ['reason', d.reason],
          ...d.accepted.map((a): [string, string] => [`call ${a.call_index}`, `accepted by ${a.policy}/${a.rule}`]),
          ...(d.valuation ? ([['value', valueText(d.valuation)]] as [string, string][]) : []),
        ]),
      );
    return d.decision === 'allow' ? 0 : EXIT.refused;
  },
};

/** The dry-run's valuation in one line: its total, or why it has none. */
function valueText(v: NonNullable<PolicyEvaluation['valuation']>): string {
  if (!v.outflows_known) return `unknown: ${v.unavailable ?? 'the outflows were not traced'}`;
  const unpriced = v.lines.find((l) => l.unpriced !== null);
  if (unpriced) return `unpriced: ${unpriced.asset} (${unpriced.unpriced})`;
  return `${v.total_usd} USD${v.unbounded ? ' and an unbounded allowance' : ''} (${v.lines.length} line${v.lines.length === 1 ? '' : 's'})`;
}
