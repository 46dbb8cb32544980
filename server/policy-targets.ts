/**
 * Policy targets of stored objects, with the fields Gnocchi's default rules
 * read: the creator, and its user and project halves.
 */
import { creatorParts } from './auth.js';
import type { PolicyTarget } from './policy.js';

export function creatorTarget(creator: string): PolicyTarget {
  const { userId, projectId } = creatorParts(creator);
  return { creator, created_by_user_id: userId, created_by_project_id: projectId };
}
