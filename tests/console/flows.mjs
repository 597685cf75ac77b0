// The web console in a real browser: Debian's Chromium driven by Playwright, against a real
// `podium serve` and sushy-tools (started by tests/console/main.rs, which passes their addresses
// in the environment). Each page is scanned by axe-core; screenshots of the main pages go to
// $SCREENSHOTS. Exits non-zero, saying what a user would have seen, when a step fails.
//
//   PODIUM_URL ADMIN_TOKEN BMC_URL IMAGE_URL SCREENSHOTS node tests/console/flows.mjs

import fs from 'node:fs';
import { chromium } from 'playwright-core';

const { PODIUM_URL, ADMIN_TOKEN, BMC_URL, IMAGE_URL, SCREENSHOTS } = process.env;
const axeSource = fs.readFileSync(new URL('./node_modules/axe-core/axe.min.js', import.meta.url), 'utf8');
const STEP_TIMEOUT = 60_000;
// The emulator takes any credentials; the console must never show these again.
const BMC_PASSWORD = 'bmc-secret-5f1c9e';

function log(...args) {
  console.log(new Date().toISOString().slice(11, 23), ...args);
}

/** Polls `check` until it answers something truthy. */
async function until(what, check, timeout = STEP_TIMEOUT) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      last = await check();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`${what}: not after ${timeout} ms (last: ${last})`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The JSON API, straight (to set up what is not under test, and to check what the UI did). */
async function api(token, method, path, body) {
  const reply = await fetch(`${PODIUM_URL}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await reply.text();
  return { status: reply.status, body: text ? JSON.parse(text) : null };
}

/** axe-core's scan of the page as it is: no violation of WCAG 2 A/AA rules. */
async function accessible(page, name) {
  await page.evaluate(axeSource);
  const result = await page.evaluate(() =>
    // eslint-disable-next-line no-undef
    axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa'] } }));
  if (result.violations.length) {
    const lines = result.violations.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join('; ')})`);
    throw new Error(`accessibility of ${name}:\n${lines.join('\n')}`);
  }
  const title = await page.title();
  if (!title || title === 'Podium') throw new Error(`${name}: the page has no title of its own (${title})`);
  log('axe: no violations on', name, `(“${title}”)`);
}

async function shot(page, name) {
  if (!SCREENSHOTS) return;
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: `${SCREENSHOTS}/${name}.png`, fullPage: true });
}

async function signIn(page, token) {
  await page.goto(`${PODIUM_URL}/ui/`);
  await page.getByLabel('Token', { exact: true }).fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await until('signed in', async () => (await page.getByRole('button', { name: 'Sign out' }).count()) > 0);
}

