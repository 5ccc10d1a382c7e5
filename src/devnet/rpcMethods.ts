/**
 * What a JSON-RPC method does to a devnet chain, as the journal (journal.ts) needs to know it:
 * - `read`: changes no chain state; forwarded as is, not journaled;
 * - `send`: hands anvil a signed raw transaction (`params[0]`); journaled, and replayed by its hash;
 * - `write`: anything else, cheat methods included; journaled and replayed as it was.
 *
 * Reads are an allow-list, so that a method this list does not know (a new anvil cheat) is journaled rather
 * than lost. Filters and signatures with anvil's keys are reads: they hold nothing that a restart keeps.
 */
export type RpcMethodKind = 'read' | 'send' | 'write';

const SENDS: ReadonlySet<string> = new Set(['eth_sendRawTransaction', 'eth_sendRawTransactionSync']);

const READS: ReadonlySet<string> = new Set([
  // eth_: the chain, its blocks, transactions, receipts, logs and accounts
  'eth_accounts',
  'eth_blobBaseFee',
  'eth_blockNumber',
  'eth_call',
  'eth_callMany',
  'eth_chainId',
  'eth_coinbase',
  'eth_config',
  'eth_createAccessList',
  'eth_estimateGas',
  'eth_feeHistory',
  'eth_fillTransaction',
  'eth_gasPrice',
  'eth_getAccount',
  'eth_getAccountInfo',
  'eth_getBalance',
  'eth_getBlockByHash',
  'eth_getBlockByNumber',
  'eth_getBlockReceipts',
  'eth_getBlockTransactionCountByHash',
  'eth_getBlockTransactionCountByNumber',
  'eth_getCode',
  'eth_getLogs',
  'eth_getProof',
  'eth_getRawTransactionByHash',
  'eth_getStorageAt',
  'eth_getTransactionByBlockHashAndIndex',
  'eth_getTransactionByBlockNumberAndIndex',
  'eth_getTransactionByHash',
  'eth_getTransactionBySenderAndNonce',
  'eth_getTransactionCount',
  'eth_getTransactionReceipt',
  'eth_getUncleByBlockHashAndIndex',
  'eth_getUncleByBlockNumberAndIndex',
  'eth_getUncleCountByBlockHash',
  'eth_getUncleCountByBlockNumber',
  'eth_hashrate',
  'eth_maxPriorityFeePerGas',
  'eth_mining',
  'eth_protocolVersion',
  'eth_simulateV1',
  'eth_syncing',
  // filters live in anvil's memory only
  'eth_getFilterChanges',
  'eth_getFilterLogs',
  'eth_newBlockFilter',
  'eth_newFilter',
  'eth_newPendingTransactionFilter',
  'eth_uninstallFilter',
  // signatures with anvil's own keys: nothing is sent
  'eth_sign',
  'eth_signTransaction',
  'eth_signTypedData',
  'eth_signTypedData_v3',
  'eth_signTypedData_v4',
  'personal_sign',
  // the node
  'net_listening',
  'net_peerCount',
  'net_version',
  'web3_clientVersion',
  'web3_sha3',
  'txpool_content',
  'txpool_inspect',
  'txpool_status',
  'anvil_dumpState',
  'anvil_getAutomine',
  'anvil_getIntervalMining',
  'anvil_metadata',
  'anvil_nodeInfo',
  'hardhat_getAutomine',
  'hardhat_metadata',
  // traces of what is already mined
  'debug_getRawTransaction',
  'debug_traceCall',
  'debug_traceTransaction',
  'trace_block',
  'trace_filter',
  'trace_transaction',
  'ots_getApiLevel',
  'ots_getBlockDetails',
  'ots_getBlockDetailsByHash',
  'ots_getBlockTransactions',
  'ots_getContractCreator',
  'ots_getInternalOperations',
  'ots_getTransactionBySenderAndNonce',
  'ots_getTransactionError',
  'ots_hasCode',
  'ots_searchTransactionsAfter',
  'ots_searchTransactionsBefore',
  'ots_traceTransaction',
]);

export function rpcMethodKind(method: string): RpcMethodKind {
  if (READS.has(method)) return 'read';
  return SENDS.has(method) ? 'send' : 'write';
}
