/**
 * Any JSON answer as indented text for people (the protocol reads and simulations): amounts as `1.5 (raw 1500000)`,
 * tokens as `USDC 0x…`, lists as `-` items. `--json` prints the answer itself instead.
 */
export function render(value: unknown, indent = ''): string {
  if (value === null || value === undefined) return '-';
  if (typeof value !== 'object') return String(value);
  if (Array.isArray(value)) {
    if (value.length === 0) return '(none)';
    return value.map((v) => `\n${indent}- ${render(v, `${indent}  `).replace(/^\n\s*/, '')}`).join('');
  }
  const o = value as Record<string, unknown>;
  if ('raw' in o && 'formatted' in o && 'decimals' in o) return `${o.formatted} (raw ${o.raw})`;
  if ('symbol' in o && 'address' in o && 'decimals' in o && Object.keys(o).length === 3) return `${o.symbol} ${o.address}`;
  const width = Math.max(...Object.keys(o).map((k) => k.length)) + 1;
  return Object.entries(o)
    .map(([k, v]) => {
      const shown = render(v, `${indent}  `);
      // Nested objects and lists start on their own lines; everything else stays on the key's line.
      return shown.startsWith('\n') ? `\n${indent}${k}:${shown}` : `\n${indent}${`${k}:`.padEnd(width + 1)} ${shown}`;
    })
    .join('');
}

export const renderBlock = (value: unknown): string => `${render(value).replace(/^\n/, '')}\n`;
