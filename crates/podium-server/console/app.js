// @ts-check
/**
 * Podium's web console: a page per route (`#/pod-managers`, `#/hosts/ID`, `#/claims/ID`, ...),
 * each drawn from the JSON API with the signed-in token, redrawn every 2 s where it shows
 * something that changes (states, power, operations). Admin pages are offered to admins only;
 * a tenant sees its claims. Every error shows the API's own message and the field it names.
 */

import { api, ApiError, signIn, signOut, token } from './api.js';
import { field, h, link, pretty, table, values } from './dom.js';

/** @typedef {import('./api-types').components['schemas']} S */

/** @type {S['MeView'] | null} */
let me = null;
/** The timers of the page on screen, stopped when another is drawn. */
let timers = /** @type {number[]} */ ([]);

const main = /** @type {HTMLElement} */ (document.getElementById('main'));

/** @param {string} title @param {...any} content */
function page(title, ...content) {
  document.title = `${title} · Podium`;
  main.replaceChildren(h('h1', null, title), ...content);
}

/** What went wrong, as the API said it. @param {unknown} e */
function errorBox(e) {
  if (e instanceof ApiError) {
    return h('div', { class: 'error', role: 'alert' },
      `${e.message}`, e.field ? ` (field: ${e.field})` : '', ` [${e.code}]`);
  }
  return h('div', { class: 'error', role: 'alert' }, String(e));
}

/** Redraws `target` every 2 s with what `draw` answers, until the page changes; at once with
 * `first` where the page already has it, else with `draw`.
 * @param {HTMLElement} target @param {() => Promise<Node>} draw @param {Node} [first] */
function live(target, draw, first) {
  const run = async () => {
    try {
      target.replaceChildren(await draw());
    } catch (e) {
      target.replaceChildren(errorBox(e));
    }
  };
  if (first) target.replaceChildren(first); else run();
  timers.push(window.setInterval(run, 2000));
}

/** A form whose submit runs `action`; its errors show in the form.
 * @param {string} label @param {any[]} fields @param {string} submit
 * @param {(v: Record<string, string>, form: HTMLFormElement) => Promise<void>} action */
function form(label, fields, submit, action) {
  const status = h('div', { 'aria-live': 'polite' });
  const el = /** @type {HTMLFormElement} */ (h('form', { class: 'card', 'aria-label': label },
    h('h2', null, label), ...fields, h('button', { type: 'submit' }, submit), status));
  el.addEventListener('submit', async (event) => {
    event.preventDefault();
    status.replaceChildren();
    try {
      await action(values(el), el);
    } catch (e) {
      status.replaceChildren(errorBox(e));
    }
  });
  return el;
}

/**
 * A form of filters for a list at `route`: it shows `query`, and its Filter button moves to the
 * route with what it holds as the query.
 * @param {string} label @param {string} route @param {URLSearchParams} query
 * @param {...HTMLElement} fields
 */
function filterForm(label, route, query, ...fields) {
  const filters = /** @type {HTMLFormElement} */ (h('form', { class: 'filters', 'aria-label': label },
    ...fields, h('div', null, h('button', { type: 'submit' }, 'Filter'))));
  for (const [key, value] of query) {
    const control = /** @type {HTMLInputElement | null} */ (filters.elements.namedItem(key));
    if (control) control.value = value;
  }
  filters.addEventListener('submit', (event) => {
    event.preventDefault();
    location.hash = `#${route}?${new URLSearchParams(values(filters))}`;
  });
  return filters;
}

/** Follows an operation until it ends: queued → running → succeeded or failed.
 * @param {S['OperationView']} op */
function progress(op) {
  const el = h('p', { class: 'notice', role: 'status' });
  const show = (/** @type {S['OperationView']} */ o) =>
    el.replaceChildren(`Operation ${o.kind}: ${o.status}`, o.error ? ` — ${o.error}` : '');
  show(op);
  const timer = window.setInterval(async () => {
    try {
      const now = await api.operation(op.id);
      show(now);
      if (now.status === 'succeeded' || now.status === 'failed') window.clearInterval(timer);
    } catch (e) {
      el.replaceChildren(errorBox(e));
      window.clearInterval(timer);
    }
  }, 1000);
  timers.push(timer);
  return el;
}

/** @param {S['List_OperationView']['items']} ops */
function operationsTable(ops) {
  return table('Operations', ['Kind', 'Status', 'Created', 'Finished', 'Error'], ops,
    (o) => [o.kind, h('span', { class: 'state' }, o.status), o.created_at, o.finished_at ?? '',
      o.error ?? '']);
}

/**
 * Operations of every host and pod manager, filtered by status and kind: what is queued,
 * running and failed now.
 * @param {URLSearchParams} query
 */
