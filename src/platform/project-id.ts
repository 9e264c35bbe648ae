// The project id: the tenant key on every route and every row. One pattern for the configuration,
// the tenancy domain and every route's path parameter.
import { Type } from 'typebox';

export const PROJECT_ID_PATTERN = '^[a-z0-9][a-z0-9_-]{1,62}$';
const PROJECT_ID = new RegExp(PROJECT_ID_PATTERN);

export function isProjectId(value: string): boolean {
  return PROJECT_ID.test(value);
}

export const ProjectParamsSchema = Type.Object({
  projectId: Type.String({ pattern: PROJECT_ID_PATTERN, description: 'The project the API key belongs to' }),
});
