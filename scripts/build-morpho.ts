/**
 * Compiles Morpho Blue from the sources npm ships (@morpho-org/morpho-blue 1.0.0) with Morpho's own settings
 * (its foundry.toml: solc 0.8.19, via-IR, optimizer runs 999999, evmVersion paris, no metadata hash) and writes
 * src/devnet/protocols/morphoBlue/artifacts/{Morpho,OracleMock,IrmMock}.json = { contractName, abi, bytecode }.
 *
 * The output is deterministic (sorted sources, no metadata hash): the committed artifacts are checked by
 * compiling again (morphoBlue.test.ts runs this script with `--out <dir>` and compares the files).
 *
 * Usage: node bin/run-ts.js scripts/build-morpho.ts [--out <dir>]
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
// solc-js ships no types; its wrapper exposes compile(json) and version(). The alias package pins Morpho's 0.8.19.
// @ts-expect-error untyped CommonJS module
import solc from 'solc-0.8.19';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const packageDir = join(root, 'node_modules/@morpho-org/morpho-blue');
const EXPECTED_SOLC = '0.8.19';
const EXPECTED_MORPHO = '1.0.0';
/** The contracts the devnet deploys, by source unit (named as in Morpho's repository, relative to its root). */
const WANTED: Record<string, string> = {
  'src/Morpho.sol': 'Morpho',
  'src/mocks/OracleMock.sol': 'OracleMock',
  'src/mocks/IrmMock.sol': 'IrmMock',
};

interface SolcOutput {
  errors?: { severity: 'error' | 'warning' | 'info'; formattedMessage: string }[];
  contracts?: Record<string, Record<string, { abi: unknown[]; evm: { bytecode: { object: string } } }>>;
}

const { values } = parseArgs({ options: { out: { type: 'string' } } });
const outDir = resolve(values.out ?? join(root, 'src/devnet/protocols/morphoBlue/artifacts'));

const version: string = solc.version();
if (!version.startsWith(`${EXPECTED_SOLC}+`)) throw new Error(`expected solc ${EXPECTED_SOLC} (package solc-0.8.19), got ${version}`);
const pkg = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string };
if (pkg.version !== EXPECTED_MORPHO) throw new Error(`expected @morpho-org/morpho-blue ${EXPECTED_MORPHO}, got ${pkg.version}`);

/** Every .sol file under dir, as paths relative to the package root, sorted (the input must not depend on readdir order). */
function solidityFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.sol'))
    .map((f) => relative(packageDir, join(dir, f)).split('\\').join('/'))
    .sort();
}

const files = solidityFiles(join(packageDir, 'src'));
const input = {
  language: 'Solidity',
  sources: Object.fromEntries(files.map((f) => [f, { content: readFileSync(join(packageDir, f), 'utf8') }])),
  settings: {
    viaIR: true,
    optimizer: { enabled: true, runs: 999_999 },
    evmVersion: 'paris',
    // No hash of the metadata: the bytecode (and the CREATE2 addresses) depend on the code alone.
    metadata: { bytecodeHash: 'none' },
    // Only the three contracts get code generated (via-IR is slow: the mocks we do not deploy would add to it).
    outputSelection: Object.fromEntries(Object.entries(WANTED).map(([file, name]) => [file, { [name]: ['abi', 'evm.bytecode.object'] }])),
  },
};

const started = performance.now();
const output = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput;
for (const e of output.errors ?? []) console.error(e.formattedMessage);
if ((output.errors ?? []).some((e) => e.severity === 'error')) process.exit(1);

mkdirSync(outDir, { recursive: true });
for (const [file, contractName] of Object.entries(WANTED)) {
  const c = output.contracts?.[file]?.[contractName];
  if (!c?.evm.bytecode.object) throw new Error(`solc produced no bytecode for ${contractName} (${file})`);
  const artifact = { contractName, abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` };
  writeFileSync(join(outDir, `${contractName}.json`), `${JSON.stringify(artifact, null, 2)}\n`);
  console.log(`${contractName}: ${c.evm.bytecode.object.length / 2} bytes of init code`);
}
console.log(`compiled with solc ${version} in ${Math.round(performance.now() - started)} ms`);
