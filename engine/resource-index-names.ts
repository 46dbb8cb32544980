/**
 * The codes of type and field names in the value index keys
 * (resource-index-keys.ts), so that a key's prefix costs four bytes, not
 * the names: a dictionary in meta, written in the transaction of the first
 * entry that uses a name. A field code stands for a name whatever the type
 * (the type code comes first in a key). A deleted type's code is freed (its
 * entries are gone) and may name another type later.
 *
 * The dictionary also holds the index's common creator (see
 * resource-value-index.ts): the creator of the first current revision
 * filed, or the most common when an index without one is built (a data
 * directory of an older layout). It never changes afterwards, so that an
 * entry left out for it is left out for good.
 *
 * The dictionary is kept decoded in memory and re-read whenever meta holds
 * other bytes than those it was decoded from: after another writer's
 * commit, and after a rolled-back transaction that had added a name.
 */
import type { Storage } from './storage.js';
import { MAX_CODE } from './resource-index-keys.js';

const META_KEY = 'resourceValueNames';

const full = (kind: string) => new Error(`the resource value index holds ${MAX_CODE + 1} ${kind} names, it takes no more`);

interface Stored {
  /** Type names by code; null: a freed code. */
  types: (string | null)[];
  /** Field names by code. */
  fields: string[];
  /** The common creator; absent until a revision with a creator is filed. */
  creator?: string;
}

export class IndexNames {
  private bytes: Buffer | undefined;
  private stored: Stored = { types: [], fields: [] };
  private typeCodes = new Map<string, number>();
  private fieldCodes = new Map<string, number>();

  constructor(private readonly meta: Storage['meta']) {}

  /** Brings the decoded dictionary in line with meta; call once per index operation. */
  refresh(): this {
    const bytes = this.meta.getBinary(META_KEY);
    if (bytes === undefined ? this.bytes === undefined : this.bytes?.equals(bytes)) return this;
    this.bytes = bytes;
    this.stored = (this.meta.get(META_KEY) as Stored | undefined) ?? { types: [], fields: [] };
    this.typeCodes = new Map(this.stored.types.flatMap((name, code) => (name === null ? [] : [[name, code] as const])));
    this.fieldCodes = new Map(this.stored.fields.map((name, code) => [name, code] as const));
    return this;
  }

  typeCode(name: string): number | undefined {
    return this.typeCodes.get(name);
  }

  fieldCode(name: string): number | undefined {
    return this.fieldCodes.get(name);
  }

  typeName(code: number): string | undefined {
    return this.stored.types[code] ?? undefined;
  }

  fieldName(code: number): string | undefined {
    return this.stored.fields[code];
  }

  /** The common creator, if one has been chosen. */
  commonCreator(): string | undefined {
    return this.stored.creator;
  }

  /** The common creator, `creator` if none was chosen yet; inside a write transaction. */
  claimCreator(creator: string): string {
    if (this.stored.creator === undefined) {
      this.stored.creator = creator;
      this.save();
    }
    return this.stored.creator!;
  }

  /** The codes of every type that may have entries. */
  allTypeCodes(): number[] {
    return [...this.typeCodes.values()];
  }

  /** The code of a type, given one if it has none; inside a write transaction. */
  internType(name: string): number {
    const known = this.typeCodes.get(name);
    if (known !== undefined) return known;
    const { types } = this.stored;
    let code = types.indexOf(null);
    if (code === -1) code = types.length;
    if (code > MAX_CODE) throw full('type');
    types[code] = name;
    this.save();
    return code;
  }

  /** The code of a field name, given one if it has none; inside a write transaction. */
  internField(name: string): number {
    const known = this.fieldCodes.get(name);
    if (known !== undefined) return known;
    const code = this.stored.fields.length;
    if (code > MAX_CODE) throw full('field');
    this.stored.fields.push(name);
    this.save();
    return code;
  }

  /** Frees a type's code (its entries removed); inside a write transaction. */
  freeType(name: string): void {
    const code = this.typeCodes.get(name);
    if (code === undefined) return;
    this.stored.types[code] = null;
    this.save();
  }

  /** Forgets every name (the index is being rebuilt), `creator` the common creator from now on; inside a write transaction. */
  clear(creator: string | undefined): void {
    this.stored = creator === undefined ? { types: [], fields: [] } : { types: [], fields: [], creator };
    this.save();
  }

  private save(): void {
    void this.meta.put(META_KEY, this.stored);
    this.bytes = undefined;
    this.refresh();
  }
}
