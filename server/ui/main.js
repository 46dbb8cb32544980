// The console's entry point: sign-in, the status bar, and the panels.
import { setUpAggregates } from './aggregates.js';
import { api, currentUser, setUser } from './api.js';
import { loadBrowse, setUpBrowse } from './browse.js';
import { byId } from './dom.js';
import { openMetric, setUpMetric } from './metric.js';

const STATUS_EVERY_MS = 5000;
let statusTimer;

/** Version (no auth needed) and backlog (needs the admin role under the default policy). */
async function refreshStatus() {
  clearTimeout(statusTimer);
  const version = byId('status-version');
  const backlog = byId('status-backlog');
  try {
    version.textContent = (await api('GET', '/', { auth: false })).build;
  } catch (error) {
    version.textContent = error.message;
  }
  if (currentUser() === '') {
    backlog.textContent = 'sign in to see';
  } else {
    try {
      const { summary } = (await api('GET', '/v1/status', { query: { details: 'false' } })).storage;
      backlog.textContent = `${summary.measures} measures, ${summary.metrics} metrics waiting`;
      backlog.title = '';
    } catch (error) {
      backlog.textContent = `unavailable (${error.status})`;
      backlog.title = error.message;
    }
  }
  byId('status-updated').textContent = new Date().toLocaleTimeString();
  statusTimer = setTimeout(refreshStatus, STATUS_EVERY_MS);
}

function signIn(user) {
  setUser(user);
  byId('signed-in').textContent = user === '' ? 'not signed in' : `signed in as ${user}`;
  document.body.classList.toggle('anonymous', user === '');
  void refreshStatus();
  if (user !== '') void loadBrowse();
}

setUpBrowse((id) => void openMetric(id));
setUpMetric();
setUpAggregates();
byId('login').addEventListener('submit', (event) => {
  event.preventDefault();
  signIn(byId('user').value.trim());
});
byId('user').value = currentUser();
signIn(currentUser());
