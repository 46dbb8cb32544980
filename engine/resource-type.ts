/**
 * Resource types and their attribute schemas (Gnocchi's `resource_type.py`):
 * parsing a definition with voluptuous' messages, checking attribute values,
 * and the JSON shapes. Values are stored typed: datetimes as microseconds
 * since the epoch, UUIDs in canonical form.
 */
import { FormatError } from '../formats/errors.js';
import { parseTimestamp } from '../formats/timestamp.js';
import { BadRequest, InvalidInput } from './errors.js';
import { pythonUuid } from './resource-id.js';
import { checkObject, invalidValue, isPlainObject, type Path } from './validate.js';

export type AttributeType = 'string' | 'bool' | 'datetime' | 'uuid' | 'number';
export type AttributeValue = string | number | boolean | null;

export interface AttributeDef {
  name: string;
  type: AttributeType;
  required: boolean;
  minLength?: number;
  maxLength?: number;
  min?: number | null;
  max?: number | null;
}

export type ResourceTypeState = 'creating' | 'active' | 'creation_error' | 'deleting' | 'deletion_error' | 'updating';

export interface ResourceTypeRecord {
  name: string;
  state: ResourceTypeState;
  attributes: AttributeDef[];
}

export const GENERIC: ResourceTypeRecord = { name: 'generic', state: 'active', attributes: [] };

const str = (name: string, required = true): AttributeDef => ({ name, type: 'string', required, minLength: 0, maxLength: 255 });

/**
 * Resource types shipped with the service but created only on request
 * (`--builtin-resource-types`, see `ensureBuiltinResourceTypes` in
 * resources.ts): Gnocchi's `instance` as the spec lists it.
 */
export const BUILTIN_RESOURCE_TYPES: Readonly<Record<string, readonly AttributeDef[]>> = {
  instance: [
    str('display_name'),
    str('flavor_id'),
    str('host'),
    str('image_ref'),
    { name: 'launched_at', type: 'datetime', required: false },
    str('server_group', false),
  ],
};

const INVALID_NAMES = new Set([
  'id', 'type', 'metrics', 'revision', 'revision_start', 'revision_end', 'started_at', 'ended_at',
  'user_id', 'project_id', 'created_by_user_id', 'created_by_project_id', 'get_metric', 'creator',
]);

export function attributeToJson(a: AttributeDef): Record<string, unknown> {
  const d: Record<string, unknown> = { type: a.type, required: a.required };
  if (a.type === 'string') Object.assign(d, { max_length: a.maxLength, min_length: a.minLength });
  if (a.type === 'number') Object.assign(d, { min: a.min ?? null, max: a.max ?? null });
  return d;
}

export function resourceTypeToJson(rt: ResourceTypeRecord) {
  return {
    name: rt.name,
    attributes: Object.fromEntries(rt.attributes.map((a) => [a.name, attributeToJson(a)])),
    state: rt.state,
  };
}

const TYPES: readonly AttributeType[] = ['string', 'bool', 'datetime', 'uuid', 'number'];
const EXTRA_KEYS: Record<AttributeType, string[]> = {
  string: ['min_length', 'max_length'],
  number: ['min', 'max'],
  bool: [],
  datetime: [],
  uuid: [],
};

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);
const isReal = (v: unknown): v is number | boolean => typeof v === 'number' || typeof v === 'boolean';

/**
 * One attribute definition, checked as voluptuous' `Any(*meta_schemas)`
 * does: a definition that fits no type schema is "not a valid value".
 */
function parseAttribute(name: string, raw: unknown, path: Path, forUpdate: boolean): { def: AttributeDef; options?: Record<string, unknown> } {
  const notValid = () => new InvalidInput(`not a valid value for dictionary value @ data${path.map((p) => `['${p}']`).join('')}`, path);
  if (!isPlainObject(raw)) throw notValid();
  const type = raw.type;
  if (typeof type !== 'string' || !(TYPES as readonly string[]).includes(type)) throw notValid();
  const t = type as AttributeType;
  const allowed = ['type', 'required', ...EXTRA_KEYS[t], ...(forUpdate ? ['options'] : [])];
  if (Object.keys(raw).some((k) => !allowed.includes(k))) throw notValid();
  const required = raw.required ?? true;
  if (typeof required !== 'boolean') throw notValid();
  const def: AttributeDef = { name, type: t, required };
  if (t === 'string') {
    const min = raw.min_length ?? 0;
    const max = raw.max_length ?? 255;
    if (!isInt(min) || min < 0 || min > 255 || !isInt(max) || max < 1 || max > 255) throw notValid();
    def.minLength = min;
    def.maxLength = max;
  } else if (t === 'number') {
    const min = raw.min ?? null;
    const max = raw.max ?? null;
    if ((min !== null && typeof min !== 'number') || (max !== null && typeof max !== 'number')) throw notValid();
    def.min = min;
    def.max = max;
  }
  let options: Record<string, unknown> | undefined;
  if (forUpdate) {
    const o = raw.options ?? {};
    if (!isPlainObject(o) || Object.keys(o).some((k) => k !== 'fill')) throw notValid();
    options = o;
  }
  return options === undefined ? { def } : { def, options };
}

