/**
 * What the admin commands share: their description, argument parsing
 * (`--data-dir` as the server reads it), and the errors that set the exit
 * code: 0 done (check: clean), 1 refused or failed (check: faults found),
 * 2 bad arguments or a directory that is not a data directory.
 */
import { parseArgs } from 'node:util';

export interface AdminCommand {
  name: string;
  /** One line, for `gnocchi-ts --help`. */
  summary: string;
  /** `gnocchi-ts NAME --help`. */
  help: string;
  /** Runs with the arguments after the command name; resolves to the exit code. */
  run(argv: string[]): Promise<number>;
}

/** Bad arguments: exit 2. */
export class UsageError extends Error {}

/** The directory is not a data directory this release can work on: exit 2. */
export class NotADataDir extends Error {
  constructor(
    dir: string,
    readonly reason: string,
  ) {
    super(`${dir} is not a gnocchi-ts data directory: ${reason}`);
  }
}

/** The command would lose data or disturb a server, so it does nothing: exit 1. */
export class Refused extends Error {}

export function exitCodeOf(err: unknown): number | undefined {
  if (err instanceof UsageError || err instanceof NotADataDir) return 2;
  if (err instanceof Refused) return 1;
  return undefined;
}

export const DATA_DIR_HELP = `  --data-dir D   the data directory (default: $GNOCCHI_DATA_DIR, else ./data, as for serve)`;
export const PROGRESS_HELP =
  'Progress goes to stderr: a bar on a terminal, else a line every 2 s ($GNOCCHI_PROGRESS_INTERVAL ms).';

type Flags = Record<string, { type: 'string' | 'boolean' }>;
type Parsed<F extends Flags> = { [K in keyof F]?: F[K]['type'] extends 'string' ? string : boolean } & { 'data-dir': string; help?: boolean };

/**
 * The flags of a command (plus --data-dir and --help); unknown ones and
 * stray arguments are usage errors.
 */
export function parseFlags<F extends Flags>(argv: string[], flags: F): Parsed<F> {
  try {
    const { values } = parseArgs({
      args: argv,
      options: { ...flags, 'data-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: false,
    });
    const given = values as Record<string, string | boolean | undefined>;
    return { ...given, 'data-dir': given['data-dir'] ?? (process.env.GNOCCHI_DATA_DIR || './data') } as Parsed<F>;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** A flag the command cannot do without. */
export function required(value: string | undefined, flag: string): string {
  if (value === undefined || value === '') throw new UsageError(`--${flag} is required`);
  return value;
}
