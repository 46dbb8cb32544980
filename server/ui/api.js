// The /v1 API as the console uses it: basic auth from the signed-in user
// name, JSON both ways, and error answers turned into the server's own words.

const USER_KEY = 'gnocchi-console.user';

export function currentUser() {
  return localStorage.getItem(USER_KEY) ?? '';
}

export function setUser(name) {
  localStorage.setItem(USER_KEY, name);
}

/** Basic credentials carry `user:` (the server ignores passwords); btoa wants bytes. */
function authorization(user) {
  const bytes = new TextEncoder().encode(`${user}:`);
  return `basic ${btoa(String.fromCharCode(...bytes))}`;
}

/** An error answer, with the message the server gave. */
export class ApiError extends Error {
  constructor(status, title, description) {
    super(describe(status, title, description));
    this.status = status;
  }
}

/**
 * Gnocchi's `description` is a string, or an object such as
 * `{cause, reason, detail}` for invalid input.
 */
function describe(status, title, description) {
  const head = `${status} ${title}`;
  if (description === null || description === undefined || description === '') return head;
  if (typeof description === 'string') return `${head}: ${description}`;
  if (typeof description === 'object' && 'cause' in description) {
    const detail = description.detail;
    const tail = detail === undefined || (Array.isArray(detail) && detail.length === 0)
      ? ''
      : ` (${typeof detail === 'string' ? detail : JSON.stringify(detail)})`;
    return `${head}: ${description.cause}${description.reason ? `: ${description.reason}` : ''}${tail}`;
  }
  return `${head}: ${JSON.stringify(description)}`;
}

/**
 * One request. `query` values that are arrays repeat their parameter;
 * empty values are left out. Resolves to the parsed JSON answer (undefined
 * when empty).
 */
export async function api(method, path, { query = {}, body, auth = true } = {}) {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    for (const v of [value].flat()) if (v !== undefined && v !== null && v !== '') params.append(key, String(v));
  }
  const search = params.toString();
  const url = search === '' ? path : `${path}?${search}`;
  const headers = { accept: 'application/json' };
  if (auth) headers.authorization = authorization(currentUser());
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  let answer;
  try {
    answer = text === '' ? undefined : JSON.parse(text);
  } catch {
    answer = text;
  }
  if (!response.ok) {
    const error = typeof answer === 'object' && answer !== null ? answer : {};
    throw new ApiError(response.status, error.title ?? response.statusText, error.description ?? (typeof answer === 'string' ? answer : null));
  }
  return answer;
}
