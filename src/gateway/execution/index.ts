export { createOrReplay, type CreatedOrReplayed } from './createOrReplay.ts';
export { specOf, type ExecutionInput } from './input.ts';
export { simulateExecution } from './simulate.ts';
export { submitExecution, type SubmitOptions, type Submitted } from './submit.ts';
export { attachPayment, type AttachedPayment } from './attachPayment.ts';
export { paymentAnswer, type PaymentAnswer } from './paymentAnswer.ts';
export { executeAndAnswer, paymentOf, type ExecutionHeaders } from './respond.ts';
export { requestAskedAgain } from './askedAgain.ts';
export { refuseActionByPolicy, refuseByPolicy } from './policyCheck.ts';
