/**
 * Codes for the names that repeat across records: a collector's resources
 * each name the same few metrics (`cpu.usage@region=r0`), and a resource's
 * record held each name in full (engine/resource-records.ts), ~19 of a
 * time-major series' ~80 bytes; they all have the same type and creator
 * too. A record now holds a name's code (a byte or two) and two databases
 * hold each distinct name once: name_codes (code -> name) for reads and
 * codes_by_name (name -> code) for writes. Metric names, resource types,
 * creators and archive policies share the codes: a code only stands for a
 * text.
 *
 * A code, once given, names the same name for good: codes are never freed,
 * and none is given twice, not even one given by a write that rolled back
 * (the next code is past every code this process gave or read). So a code
 * read once is known for the process's life, whatever the transaction it
 * was read in. A name's code found by a write is kept for the next writes
 * only once that write committed (see writing): one given by a write that
 * rolled back is not in the databases.
 */
import type { Database } from 'lmdb';

export class NameCodes {
  /** Every code read or given: never stale (codes are never given twice). */
  private readonly names = new Map<number, string>();
  /** Codes of committed names. */
  private readonly committed = new Map<string, number>();
  /** Codes given by the running write, committed when it returns (see writing). */
  private readonly pending = new Map<string, number>();
  private highest = 0;
  private depth = 0;

  /** Either absent: a directory without codes, opened read-only. */
  constructor(
    readonly byCode: Database<string, number> | undefined,
    readonly byName: Database<number, string> | undefined,
  ) {}

  /**
   * The code of `name`, given one if it has none; inside a write
   * transaction. Kept for later writes once the write, run through
   * `writing`, committed: what a write reads is of its own transaction,
   * which may yet roll back.
   */
  code(name: string): number {
    const known = this.committed.get(name) ?? this.pending.get(name);
    if (known !== undefined) return known;
    const { byCode, byName } = this;
    if (byCode === undefined || byName === undefined) throw new Error('name codes are not writable in a directory opened read-only');
    let code = byName.get(name);
    if (code === undefined) {
      const [last] = byCode.getKeys({ reverse: true, limit: 1 });
      code = Math.max(this.highest, typeof last === 'number' ? last : 0) + 1;
      byCode.putSync(code, name);
      byName.putSync(name, code);
    }
    if (this.depth > 0) this.pending.set(name, code);
    this.noteCode(code, name);
    return code;
  }

  /** The name of `code`; undefined when no name has it. */
  name(code: number): string | undefined {
    let name = this.names.get(code);
    if (name === undefined) {
      name = this.byCode?.get(code);
      if (name !== undefined) this.noteCode(code, name);
    }
    return name;
  }

  /**
   * Runs `write`, a synchronous write transaction (it commits when it
   * returns, and rolls back when it throws): the codes it finds or gives
   * are kept for later writes only if it returned. A write nested in it is
   * part of its transaction. An asynchronous write (committed later, with
   * its batch) keeps none: its codes are read again when asked for.
   */
  writing<T>(write: () => T): T {
    this.depth++;
    let returned = false;
    try {
      const result = write();
      returned = true;
      return result;
    } finally {
      if (--this.depth === 0) {
        if (returned) for (const [name, code] of this.pending) this.committed.set(name, code);
        this.pending.clear();
      }
    }
  }

  private noteCode(code: number, name: string): void {
    this.names.set(code, name);
    if (code > this.highest) this.highest = code;
  }
}
