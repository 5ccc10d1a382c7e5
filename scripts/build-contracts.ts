/**
 * Compiles contracts/*.sol with the pinned solc-js and writes src/devnet/artifacts/<Name>.json (or the folder of the
 * code that uses it, OWNERS below) =
 * { contractName, abi, bytecode, deployedBytecode }. The output is deterministic (sorted inputs, no metadata hash) so the
 * committed artifacts can be checked by re-running this script, and the devnet's CREATE2 addresses only move
 * when the code does, not when a comment does.
 */
import { readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
// solc-js ships no types; its wrapper exposes compile(json) and version().
// @ts-expect-error untyped CommonJS module
import solc from 'solc';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const contractsDir = join(root, 'contracts');
const outDir = join(root, 'src/devnet/artifacts');
/** Artifacts production code uses live beside it, not in the devnet's folder: the chain worker's simulation lens. */
const OWNERS: Readonly<Record<string, string>> = { SimulationLens: join(root, 'src/chain/artifacts') };
const EXPECTED_SOLC = '0.8.28';

interface SolcOutput {
  errors?: { severity: 'error' | 'warning' | 'info'; formattedMessage: string }[];
  contracts?: Record<string, Record<string, { abi: unknown[]; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }>>;
}

const version: string = solc.version();
if (!version.startsWith(`${EXPECTED_SOLC}+`)) throw new Error(`expected solc ${EXPECTED_SOLC}, got ${version}`);

const files = readdirSync(contractsDir).filter((f) => f.endsWith('.sol')).sort();
const input = {
  language: 'Solidity',
  sources: Object.fromEntries(files.map((f) => [f, { content: readFileSync(join(contractsDir, f), 'utf8') }])),
  settings: {
    optimizer: { enabled: true, runs: 200 },
    // anvil 1.7 defaults to the latest hardfork, which includes cancun (checked with `anvil --hardfork`).
    evmVersion: 'cancun',
    // No IPFS hash of the metadata: comments and whitespace must not change the bytecode or the addresses.
    metadata: { bytecodeHash: 'none' },
    outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } },
  },
};

const output = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput;
for (const e of output.errors ?? []) console.error(e.formattedMessage);
if ((output.errors ?? []).some((e) => e.severity === 'error')) process.exit(1);

for (const dir of [outDir, ...Object.values(OWNERS)]) mkdirSync(dir, { recursive: true });
for (const file of files) {
  for (const [contractName, c] of Object.entries(output.contracts?.[file] ?? {})) {
    // One artifact per file, the contract named after it (a file may add libraries and interfaces it uses).
    if (contractName !== file.replace(/\.sol$/, '')) continue;
    // Runtime code too: the simulation lens is never deployed, only put at an address by state override.
    const artifact = { contractName, abi: c.abi, bytecode: `0x${c.evm.bytecode.object}`, deployedBytecode: `0x${c.evm.deployedBytecode.object}` };
    writeFileSync(join(OWNERS[contractName] ?? outDir, `${contractName}.json`), `${JSON.stringify(artifact, null, 2)}\n`);
    console.log(`${contractName}: ${(c.evm.bytecode.object.length / 2).toFixed(0)} bytes of init code`);
  }
}
