/**
 * Gnocchi's default access policy (its `rest/policy.yaml`) for the rules the
 * served endpoints check. A failed check answers 403.
 */
import type { Identity } from './auth.js';
import { forbidden } from './errors.js';

export interface PolicyTarget {
  creator?: string | null;
  created_by_project_id?: string | null;
  project_id?: string | null;
  'resource.project_id'?: string | null;
}

type Check = (who: Identity, target: PolicyTarget) => boolean;

const isAdmin: Check = (who) => who.roles.includes('admin');
const anyone: Check = () => true;
const adminOrCreator: Check = (who, t) =>
  isAdmin(who, t) ||
  (t.creator != null && who.userId === t.creator) ||
  (who.projectId !== null && who.projectId === t.created_by_project_id);
const resourceOwner: Check = (who, t) => who.projectId !== null && who.projectId === t.project_id;
const metricOwner: Check = (who, t) => who.projectId !== null && who.projectId === t['resource.project_id'];
const either = (a: Check, b: Check): Check => (who, t) => a(who, t) || b(who, t);

const RULES = {
  'get status': isAdmin,
  'get archive policy': anyone,
  'list archive policy': anyone,
  'create archive policy': isAdmin,
  'update archive policy': isAdmin,
  'delete archive policy': isAdmin,
  'create archive policy rule': isAdmin,
  'get archive policy rule': anyone,
  'list archive policy rule': anyone,
  'update archive policy rule': isAdmin,
  'delete archive policy rule': isAdmin,
  'create metric': anyone,
  'delete metric': adminOrCreator,
  'get metric': either(adminOrCreator, metricOwner),
  'list metric': either(adminOrCreator, metricOwner),
  'get measures': either(adminOrCreator, metricOwner),
  'post measures': adminOrCreator,
  'create resource': anyone,
  'get resource': either(adminOrCreator, resourceOwner),
  'update resource': adminOrCreator,
  'delete resource': adminOrCreator,
  'delete resources': adminOrCreator,
  'list resource': either(adminOrCreator, resourceOwner),
  'search resource': either(adminOrCreator, resourceOwner),
  'create resource type': isAdmin,
  'get resource type': anyone,
  'list resource type': anyone,
  'update resource type': isAdmin,
  'delete resource type': isAdmin,
} satisfies Record<string, Check>;

export type RuleName = keyof typeof RULES;

export function allowed(rule: RuleName, who: Identity, target: PolicyTarget = {}): boolean {
  return RULES[rule](who, target);
}

export function enforce(rule: RuleName, who: Identity, target: PolicyTarget = {}): void {
  if (!allowed(rule, who, target)) throw forbidden();
}