async function operationsPage(query) {
  const list = h('div');
  const filters = filterForm('Filter operations', '/operations', query,
    field('Status', 'status', {
      type: 'select',
      options: [['', 'any'], ['queued,running,failed', 'queued, running or failed'], ['queued,running', 'queued or running'],
        ...['queued', 'running', 'succeeded', 'failed'].map((s) => [s, s])],
    }),
    field('Kind', 'kind', {
      type: 'select',
      options: [['', 'any'], ...['register', 'inspect', 'sync', 'power', 'boot', 'media', 'bios', 'secure_boot', 'firmware_update', 'provision', 'deprovision'].map((k) => [k, k])],
    }));
  page('Operations', filters, list);
  live(list, async () => table('Operations', ['Kind', 'Status', 'Host', 'Created', 'Finished', 'Error'],
    (await api.operations(Object.fromEntries(query))).items, (o) => [o.kind, h('span', { class: 'state' }, o.status),
      o.host ? link(`/hosts/${o.host}`, o.host) : '', o.created_at, o.finished_at ?? '', o.error ?? '']));
}

// --- sign-in ------------------------------------------------------------------------------

function signInPage() {
  page('Sign in',
    h('p', null, 'Sign in with a Podium token (an admin token, or one a tenant was given). It is kept for this browser tab only.'),
    form('Sign in with a token', [field('Token', 'token', { type: 'password', autocomplete: 'off', required: true })],
      'Sign in', async (v) => {
        signIn(v.token ?? '');
        try {
          me = await api.me();
        } catch (e) {
          signOut();
          throw e;
        }
        drawNav();
        location.hash = me.role === 'admin' ? '#/pod-managers' : '#/claims';
      }));
}

// --- admin pages --------------------------------------------------------------------------

async function podManagersPage() {
  const list = h('div');
  page('Pod managers', list,
    form('Register a pod manager', [
      field('Name', 'name', { required: true }),
      field('Redfish service URL', 'url', { required: true, placeholder: 'https://bmc.example:8000' }),
      field('BMC user', 'username', { autocomplete: 'off' }),
      field('BMC password', 'password', { type: 'password', autocomplete: 'new-password' }),
      field('Location', 'location'),
      field('Network config owner', 'network_config_owner', {
        type: 'select', options: [['admin', 'admin'], ['consumer', 'consumer'], ['layered', 'layered']],
      }),
      field('Preprovisioning image (ramdisk ISO URL)', 'preprovisioning_image'),
    ], 'Register', async (v) => {
      /** @type {S['PodManagerCreate']} */
      const body = { name: v.name ?? '', url: v.url ?? '' };
      if (v.username) body.auth = { username: v.username, password: v.password ?? '' };
      if (v.location) body.location = v.location;
      if (v.preprovisioning_image) body.preprovisioning_image = v.preprovisioning_image;
      body.network_config_owner = /** @type {S['NetworkConfigOwner']} */ (v.network_config_owner);
      const pm = await api.podManagerCreate(body);
      location.hash = `#/pod-managers/${pm.uuid}`;
    }));
  live(list, async () => {
    const pms = (await api.podManagers()).items;
    return table('Pod managers', ['Name', 'URL', 'Status', 'Last probe', 'Hosts'], pms, (pm) => [
      link(`/pod-managers/${pm.uuid}`, pm.name), pm.url,
      h('span', { class: 'state' }, pm.status, pm.status_message ? ` — ${pm.status_message}` : ''),
      pm.last_probe_at ?? 'never', link(`/hosts?pod_manager=${pm.uuid}`, 'hosts')]);
  });
}

