#!/usr/bin/env node
// Runs a TypeScript entry file without a build step: tsx registers its ESM loader, then we import the file.
import { register } from 'tsx/esm/api';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';

register();
const [entry, ...rest] = process.argv.slice(2);
if (!entry) { console.error('usage: run-ts <file.ts> [args]'); process.exit(2); }
process.argv = [process.argv[0], resolve(entry), ...rest];
await import(pathToFileURL(resolve(entry)).href);