/** The checks of `CommonAttributeSchema.__init__` and the min/max checks. */
function checkAttribute(def: AttributeDef): void {
  if ([...def.name].length > 63 || INVALID_NAMES.has(def.name) || !/^[a-zA-Z0-9]/.test(def.name)) {
    throw new BadRequest(`Invalid input: Resource attribute name ${def.name} is invalid`);
  }
  const [lo, hi] = def.type === 'string' ? [def.minLength, def.maxLength] : [def.min, def.max];
  if (lo != null && hi != null && lo > hi) {
    throw new BadRequest(
      `Invalid input: Resource attribute value min (or min_length) ${lo} must be less  than or equal to max (or max_length) ${hi}!`,
    );
  }
}

/** A `POST /v1/resource_type` body. */
export function parseResourceTypeBody(body: unknown): ResourceTypeRecord {
  const obj = checkObject(body, [], { required: ['name'], optional: ['attributes'] });
  if (typeof obj.name !== 'string') throw invalidValue('expected str', ['name']);
  const rawAttrs = obj.attributes ?? {};
  if (!isPlainObject(rawAttrs)) throw invalidValue('expected a dictionary', ['attributes']);
  const attributes = Object.entries(rawAttrs).map(([n, raw]) => parseAttribute(n, raw, ['attributes', n], false).def);
  attributes.forEach(checkAttribute);
  return { name: obj.name, state: 'creating', attributes };
}

/** Checks every attribute of a patched type document, as Gnocchi re-validates the whole type. */
export function checkPatchedAttributes(attributes: Record<string, unknown>): void {
  for (const [name, raw] of Object.entries(attributes)) parseAttribute(name, raw, ['attributes', name], true);
}

/** An attribute added by PATCH, with its `options.fill` checked against its type. */
export function parseAddedAttribute(name: string, raw: unknown): { def: AttributeDef; fill: AttributeValue } {
  const { def, options } = parseAttribute(name, raw, ['attributes', name], true);
  checkAttribute(def);
  const fill = options?.fill ?? null;
  if (fill === null) {
    if (def.required) {
      throw new BadRequest(`Invalid input: Option 'fill' of resource attribute ${name} is invalid: must not be empty if required=True`);
    }
    return { def, fill: null };
  }
  try {
    return { def, fill: attributeValue(def, fill, []) };
  } catch (err) {
    if (err instanceof InvalidInput) {
      const reason = (err.description as { reason: string }).reason;
      throw new BadRequest(`Invalid input: Option 'fill' of resource attribute ${name} is invalid: ${reason}`);
    }
    throw err;
  }
}

/** Checks a value against an attribute schema; answers the stored value. */
export function attributeValue(def: AttributeDef, value: unknown, path: Path): AttributeValue {
  switch (def.type) {
    case 'string': {
      if (typeof value !== 'string') throw invalidValue('expected str', path);
      const n = [...value].length;
      if (n > def.maxLength!) throw invalidValue(`length of value must be at most ${def.maxLength}`, path);
      if (n < def.minLength!) throw invalidValue(`length of value must be at least ${def.minLength}`, path);
      return value;
    }
    case 'bool':
      if (typeof value !== 'boolean') throw invalidValue('expected bool', path);
      return value;
    case 'number': {
      if (!isReal(value)) throw invalidValue('expected Real', path);
      const n = Number(value);
      if (def.min != null && n < def.min) throw invalidValue(`value must be at least ${def.min}`, path);
      if (def.max != null && n > def.max) throw invalidValue(`value must be at most ${def.max}`, path);
      return n;
    }
    case 'uuid': {
      const u = typeof value === 'string' ? pythonUuid(value) : undefined;
      if (u === undefined) throw invalidValue('badly formed hexadecimal UUID string', path);
      return u;
    }
    case 'datetime':
      return timestampValue(value, path);
  }
}

/** Gnocchi's `utils.to_datetime` as a schema check. */
export function timestampValue(value: unknown, path: Path): number {
  try {
    return parseTimestamp(value);
  } catch (err) {
    if (err instanceof FormatError) throw invalidValue(err.message, path);
    throw err;
  }
}