/** @param {string} id */
async function podManagerPage(id) {
  const pm = await api.podManager(id);
  const summary = h('div');
  const actions = h('div', { 'aria-live': 'polite' });
  const history = h('div');
  const bindings = h('section', { class: 'card', 'aria-label': 'Plugins' });
  const racks = h('div');
  page(`Pod manager ${pm.name}`, summary,
    h('button', {
      type: 'button',
      onclick: async () => {
        try {
          actions.replaceChildren(progress(await api.podManagerSync(id)));
        } catch (e) {
          actions.replaceChildren(errorBox(e));
        }
      },
    }, 'Sync now'),
    link(`/hosts?pod_manager=${id}`, 'Its hosts'), actions,
    form('Edit', [
      field('Name', 'name', { value: pm.name, required: true }),
      field('Redfish service URL', 'url', { value: pm.url, required: true }),
      field('Location', 'location', { value: pm.location }),
      field('New BMC user (leave empty to keep the credentials)', 'username', { autocomplete: 'off' }),
      field('New BMC password', 'password', { type: 'password', autocomplete: 'new-password' }),
      field('Preprovisioning image', 'preprovisioning_image', { value: pm.preprovisioning_image ?? '' }),
      field('Cleaning between tenants', 'cleaning', {
        type: 'select', value: pm.deploy.cleaning,
        options: [['metadata', 'metadata: partition tables and signatures'], ['full', 'full: every byte'],
          ['disabled', 'disabled: the next tenant may read the last one\'s data']],
      }),
      field('md5 image checksums', 'allow_md5', {
        type: 'select', value: pm.deploy.allow_md5 ? 'allowed' : 'refused',
        options: [['refused', 'refused'], ['allowed', 'allowed']],
      }),
    ], 'Save', async (v, el) => {
      /** @type {S['PodManagerUpdate']} */
      const body = {
        name: v.name, url: v.url, location: v.location ?? '',
        preprovisioning_image: v.preprovisioning_image ?? null,
        deploy: {
          cleaning: /** @type {S['Cleaning']} */ (v.cleaning ?? 'metadata'),
          allow_md5: v.allow_md5 === 'allowed',
        },
      };
      if (v.username) body.auth = { username: v.username, password: v.password ?? '' };
      await api.podManagerUpdate(id, body);
      el.append(h('p', { class: 'notice', role: 'status' }, 'Saved.'));
    }),
    h('h2', null, 'Racks and chassis'), racks,
    bindings, templateEditor(id),
    h('h2', null, 'Status history'), history);
  const drawPm = (/** @type {S['PodManagerView']} */ now) =>
    table('Pod manager', ['Field', 'Value'], [
      ['URL', now.url], ['Status', now.status], ['Why', now.status_message ?? ''],
      ['Last probe', now.last_probe_at ?? 'never'], ['Location', now.location],
      ['Credentials', now.has_auth ? 'set (never shown)' : 'none'],
      ['Network config owner', now.network_config_owner],
      ['Preprovisioning image', now.preprovisioning_image ?? 'none'],
      ['Cleaning', `${now.deploy.cleaning}; in effect: ${now.cleaning.erases ?? 'nothing'} (${now.cleaning.why})`],
      ['md5 checksums', now.deploy.allow_md5 ? 'allowed' : 'refused'],
      ['Power off', now.power.shutdown_timeout
        ? `the OS is asked to shut down, forced off after ${now.power.shutdown_timeout} s`
        : 'forced off at once'],
    ], (row) => row);
  live(summary, async () => drawPm(await api.podManager(id)), drawPm(pm));
  live(racks, async () => chassisTree((await api.chassis(id)).items));
  live(history, async () => table('Status changes', ['At', 'Status', 'Message'],
    (await api.statusHistory(id)).items, (c) => [c.at, c.status, c.message ?? '']));
  const binding = (/** @type {string} */ name, /** @type {S['PluginBinding']} */ b) =>
    form(`${name} plugin`, [
      field('Plugin', `${name}-name`, { value: b.name, required: true }),
      field('Configuration (JSON)', `${name}-config`, {
        type: 'textarea', value: JSON.stringify(b.config ?? {}, null, 2),
      }),
    ], 'Save', async (v) => {
      let config;
      try {
        config = JSON.parse(v[`${name}-config`] ?? '{}');
      } catch (e) {
        throw new Error(`The configuration is not JSON: ${e}`);
      }
      /** @type {S['PluginBindingParams']} */
      const params = { name: v[`${name}-name`] ?? '', config };
      await api.podManagerUpdate(id, name === 'driver' ? { driver: params } : { ipam: params });
      bindings.append(h('p', { class: 'notice', role: 'status' }, `The ${name} plugin is saved.`));
    });
  bindings.replaceChildren(h('h2', null, 'Plugins'), binding('driver', pm.driver), binding('ipam', pm.ipam),
    h('p', null, 'Renderer: ', pm.renderer ? pm.renderer.name : 'none'));
}

/** The rack view: a pod manager's chassis as nested lists, each under the one it stands in,
 * each a link to the hosts in it (and in the chassis within it).
 * @param {S['ChassisView'][]} items */
function chassisTree(items) {
  const ids = new Set(items.map((c) => c.id));
  const under = (/** @type {string | null} */ parent) => items.filter((c) =>
    parent === null ? !c.parent || !ids.has(c.parent) : c.parent === parent);
  /** @type {(level: S['ChassisView'][]) => HTMLElement} */
  const list = (level) => h('ul', { class: 'tree' },
    ...level.map((c) => {
      const children = under(c.id);
      return h('li', null,
        link(`/hosts?chassis=${c.id}`, c.name), ` ${c.chassis_type}`,
        c.location ? h('span', { class: 'muted' }, ` at ${c.location}`) : null,
        c.hosts.length ? ` (${c.hosts.length} host${c.hosts.length === 1 ? '' : 's'})` : null,
        c.state === 'missing' ? h('span', { class: 'state' }, ' missing') : null,
        children.length ? list(children) : null);
    }));
  const top = under(null);
  return top.length ? list(top) : h('p', { class: 'muted' }, 'Its driver reports no chassis.');
}

/** The network template, edited as JSON; a validation error shows at the line of the field
 * it names, which is selected in the editor.
 * @param {string} id */
function templateEditor(id) {
  // Disabled until the current template (or none: 404) is in.
  const area = /** @type {HTMLTextAreaElement} */ (h('textarea', { id: 'template', name: 'template', rows: 14, disabled: true }));
  api.template(id).then((t) => { area.value = pretty(t).text; })
    .catch(() => { area.value = ''; })
    .finally(() => { area.disabled = false; });
  return form('Network template', [h('label', { for: 'template' }, 'Template (JSON)'), area],
    'Save template', async (v, el) => {
      let body;
      try {
        body = JSON.parse(v.template ?? '');
      } catch (e) {
        throw new Error(`The template is not JSON: ${e}`);
      }
      try {
        await api.templateSet(id, body);
      } catch (e) {
        if (!(e instanceof ApiError) || !e.field) throw e;
        const { text, lines } = pretty(body);
        const line = lines.get(e.field);
        if (line === undefined) throw e;
        area.value = text;
        const start = text.split('\n').slice(0, line - 1).join('\n').length + (line > 1 ? 1 : 0);
        area.focus();
        area.setSelectionRange(start, start + (text.split('\n')[line - 1] ?? '').length);
        throw new ApiError(e.status, e.code, `line ${line}: ${e.message}`, e.field);
      }
      el.append(h('p', { class: 'notice', role: 'status' }, 'The template is saved.'));
    });
}

