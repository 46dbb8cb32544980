// Small DOM helpers shared by the panels.

/** `el('li', { class: 'x', onclick }, 'text', child)`: attributes, handlers (`on…`), then children. */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  node.append(...children.flat().filter((c) => c !== undefined && c !== null));
  return node;
}

export const byId = (id) => document.getElementById(id);

/** Shows an error (the server's message for an error answer) in a panel's `.error` line; `null` clears it. */
export function showError(panel, error) {
  const line = panel.querySelector('.error');
  line.hidden = error === null;
  line.textContent = error === null ? '' : error.message;
}

/**
 * Runs a panel's action, showing its failure in the panel; `aria-busy`
 * marks the panel while it runs.
 */
export async function guarded(panel, action) {
  panel.setAttribute('aria-busy', 'true');
  try {
    const result = await action();
    showError(panel, null);
    return result;
  } catch (error) {
    showError(panel, error);
    return undefined;
  } finally {
    panel.removeAttribute('aria-busy');
  }
}
