/** The logging the runtime needs; pino's (object, message) signature, so a pino logger fits as is. */
export interface Logger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** Errors and warnings to stderr as one JSON line each; info is dropped. */
export const stderrLogger: Logger = {
  info: () => undefined,
  warn: (obj, msg) => write('warn', obj, msg),
  error: (obj, msg) => write('error', obj, msg),
};

function write(level: string, obj: object, msg?: string): void {
  const fields = Object.fromEntries(
    Object.entries(obj).map(([k, v]) => [k, v instanceof Error ? { name: v.name, message: v.message } : v]),
  );
  process.stderr.write(JSON.stringify({ level, time: new Date().toISOString(), msg, ...fields }) + '\n');
}