/** @param {URLSearchParams} query */
async function hostsPage(query) {
  const pms = (await api.podManagers()).items;
  const list = h('div');
  const filters = filterForm('Filter hosts', '/hosts', query,
    field('Pod manager', 'pod_manager', {
      type: 'select', options: [['', 'any'], ...pms.map((p) => [p.uuid, p.name])],
    }),
    field('State', 'state', {
      type: 'select',
      options: [['', 'any'], ...['registering', 'inspecting', 'available', 'provisioning', 'provisioned',
        'deprovisioning', 'error', 'missing', 'maintenance'].map((s) => [s, s])],
    }),
    field('Power', 'power_state', { type: 'select', options: [['', 'any'], ['on', 'on'], ['off', 'off']] }),
    field('Label (key=value)', 'label'));
  page('Hosts', filters, list);
  const name = (/** @type {string} */ uuid) => pms.find((p) => p.uuid === uuid)?.name ?? uuid;
  live(list, async () => table('Hosts', ['Name', 'Kind', 'State', 'Power', 'Pod manager', 'Error'],
    (await api.hosts(Object.fromEntries(query))).items, (host) => [
      link(`/hosts/${host.id}`, host.name), host.kind, h('span', { class: 'state' }, host.state),
      host.power_state, name(host.pod_manager), host.error ? host.error.message : '']));
}

/** @param {string} id */
async function hostPage(id) {
  const host = await api.host(id);
  const summary = h('div');
  const ops = h('div');
  const status = h('div', { 'aria-live': 'polite' });
  const act = (/** @type {string} */ label, /** @type {() => Promise<S['OperationView'] | S['HostView']>} */ run) =>
    h('button', {
      type: 'button', class: 'secondary',
      onclick: async () => {
        try {
          const answer = await run();
          status.replaceChildren('kind' in answer && 'status' in answer
            ? progress(/** @type {S['OperationView']} */ (answer))
            : h('p', { class: 'notice', role: 'status' }, 'Done.'));
        } catch (e) {
          status.replaceChildren(errorBox(e));
        }
      },
    }, label);
  const reason = field('Maintenance reason', 'reason');
  const boot = field('Boot device (next boot)', 'boot', {
    type: 'select', options: [['pxe', 'network (PXE)'], ['hdd', 'disk'], ['cd', 'CD']],
  });
  // Read from the BMC when asked (each is a live read through the driver), not on every redraw.
  const settings = h('div', { 'aria-live': 'polite' });
  const part = async (/** @type {string} */ title, /** @type {() => Promise<Node>} */ draw) => {
    let body;
    try {
      body = await draw();
    } catch (e) {
      body = errorBox(e);
    }
    return h('div', null, h('h3', null, title), body);
  };
  const readSettings = async () => {
    settings.replaceChildren(h('p', { role: 'status' }, 'Reading from the BMC…'));
    settings.replaceChildren(
      await part('BIOS', async () => {
        const bios = await api.hostBios(id);
        return table('BIOS attributes', ['Attribute', 'Value', 'Type', 'Read-only', 'Staged'],
          Object.entries(bios.attributes), ([name, value]) => {
            const entry = bios.registry[name];
            const staged = /** @type {Record<string, unknown>} */ (bios.pending)[name];
            return [name, value === null ? '' : String(value), entry?.type ?? '',
              entry?.read_only ? 'yes' : 'no', staged === undefined ? '' : String(staged)];
          });
      }),
      await part('Secure boot', async () => {
        const sb = await api.hostSecureBoot(id);
        return h('p', null, sb.enabled ? 'Enabled from the next boot on.' : 'Disabled.');
      }),
      await part('Firmware', async () => {
        const fw = await api.hostFirmware(id);
        return table('Firmware components', ['Component', 'Kind', 'Version', 'Updateable'],
          fw.components, (c) => [c.name, c.kind, c.version ?? '', c.updateable ? 'yes' : 'no']);
      }),
      await part('Inventory', async () => {
        const hw = await api.hostHardware(id);
        return table('Inventory', ['Part', 'Count', 'Details'], [
          ['Processors', hw.processors.length, hw.processors.map((p) => p.model ?? p.id).join(', ')],
          ['Memory modules', hw.memory.length, hw.memory.map((m) => `${m.capacity_mib ?? '?'} MiB`).join(', ')],
          ['Storage controllers', hw.storage.length, hw.storage.map((s) => `${s.id}: ${s.drives.length} drives`).join(', ')],
          ['NICs', hw.nics.length, hw.nics.map((n) => `${n.mac ?? n.id} ${n.link ?? ''}`).join(', ')],
        ], (row) => row.map(String));
      }));
  };
  page(`Host ${host.name}`, summary,
    h('section', { class: 'card', 'aria-label': 'Actions' }, h('h2', null, 'Actions'),
      act('Power on', () => api.hostPower(id, { action: 'on' })),
      act('Power off', () => api.hostPower(id, { action: 'off' })),
      act('Restart', () => api.hostPower(id, { action: 'force_restart' })),
      act('Inspect', () => api.hostInspect(id)),
      boot,
      act('Set boot device', () => api.hostBoot(id, {
        target: /** @type {HTMLSelectElement} */ (boot.querySelector('select')).value,
        persistence: 'once',
      })),
      reason,
      act('Maintenance on', () => api.maintenanceOn(id, {
        reason: /** @type {HTMLInputElement} */ (reason.querySelector('input')).value || null,
      })),
      act('Maintenance off', () => api.maintenanceOff(id)),
      status),
    h('section', { class: 'card', 'aria-label': 'Hardware settings' }, h('h2', null, 'Hardware settings'),
      h('button', { type: 'button', class: 'secondary', onclick: readSettings },
        'Read BIOS, secure boot, firmware and inventory'),
      settings),
    h('h2', null, 'Operations'), ops);
  const drawHost = (/** @type {S['HostView']} */ now) =>
    h('div', null,
      table('Host', ['Field', 'Value'], [
        ['State', h('span', { class: 'state' }, now.state)],
        ['Chassis', now.chassis.length ? now.chassis.map((c) => c.name).join(' / ') : 'none known'],
        ['Error', now.error ? `${now.error.type}: ${now.error.message}` : 'none'],
        ['Maintenance', now.maintenance ? `on: ${now.maintenance.reason ?? ''}` : 'off'],
        ['Power', now.power_state], ['CPUs', now.cpu_count], ['Memory (MiB)', now.memory_mib],
        ['Manufacturer', now.manufacturer ?? ''], ['Model', now.model ?? ''],
        ['BIOS version', now.bios_version ?? 'not read'], ['BMC firmware', now.bmc_version ?? 'not read'],
        ['Disks', now.disks.may_hold_data_of ? `may hold claim ${now.disks.may_hold_data_of}'s data` : 'nothing of a claim\'s'],
        ['Last cleaning', now.disks.last_cleaning
          ? `${now.disks.last_cleaning.cleaning} ${now.disks.last_cleaning.succeeded ? 'succeeded' : `failed: ${now.disks.last_cleaning.message ?? ''}`} at ${now.disks.last_cleaning.at}`
          : 'never'],
        ['Release cleans', now.disks.cleaning.erases ?? `nothing: ${now.disks.cleaning.why}`],
        ['Labels', Object.entries(now.labels).map(([k, v]) => `${k}=${v}`).join(', ')],
      ], (row) => row),
      h('h2', null, 'NICs'),
      table('NICs', ['MAC', 'Details'], now.nics, (nic) => [String(nic.mac ?? ''), JSON.stringify(nic)]),
      h('h2', null, 'Media slots'),
      table('Media slots', ['Slot', 'Inserted', 'Image'], now.media_slots,
        (slot) => [String(slot.id ?? ''), String(slot.inserted ?? ''), String(slot.image ?? '')]));
  live(summary, async () => drawHost(await api.host(id)), drawHost(host));
  live(ops, async () => operationsTable((await api.operations({ host: id })).items));
}

