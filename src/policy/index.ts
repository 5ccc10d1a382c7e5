export { applicablePolicies } from './applicable.ts';
export { approvalOf, type Approval } from './approvals.ts';
export { evaluatePolicies, refusedBeforePlanning, type Acceptance, type PolicyDecision } from './evaluate.ts';
export type { PolicyFacts } from './facts.ts';
export { compileRules, type RuleError } from './rules.ts';
export { policyFailure, requestFacts } from './request.ts';
