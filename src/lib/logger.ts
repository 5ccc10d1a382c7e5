/**
 * The one logging interface of the service: pino's `(fields, message)` signature, so a pino logger fits as is,
 * and small enough that a test can fake it. Every layer (store, locks, runtime, chain worker, gateway) takes a
 * `Logger`; only the process entry points (src/roles) create pino loggers.
 */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  /** A logger that adds `bindings` to every line (pino has it; fakes may leave it out). */
  child?(bindings: Record<string, unknown>): Logger;
}

/** `log` with `bindings` on every line: its own child() where it has one. */
export function childLogger(log: Logger, bindings: Record<string, unknown>): Logger {
  if (log.child) return log.child(bindings);
  const bound = (level: 'debug' | 'info' | 'warn' | 'error') => (obj: object, msg?: string) => log[level]({ ...bindings, ...obj }, msg);
  return { debug: bound('debug'), info: bound('info'), warn: bound('warn'), error: bound('error') };
}

const noop = (): void => {};

/** Says nothing: the default of libraries whose caller gave no logger and expects silence (the chain worker). */
export const silentLogger: Logger = { debug: noop, info: noop, warn: noop, error: noop };

/** Errors and warnings to stderr as one JSON line each; debug and info are dropped. */
export const stderrLogger: Logger = {
  debug: noop,
  info: noop,
  warn: (obj, msg) => write('warn', obj, msg),
  error: (obj, msg) => write('error', obj, msg),
};

function write(level: string, obj: object, msg?: string): void {
  const fields = Object.fromEntries(
    Object.entries(obj).map(([k, v]) => [k, v instanceof Error ? { name: v.name, message: v.message } : v]),
  );
  process.stderr.write(JSON.stringify({ level, time: new Date().toISOString(), msg, ...fields }) + '\n');
}