async function tenantsPage() {
  const list = h('div');
  page('Tenants', list, form('Create a tenant', [field('Name', 'name', { required: true }),
    field('Description', 'description')], 'Create', async (v) => {
    const tenant = await api.tenantCreate({ name: v.name ?? '', description: v.description ?? null });
    location.hash = `#/tenants/${tenant.id}`;
  }));
  live(list, async () => table('Tenants', ['Name', 'Description', 'Created'],
    (await api.tenants()).items, (t) => [link(`/tenants/${t.id}`, t.name), t.description, t.created_at]));
}

/** @param {string} id */
async function tenantPage(id) {
  const tenant = await api.tenant(id);
  const pms = (await api.podManagers()).items;
  const tokens = h('div');
  const grants = h('div');
  const shown = h('div', { 'aria-live': 'polite' });
  const drawTokens = async () => {
    const items = (await api.tokens(id)).items;
    tokens.replaceChildren(table('Tokens', ['Id', 'Description', 'Created', 'Revoked', ''], items, (t) => [
      t.id, t.description, t.created_at, t.revoked_at ?? '',
      t.revoked_at ? '' : h('button', {
        type: 'button', class: 'danger',
        onclick: async () => {
          try {
            await api.tokenRevoke(id, t.id);
            await drawTokens();
          } catch (e) {
            shown.replaceChildren(errorBox(e));
          }
        },
      }, 'Revoke')]));
  };
  const drawGrants = async () => {
    const name = (/** @type {string} */ uuid) => pms.find((p) => p.uuid === uuid)?.name ?? uuid;
    grants.replaceChildren(table('Grants', ['Pod manager', 'Selector', 'Max hosts'],
      (await api.grants({ tenant: id })).items,
      (g) => [name(g.pod_manager), JSON.stringify(g.selector), g.max_hosts ?? 'no limit']));
  };
  page(`Tenant ${tenant.name}`,
    h('h2', null, 'Tokens'), tokens, shown,
    form('Create a token', [field('Description', 'description')], 'Create token', async (v) => {
      const created = await api.tokenCreate(id, { description: v.description ?? null });
      shown.replaceChildren(h('div', { class: 'notice', role: 'status' },
        h('p', null, 'The new token, shown this once (Podium keeps only its hash):'),
        h('p', { class: 'token' }, h('code', { id: 'new-token' }, created.token))));
      await drawTokens();
    }),
    h('h2', null, 'Grants'), grants,
    form('Grant a pod manager', [field('Pod manager', 'pod_manager', {
      type: 'select', options: pms.map((p) => [p.uuid, p.name]),
    }), field('Max hosts', 'max_hosts', { type: 'number', min: 0 })], 'Grant', async (v) => {
      await api.grantCreate({
        tenant: id, pod_manager: v.pod_manager ?? '',
        max_hosts: v.max_hosts ? Number(v.max_hosts) : null,
      });
      await drawGrants();
    }));
  await drawTokens();
  await drawGrants();
}

