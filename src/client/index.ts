export { API_KEY_ENV, BASE_URL_ENV, createClient, DEFAULT_BASE_URL, type AgentWalletClient, type ClientOptions, type ExecuteInput, type ExecuteOptions, type SimulateInput, type WaitOptions } from './client.ts';
export { ApiError } from './errors.ts';