const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
try {
  // --- the admin --------------------------------------------------------------------------
  const admin = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  const consoleErrors = [];
  admin.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  await admin.goto(`${PODIUM_URL}/ui/`);
  await admin.getByLabel('Token', { exact: true }).waitFor();
  await accessible(admin, 'sign-in');
  await shot(admin, 'sign-in');
  // A wrong token: the API's answer, and still signed out.
  await admin.getByLabel('Token', { exact: true }).fill('pdm_not-a-token');
  await admin.getByRole('button', { name: 'Sign in' }).click();
  await admin.getByRole('alert').waitFor();
  log('a wrong token:', await admin.getByRole('alert').innerText());
  // With the keyboard alone: Tab to the token, type it, Enter.
  await admin.goto(`${PODIUM_URL}/ui/#/sign-in`);
  await admin.getByLabel('Token', { exact: true }).waitFor();
  await until('the token field reached with Tab', async () => {
    await admin.keyboard.press('Tab');
    return admin.evaluate(() => document.activeElement?.getAttribute('name') === 'token');
  }, 5_000);
  await admin.keyboard.type(ADMIN_TOKEN);
  await admin.keyboard.press('Enter');
  await until('signed in with the keyboard', async () => (await admin.getByRole('button', { name: 'Sign out' }).count()) > 0);
  const stored = await admin.evaluate(() => [localStorage.length, sessionStorage.getItem('podium.token') !== null]);
  if (stored[0] !== 0 || !stored[1]) throw new Error(`the token must be in sessionStorage only: ${stored}`);

  log('admin: registers a pod manager');
  await admin.getByLabel('Name', { exact: true }).fill('lab');
  await admin.getByLabel('Redfish service URL').fill(BMC_URL);
  await admin.getByLabel('Location').fill('rack 12');
  await admin.getByLabel('BMC user').fill('root');
  await admin.getByLabel('BMC password').fill(BMC_PASSWORD);
  await admin.getByRole('button', { name: 'Register' }).click();
  await admin.getByRole('heading', { name: 'Pod manager lab' }).waitFor();
  await until('the pod manager online', async () => (await admin.locator('main').innerText()).includes('online'));
  const shownPm = await admin.content();
  if (shownPm.includes(BMC_PASSWORD) || !shownPm.includes('set (never shown)')) {
    throw new Error('the BMC password is shown, or its presence is not');
  }
  await accessible(admin, 'pod manager');
  await shot(admin, 'pod-manager');
  // Sync now: the operation's progress, to its end.
  await admin.getByRole('button', { name: 'Sync now' }).click();
  await admin.getByText(/Operation sync: (queued|running|succeeded)/).waitFor();
  await admin.getByText('Operation sync: succeeded').waitFor();
  // The driver's configuration, validated by the driver plugin through the API.
  await admin.getByLabel('Configuration (JSON)').first().fill('{"no_such_setting": 1}');
  await admin.getByRole('button', { name: 'Save', exact: true }).nth(1).click();
  const configError = await admin.getByRole('form', { name: 'driver plugin' }).getByRole('alert').innerText();
  if (!configError.includes('no_such_setting')) throw new Error(`the driver config's error: ${configError}`);
  log('the driver refuses its config:', configError);
  // This site has no deploy ramdisk to clean disks with: the page says a release cannot clean,
  // and the admin turns cleaning off, as such a site must.
  if (!(await admin.locator('main').innerText()).includes('no deploy ramdisk')) {
    throw new Error('the pod manager does not say that it cannot clean');
  }
  await admin.getByLabel('Cleaning between tenants').selectOption('disabled');
  await admin.getByRole('button', { name: 'Save', exact: true }).first().click();
  await until('cleaning disabled', async () => (await admin.locator('main').innerText()).includes('disabled; in effect: nothing'));
  // The network template: the API's validation error, at the line it concerns.
  await admin.getByLabel('Template (JSON)').fill(JSON.stringify({
    links: [{ id: 'boot', type: 'phy', nic: 'boot' }],
    networks: [{ id: 'prod', type: 'ipv4', link: 'boot', pool: 'no-such-pool' }],
  }));
  await admin.getByRole('button', { name: 'Save template' }).click();
  const templateError = await admin.getByRole('form', { name: 'Network template' }).getByRole('alert').innerText();
  if (!templateError.startsWith('line 14:') || !templateError.includes('no-such-pool') || !templateError.includes('networks[0].pool')) {
    throw new Error(`the template's error: ${templateError}`);
  }
  const pm = admin.url().split('/').pop();
  await admin.getByRole('link', { name: 'Its hosts' }).click();
  await until('its hosts available', async () => (await admin.getByRole('cell', { name: 'available' }).count()) >= 2);
  await accessible(admin, 'hosts');
  await shot(admin, 'hosts');
  await admin.getByRole('link', { name: 'node-1' }).click();
  await admin.getByRole('heading', { name: 'Host node-1' }).waitFor();
  await until('the host page shows its NIC', async () => (await admin.locator('main').innerText()).includes('52:54:00:00:00:01'));
  // The emulator's fake driver has no BIOS settings: the console says so, in the API's words.
  await admin.getByRole('button', { name: 'Read BIOS, secure boot, firmware and inventory' }).click();
  await until('the BIOS read answered', async () =>
    (await admin.getByRole('region', { name: 'Hardware settings' }).innerText()).includes('no BIOS settings Podium can reach'));
  await accessible(admin, 'host');

  log('admin: a tenant, its token (shown once) and a grant');
  await admin.getByRole('link', { name: 'Tenants' }).click();
  await admin.getByLabel('Name', { exact: true }).fill('acme');
  await admin.getByRole('button', { name: 'Create', exact: true }).click();
  await admin.getByRole('heading', { name: 'Tenant acme' }).waitFor();
  await admin.getByLabel('Pod manager', { exact: true }).selectOption({ label: 'lab' });
  await admin.getByRole('button', { name: 'Grant' }).click();
  await until('the grant listed', async () => (await admin.getByRole('cell', { name: 'lab' }).count()) > 0);
  await accessible(admin, 'tenant');
  await admin.getByRole('button', { name: 'Create token' }).click();
  const tenantToken = (await admin.locator('#new-token').innerText()).trim();
  if (!tenantToken.startsWith('pdm_')) throw new Error(`no token shown: ${tenantToken}`);
  await admin.reload();
  await admin.getByRole('heading', { name: 'Tenant acme' }).waitFor();
  if ((await admin.locator('main').innerText()).includes(tenantToken)) throw new Error('the token is shown again');

  log('admin: a pool');
  await admin.getByRole('link', { name: 'IP pools' }).click();
  await admin.getByLabel('Name', { exact: true }).fill('prod');
  await admin.getByLabel('Pod manager', { exact: true }).selectOption({ label: 'lab' });
  await admin.getByLabel('Subnet (CIDR)').fill('10.20.0.0/24');
  await admin.getByLabel('Prefix length').fill('24');
  await admin.getByLabel('Gateway').fill('10.20.0.1');
  await admin.getByLabel('DNS servers (comma separated)').fill('10.20.0.53');
  await admin.getByRole('button', { name: 'Create', exact: true }).click();
  await admin.getByRole('heading', { name: 'Pool prod' }).waitFor();
  await accessible(admin, 'pool');
  // An IPv6 /64: 2^64 - 2 addresses, past what a JavaScript number holds, shown exactly.
  const v6 = await api(ADMIN_TOKEN, 'POST', '/v1/ip_pools', {
    name: 'v6', ranges: [{ subnet: '2001:db8:1::/64' }], prefix: 64, gateway: '2001:db8:1::1', dns_servers: [],
  });
  if (v6.status !== 201) throw new Error(`the v6 pool: ${JSON.stringify(v6.body)}`);
  await admin.goto(`${PODIUM_URL}/ui/#/pools/${v6.body.id}`);
  await admin.getByText('0 allocated · 0 pre-allocated · 18,446,744,073,709,551,614 free of 18,446,744,073,709,551,614').waitFor();
  // The site's template, on that pool.
  await admin.goto(`${PODIUM_URL}/ui/#/pod-managers/${pm}`);
  await admin.getByLabel('Template (JSON)').fill(JSON.stringify({
    links: [{ id: 'boot', type: 'phy', nic: 'boot' }],
    networks: [{ id: 'prod', type: 'ipv4', link: 'boot', pool: 'prod', default_route: true }],
    dns: { from_pools: true },
  }));
  await admin.getByRole('button', { name: 'Save template' }).click();
  await admin.getByText('The template is saved.').waitFor();

  log('admin: the rack view lists the chassis, each a link to the hosts in it');
  await admin.getByRole('heading', { name: 'Racks and chassis' }).waitFor();
  const rack = admin.locator('ul.tree').getByRole('link').first();
  await rack.waitFor();
  await rack.click();
  await admin.getByRole('heading', { name: 'Hosts' }).waitFor();
  if (!admin.url().includes('chassis=')) throw new Error(`the chassis link went to ${admin.url()}`);
  await admin.locator('table tbody tr').first().waitFor();

  log('admin: a broken plugin is refused with the API\'s reason');
  const broken = Buffer.from('this is not a WebAssembly component');
  const expected = await fetch(`${PODIUM_URL}/v1/plugins`, {
    method: 'POST', headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/wasm' }, body: broken,
  }).then((r) => r.json());
  await admin.getByRole('link', { name: 'Plugins' }).click();
  await admin.getByLabel('Component (.wasm)').setInputFiles({ name: 'broken.wasm', mimeType: 'application/wasm', buffer: broken });
  await admin.getByRole('button', { name: 'Upload' }).click();
  const refusal = await admin.getByRole('alert').innerText();
  if (!refusal.includes(expected.error.message)) throw new Error(`the page says “${refusal}”, the API “${expected.error.message}”`);
  await accessible(admin, 'plugins');
  await shot(admin, 'plugins');

  // --- the tenant ---------------------------------------------------------------------------
  const tenant = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  tenant.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  await signIn(tenant, tenantToken);
  const offered = await tenant.getByRole('navigation').getByRole('link').allInnerTexts();
  if (offered.join('|') !== 'Claims|Granted pod managers') throw new Error(`a tenant is offered ${offered.join(', ')}`);
  // The header names the tenant, not its id.
  await tenant.locator('#who').getByText('tenant acme').waitFor();
  await tenant.goto(`${PODIUM_URL}/ui/#/pod-managers`);
  await tenant.getByText('This page is for admins.').waitFor();

  log('tenant: the pod managers it was granted');
  await tenant.getByRole('navigation').getByRole('link', { name: 'Granted pod managers' }).click();
  await tenant.getByRole('cell', { name: 'lab', exact: true }).waitFor();
  const grantedText = await tenant.locator('main').innerText();
  if (grantedText.includes(BMC_URL)) throw new Error('the BMC URL is shown to a tenant');
  await accessible(tenant, 'granted pod managers');

  log('tenant: claims a host');
  await tenant.goto(`${PODIUM_URL}/ui/#/claims`);
  await tenant.getByLabel('Pod manager').selectOption({ label: 'lab (rack 12)' });
  await tenant.getByLabel('Image URL').fill(IMAGE_URL);
  await tenant.getByLabel('Image format').selectOption('live-iso');
  await tenant.getByLabel('User data').fill('#cloud-config\n');
  await tenant.getByRole('button', { name: 'Claim', exact: true }).click();
  await tenant.waitForURL(/#\/claims\/[0-9a-f-]{36}$/);
  const claim = tenant.url().split('/').pop();
  await tenant.getByRole('heading', { level: 1, name: `Claim ${claim}` }).waitFor();
  await until('provisioned, live', async () => (await tenant.locator('#provisioning-state').innerText()) === 'provisioned');
  await until('power on, live', async () => (await tenant.locator('#power-state').innerText()) === 'on');
  await accessible(tenant, 'claim');
  await shot(tenant, 'claim');
  // What the emulator says: on, with the image in its CD.
  const systems = await (await fetch(`${BMC_URL}/redfish/v1/Systems`)).json();
  let inCd = false;
  let on = false;
  for (const member of systems.Members) {
    const system = await (await fetch(`${BMC_URL}${member['@odata.id']}`)).json();
    const cd = await (await fetch(`${BMC_URL}${system['@odata.id']}/VirtualMedia/Cd`)).json();
    if (cd.Image === IMAGE_URL && cd.Inserted) {
      inCd = true;
      on = system.PowerState === 'On';
    }
  }
  if (!inCd || !on) throw new Error(`the emulator: image in a CD ${inCd}, that system on ${on}`);

  log('another tenant cannot see the claim by URL');
  const other = await api(ADMIN_TOKEN, 'POST', '/v1/tenants', { name: 'other' });
  const otherToken = (await api(ADMIN_TOKEN, 'POST', `/v1/tenants/${other.body.id}/tokens`, {})).body.token;
  const stranger = await (await browser.newContext()).newPage();
  await signIn(stranger, otherToken);
  await stranger.goto(`${PODIUM_URL}/ui/#/claims/${claim}`);
  await stranger.getByRole('heading', { name: 'Not found' }).waitFor();

  log('tenant: powers off, then releases (with a confirmation)');
  await tenant.getByRole('button', { name: 'Power off' }).click();
  await until('power off, live', async () => (await tenant.locator('#power-state').innerText()) === 'off');
  // The release, with the keyboard: the confirmation takes the focus.
  await tenant.getByRole('button', { name: 'Release', exact: true }).focus();
  await tenant.keyboard.press('Enter');
  const focused = await tenant.evaluate(() => document.activeElement?.textContent);
  if (focused !== 'Yes, release it') throw new Error(`the confirmation does not take the focus: ${focused}`);
  await tenant.keyboard.press('Enter');
  await tenant.getByText('Releasing').waitFor();
  await until('the claim gone', async () => (await api(tenantToken, 'GET', `/v1/claims/${claim}`)).status === 404);
  if ((await api(ADMIN_TOKEN, 'GET', `/v1/operations?claim=${claim}`)).body.items.every((o) => o.kind !== 'deprovision')) {
    throw new Error('the release ran no deprovision');
  }

  log('admin: operations by status and kind');
  await admin.goto(`${PODIUM_URL}/ui/#/operations`);
  await admin.getByLabel('Status').selectOption({ label: 'succeeded' });
  await admin.getByLabel('Kind').selectOption('deprovision');
  await admin.getByRole('button', { name: 'Filter' }).click();
  await admin.waitForURL(/#\/operations\?status=succeeded&kind=deprovision$/);
  await until('the release\'s deprovisioning listed', async () => {
    const rows = await admin.locator('main table tbody tr').allInnerTexts();
    return rows.length > 0 && rows.every((r) => r.startsWith('deprovision') && r.includes('succeeded'));
  });
  await accessible(admin, 'operations');
  await shot(admin, 'operations');

  // The admin's host list, after all that (for the screenshot) and the pod managers page.
  await admin.goto(`${PODIUM_URL}/ui/#/pod-managers`);
  await until('the list', async () => (await admin.getByRole('link', { name: 'lab' }).count()) > 0);
  await accessible(admin, 'pod managers');
  await shot(admin, 'pod-managers');
  await admin.goto(`${PODIUM_URL}/ui/#/pools`);
  await until('the pools', async () => (await admin.getByRole('link', { name: 'prod' }).count()) > 0);
  await shot(admin, 'pools');
  // 409: the BIOS the fake driver does not have, read on the host page.
  const unexpected = consoleErrors.filter((e) => !['401', '403', '404', '409', '422'].some((s) => e.includes(s)));
  if (unexpected.length) throw new Error(`errors in the browser console:\n${unexpected.join('\n')}`);
  log('done', JSON.stringify({ pod_manager: pm, claim }));
} finally {
  await browser.close();
}