/**
 * A pool's usage. The counts are strings of digits (an IPv6 pool's go past 2^53, which a number
 * would round): BigInt for the arithmetic, grouped digits for the eye.
 * @param {S['UsageView']} usage
 */
function usageBar(usage) {
  const [total, allocated, pre, free] = [usage.total, usage.allocated, usage.pre_allocated, usage.free].map((n) => BigInt(n));
  const count = (/** @type {bigint} */ n) => n.toLocaleString('en-US');
  const part = (/** @type {string} */ cls, /** @type {bigint} */ n) => {
    const span = h('span', { class: cls });
    // Through the CSSOM: the console's CSP refuses style attributes.
    span.style.width = `${Number((10000n * n) / (total > 0n ? total : 1n)) / 100}%`;
    return span;
  };
  return h('div', null,
    h('div', { class: 'bar', role: 'img',
      'aria-label': `${count(allocated)} allocated, ${count(pre)} pre-allocated, ${count(free)} free of ${count(total)}` },
    part('allocated', allocated), part('pre', pre), part('free', free)),
    h('span', { class: 'muted' },
      `${count(allocated)} allocated · ${count(pre)} pre-allocated · ${count(free)} free of ${count(total)}`));
}

async function poolsPage() {
  const pms = (await api.podManagers()).items;
  const list = h('div');
  page('IP pools', list, form('Create a pool', [
    field('Name', 'name', { required: true }),
    field('Pod manager', 'pod_manager', { type: 'select', options: [['', 'none'], ...pms.map((p) => [p.uuid, p.name])] }),
    field('Subnet (CIDR)', 'subnet', { placeholder: '10.0.0.0/24' }),
    field('Range start', 'start'), field('Range end', 'end'),
    field('Prefix length', 'prefix', { type: 'number', min: 0, max: 128, required: true }),
    field('Gateway', 'gateway'),
    field('DNS servers (comma separated)', 'dns_servers'),
    field('IPAM plugin', 'plugin', { type: 'select', options: [['ipam-static', 'ipam-static'], ['ipam-dhcpless', 'ipam-dhcpless']] }),
  ], 'Create', async (v) => {
    /** @type {S['IpPoolCreate']} */
    const body = {
      name: v.name ?? '', prefix: Number(v.prefix),
      ranges: [v.subnet ? { subnet: v.subnet } : { start: v.start ?? '', end: v.end ?? '' }],
      gateway: v.gateway ?? null,
      dns_servers: (v.dns_servers ?? '').split(',').map((s) => s.trim()).filter(Boolean),
      pod_manager: v.pod_manager ?? null,
      plugin: { name: v.plugin ?? 'ipam-static' },
    };
    const pool = await api.poolCreate(body);
    location.hash = `#/pools/${pool.id}`;
  }));
  live(list, async () => table('Pools', ['Name', 'Subnet', 'Plugin', 'Usage'], (await api.pools()).items,
    (p) => [link(`/pools/${p.id}`, p.name), p.subnet, p.plugin.name, usageBar(p.usage)]));
}

/** @param {string} id */
async function poolPage(id) {
  const pool = await api.pool(id);
  const claims = h('div');
  page(`Pool ${pool.name}`, usageBar(pool.usage), h('h2', null, 'Addresses held'), claims);
  live(claims, async () => table('Addresses', ['Address', 'Owner', 'Since'], (await api.poolClaims(id)).items,
    (c) => [c.address, c.owner, c.created_at]));
}

async function pluginsPage() {
  const list = h('div');
  page('Plugins', list, form('Upload a plugin', [
    field('Component (.wasm)', 'file', { type: 'file', accept: '.wasm,application/wasm', required: true }),
  ], 'Upload', async (_v, el) => {
    const input = /** @type {HTMLInputElement} */ (el.elements.namedItem('file'));
    const file = input.files?.[0];
    if (!file) throw new Error('Choose a .wasm file first.');
    const plugin = await api.pluginUpload(await file.arrayBuffer());
    el.append(h('p', { class: 'notice', role: 'status' }, `Registered ${plugin.name} ${plugin.version} (${plugin.world}).`));
  }));
  live(list, async () => table('Plugins', ['Name', 'Version', 'World', 'Source', 'sha256'],
    (await api.plugins()).items, (p) => [p.name, p.version, p.world, String(p.source), h('code', null, p.sha256.slice(0, 16))]));
}

// --- claims (tenants and admins) ------------------------------------------------------------

