/**
 * The built-in access policy, used when no `policy_file` is configured. It
 * grants what Gnocchi's default policy grants: admins everything; any
 * authenticated user may create resources and metrics and read archive
 * policies, rules and resource types; objects are otherwise reserved to their
 * creator (user, or project of the creating token) and to the project they
 * belong to.
 */

/** Helper rules the entries below refer to through `rule:`. */
const ALIASES = {
  admin_or_creator: 'role:admin or user:%(creator)s or project_id:%(created_by_project_id)s',
  // A resource belongs to the project in its `project_id`.
  resource_owner: 'project_id:%(project_id)s',
  // A metric belongs to the project of the resource it is attached to.
  metric_owner: 'project_id:%(resource.project_id)s',
} as const;

const ANYONE = '';
const ADMIN = 'role:admin';
const CREATOR = 'rule:admin_or_creator';
const CREATOR_OR_RESOURCE_OWNER = 'rule:admin_or_creator or rule:resource_owner';
const CREATOR_OR_METRIC_OWNER = 'rule:admin_or_creator or rule:metric_owner';

/** The rules the server enforces, by name. */
const ENFORCED = {
  'get status': ADMIN,

  'create archive policy': ADMIN,
  'get archive policy': ANYONE,
  'list archive policy': ANYONE,
  'update archive policy': ADMIN,
  'delete archive policy': ADMIN,

  'create archive policy rule': ADMIN,
  'get archive policy rule': ANYONE,
  'list archive policy rule': ANYONE,
  'update archive policy rule': ADMIN,
  'delete archive policy rule': ADMIN,

  'create resource type': ADMIN,
  'get resource type': ANYONE,
  'list resource type': ANYONE,
  'update resource type': ADMIN,
  'delete resource type': ADMIN,

  'create resource': ANYONE,
  'get resource': CREATOR_OR_RESOURCE_OWNER,
  'list resource': CREATOR_OR_RESOURCE_OWNER,
  'search resource': CREATOR_OR_RESOURCE_OWNER,
  'update resource': CREATOR,
  'delete resource': CREATOR,
  'delete resources': CREATOR,

  'create metric': ANYONE,
  'get metric': CREATOR_OR_METRIC_OWNER,
  'list metric': CREATOR_OR_METRIC_OWNER,
  'search metric': CREATOR_OR_METRIC_OWNER,
  'delete metric': CREATOR,

  'get measures': CREATOR_OR_METRIC_OWNER,
  'post measures': CREATOR,
} as const;

/** A rule name the routes enforce. */
export type RuleName = keyof typeof ENFORCED;

export const DEFAULT_POLICY: Readonly<Record<string, string>> = { ...ALIASES, ...ENFORCED };
