/** The log calls the chain worker makes: pino's `(fields, message)` shape, so a pino logger fits as is. */
export interface ChainLogger {
  debug(fields: Record<string, unknown>, msg: string): void;
  info(fields: Record<string, unknown>, msg: string): void;
  warn(fields: Record<string, unknown>, msg: string): void;
  error(fields: Record<string, unknown>, msg: string): void;
}

const noop = (): void => {};
export const silentLogger: ChainLogger = { debug: noop, info: noop, warn: noop, error: noop };