/** A tenant's pod managers: where it may claim hosts, and what each grant allows. */
async function grantedPage() {
  const list = h('div');
  page('Granted pod managers', list);
  live(list, async () => table('Pod managers', ['Name', 'Location', 'Status', 'Hosts carry', 'At most', 'Network config'],
    (await api.grantedPodManagers()).items,
    (p) => [p.name, p.location, p.status,
      Object.entries(p.grant.selector).map(([k, v]) => `${k}=${v}`).join(', ') || 'any labels',
      p.grant.max_hosts === null || p.grant.max_hosts === undefined ? 'no limit' : `${p.grant.max_hosts} hosts`,
      p.network_config_owner]));
}

async function claimsPage() {
  const list = h('div');
  if (me?.role !== 'tenant') {
    // Claims are made by tenants: an admin follows them here.
    page('Claims', list);
    live(list, claimsTable);
    return;
  }
  const granted = (await api.grantedPodManagers()).items;
  page('Claims', list, form('Claim a host', [
    field('Pod manager', 'pod_manager', {
      type: 'select', options: [['', 'any granted one'], ...granted.map((p) => [p.uuid, p.location ? `${p.name} (${p.location})` : p.name])],
    }),
    field('Image URL', 'image', { required: true, type: 'url' }),
    field('Image format', 'format', { type: 'select', options: [['', 'default'], ['raw', 'raw'], ['qcow2', 'qcow2'], ['live-iso', 'live-iso']] }),
    field('Checksum (a raw or qcow2 image)', 'checksum'),
    field('Checksum type', 'checksum_type', { type: 'select', options: [['', 'none'], ['sha256', 'sha256'], ['sha512', 'sha512'], ['md5', 'md5 (where the site allows it)']] }),
    field('Root device hints (key=value, one per line: size, serial, wwn, name, model, vendor, rotational)', 'root_device', { type: 'textarea' }),
    field('Selector (key=value, one per line)', 'selector', { type: 'textarea' }),
    field('User data', 'user_data', { type: 'textarea' }),
    field('Network data (JSON, where the site lets tenants bring it)', 'network_data', { type: 'textarea' }),
  ], 'Claim', async (v) => {
    /** @type {Record<string, string>} */
    const selector = {};
    for (const line of (v.selector ?? '').split('\n')) {
      const [key, ...rest] = line.split('=');
      if (key && key.trim()) selector[key.trim()] = rest.join('=').trim();
    }
    /** @type {S['ClaimCreate']} */
    const body = { image: { url: v.image ?? '' }, selector };
    // The form's select offers the API's formats only.
    if (v.format) body.image.format = /** @type {S['ImageParams']['format']} */ (v.format);
    if (v.checksum) body.image.checksum = v.checksum.trim();
    if (v.checksum_type) body.image.checksum_type = /** @type {S['ImageParams']['checksum_type']} */ (v.checksum_type);
    if (v.root_device && v.root_device.trim()) {
      /** @type {S['RootDeviceHints']} */
      const hints = {};
      for (const line of v.root_device.split('\n')) {
        const [key, ...rest] = line.split('=');
        const name = (key ?? '').trim();
        const value = rest.join('=').trim();
        if (!name) continue;
        if (name === 'size') hints.size = Number(value);
        else if (name === 'rotational') hints.rotational = value === 'true';
        else if (name === 'serial' || name === 'wwn' || name === 'name' || name === 'model' || name === 'vendor') hints[name] = value;
        else throw new Error(`Unknown root device hint \`${name}\`: size, serial, wwn, name, model, vendor or rotational`);
      }
      body.image.root_device = hints;
    }
    if (v.pod_manager) body.pod_manager = v.pod_manager;
    if (v.user_data) body.user_data = v.user_data;
    if (v.network_data) {
      try {
        body.network_data = JSON.parse(v.network_data);
      } catch (e) {
        throw new Error(`The network data is not JSON: ${e}`);
      }
    }
    const claim = await api.claimCreate(body);
    location.hash = `#/claims/${claim.id}`;
  }));
  live(list, claimsTable);
}

async function claimsTable() {
  return table('Claims', ['Claim', 'State', 'Image', 'Host', 'Provisioning', 'Power'],
    (await api.claims()).items, (c) => [link(`/claims/${c.id}`, c.id), h('span', { class: 'state' }, c.state),
      c.image.url, c.host ? c.host.name : '', c.host ? c.host.provisioning_state : '', c.host ? c.host.power_state : '']);
}

