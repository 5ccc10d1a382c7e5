export { API_KEY_ENV, BASE_URL_ENV, createClient, DEFAULT_BASE_URL, type AgentWalletClient, type ClientOptions, type ExecuteInput, type ExecuteOptions, type SimulateInput, type WaitOptions } from './client.ts';
export { ApiError } from './errors.ts';
export { defaultJournalPath, JOURNAL_ENV, openJournal, type Journal, type JournalRecord } from './journal.ts';
export { payQuote, PayError, type MadePayment, type Payer, type PaymentChoice, type PaymentMethod } from './pay.ts';
export { payAndResubmit, type Paid, type PayableCall } from './payAndResubmit.ts';
export { clientIdOf, requestIdForIdempotencyKey } from './requestIds.ts';
export { createFaucetClient, DEFAULT_FAUCET_URL, FAUCET_URL_ENV, type Drip } from './faucet.ts';
