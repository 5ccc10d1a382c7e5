#!/usr/bin/env node
// The single CLI entry (`agent-wallet <role|command>`); the TypeScript sources run through tsx's loader.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