/** @param {string} id */
async function claimPage(id) {
  let claim;
  try {
    claim = await api.claim(id);
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) {
      page('Not found', h('p', null, `There is no claim ${id} that you can see.`), link('/claims', 'Your claims'));
      return;
    }
    throw e;
  }
  const summary = h('div');
  const ops = h('div');
  const status = h('div', { 'aria-live': 'polite' });
  const rendered = h('div');
  const confirmRelease = h('button', {
    type: 'button', class: 'danger', hidden: true,
    onclick: async () => {
      try {
        await api.claimRelease(id);
        status.replaceChildren(h('p', { class: 'notice', role: 'status' }, 'Releasing: the host is powered off and freed.'));
      } catch (e) {
        status.replaceChildren(errorBox(e));
      }
    },
  }, 'Yes, release it');
  const online = (/** @type {boolean} */ on) => async () => {
    try {
      await api.claimUpdate(id, { online: on });
      status.replaceChildren(h('p', { class: 'notice', role: 'status' }, on ? 'Powering on.' : 'Powering off.'));
    } catch (e) {
      status.replaceChildren(errorBox(e));
    }
  };
  page(`Claim ${claim.id}`, summary,
    h('section', { class: 'card', 'aria-label': 'Actions' }, h('h2', null, 'Actions'),
      h('button', { type: 'button', class: 'secondary', onclick: online(true) }, 'Power on'),
      h('button', { type: 'button', class: 'secondary', onclick: online(false) }, 'Power off'),
      h('button', {
        type: 'button', class: 'danger',
        onclick: () => { confirmRelease.hidden = false; confirmRelease.focus(); },
      }, 'Release'), confirmRelease, status),
    h('h2', null, 'Operations'), ops, h('h2', null, 'Rendered documents'), rendered);
  const drawClaim = (/** @type {S['ClaimView']} */ now) =>
    table('Claim', ['Field', 'Value'], [
      ['State', h('span', { class: 'state', id: 'claim-state' }, now.state)],
      ['Why', now.reason ?? ''], ['Image', now.image.url], ['Online', String(now.online)],
      ['Host', now.host ? now.host.name : 'none yet'],
      ['Provisioning', h('span', { id: 'provisioning-state' }, now.host ? now.host.provisioning_state : '')],
      ['Power', h('span', { id: 'power-state' }, now.host ? now.host.power_state : '')],
      ['Addresses', now.host ? now.host.addresses.map((a) => String(a.address ?? '')).join(', ') : ''],
    ], (row) => row);
  live(summary, async () => drawClaim(await api.claim(id)), drawClaim(claim));
  live(ops, async () => operationsTable((await api.claimOperations(id)).items));
  api.claimRendered(id).then((docs) => rendered.replaceChildren(
    h('h3', null, 'meta_data.json'), h('pre', null, JSON.stringify(docs.meta_data, null, 2)),
    h('h3', null, 'network_data.json'), h('pre', null, JSON.stringify(docs.network_data, null, 2))))
    .catch((e) => rendered.replaceChildren(errorBox(e)));
}

// --- the shell ------------------------------------------------------------------------------

const ADMIN_NAV = [['/pod-managers', 'Pod managers'], ['/hosts', 'Hosts'], ['/operations', 'Operations'],
  ['/tenants', 'Tenants'], ['/pools', 'IP pools'], ['/plugins', 'Plugins'], ['/claims', 'Claims']];
const TENANT_NAV = [['/claims', 'Claims'], ['/granted', 'Granted pod managers']];

function drawNav() {
  const nav = /** @type {HTMLElement} */ (document.getElementById('nav'));
  const who = /** @type {HTMLElement} */ (document.getElementById('who'));
  if (!me) {
    nav.replaceChildren();
    who.replaceChildren();
    return;
  }
  const here = location.hash.slice(1).split('?')[0] ?? '';
  nav.replaceChildren(...(me.role === 'admin' ? ADMIN_NAV : TENANT_NAV).map(([route, text]) =>
    h('a', { href: `#${route}`, 'aria-current': here.startsWith(route ?? '') ? 'page' : null }, text)));
  who.replaceChildren(me.role === 'admin' ? 'admin' : `tenant ${me.tenant_name ?? me.tenant ?? ''}`, ' ',
    h('button', { type: 'button', class: 'secondary', onclick: () => { signOut(); me = null; drawNav(); location.hash = '#/sign-in'; } }, 'Sign out'));
}

async function route() {
  for (const timer of timers) window.clearInterval(timer);
  timers = [];
  const [path = '', search = ''] = location.hash.slice(1).split('?');
  const parts = path.split('/').filter(Boolean);
  if (!token() || parts[0] === 'sign-in') {
    me = null;
    drawNav();
    signInPage();
    return;
  }
  try {
    if (!me) me = await api.me();
    drawNav();
    const admin = me.role === 'admin';
    const [section, id] = parts;
    const adminOnly = ['pod-managers', 'hosts', 'operations', 'tenants', 'pools', 'plugins'];
    if (section && adminOnly.includes(section) && !admin) {
      page('Not available', h('p', null, 'This page is for admins.'), link('/claims', 'Your claims'));
    } else if (section === 'pod-managers') await (id ? podManagerPage(id) : podManagersPage());
    else if (section === 'hosts') await (id ? hostPage(id) : hostsPage(new URLSearchParams(search)));
    else if (section === 'operations') await operationsPage(new URLSearchParams(search));
    else if (section === 'tenants') await (id ? tenantPage(id) : tenantsPage());
    else if (section === 'pools') await (id ? poolPage(id) : poolsPage());
    else if (section === 'plugins') await pluginsPage();
    else if (section === 'claims') await (id ? claimPage(id) : claimsPage());
    else if (section === 'granted' && !admin) await grantedPage();
    else location.hash = admin ? '#/pod-managers' : '#/claims';
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) {
      signOut();
      me = null;
      location.hash = '#/sign-in';
      return;
    }
    if (e instanceof ApiError && e.status === 404) {
      page('Not found', errorBox(e));
      return;
    }
    page('Something went wrong', errorBox(e));
  }
  main.focus();
}

window.addEventListener('hashchange', route);
route();
