// @ts-check
/**
 * The console's only way to Podium: the same JSON API every other client uses, with the
 * signed-in token as the bearer token. The token lives in `sessionStorage` (this tab, until it
 * closes), never in `localStorage` or a cookie. The types come from `/openapi.json`
 * (`api-types.d.ts` is generated from it by the console test, which then type-checks this code:
 * a change of the API that the console does not follow fails CI).
 */

/** @typedef {import('./api-types').components['schemas']} S */

const KEY = 'podium.token';

/** @returns {string | null} */
export function token() {
  return sessionStorage.getItem(KEY);
}

/** @param {string} value */
export function signIn(value) {
  sessionStorage.setItem(KEY, value);
}

export function signOut() {
  sessionStorage.removeItem(KEY);
}

/** An error the API answered: its status, code, message and the field it names. */
export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {string} code
   * @param {string} message
   * @param {string | null} field
   */
  constructor(status, code, message, field) {
    super(message);
    this.status = status;
    this.code = code;
    this.field = field;
  }
}

/**
 * One request. A JSON body unless `contentType` says otherwise.
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 * @param {string} [contentType]
 * @returns {Promise<any>}
 */
async function call(method, path, body, contentType = 'application/json') {
  /** @type {Record<string, string>} */
  const headers = { Accept: 'application/json' };
  const bearer = token();
  if (bearer) headers.Authorization = `Bearer ${bearer}`;
  /** @type {BodyInit | undefined} */
  let payload;
  if (body !== undefined) {
    headers['Content-Type'] = contentType;
    payload = contentType === 'application/json' ? JSON.stringify(body) : /** @type {BodyInit} */ (body);
  }
  const reply = await fetch(path, { method, headers, body: payload });
  const text = await reply.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  if (!reply.ok) {
    const error = json && json.error ? json.error : {};
    throw new ApiError(reply.status, error.code ?? `http_${reply.status}`,
      error.message ?? (text || reply.statusText), error.field ?? null);
  }
  return json;
}

/** @param {Record<string, string | undefined>} query */
function qs(query) {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value) params.set(key, value);
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** @param {string} id */
const seg = (id) => encodeURIComponent(id);

export const api = {
  /** @returns {Promise<S['MeView']>} */
  me: () => call('GET', '/v1/me'),

  /** @returns {Promise<S['List_PodManagerView']>} */
  podManagers: () => call('GET', '/v1/pod_managers?limit=1000'),
  /** The pod managers a tenant was granted. @returns {Promise<S['List_GrantedPodManagerView']>} */
  grantedPodManagers: () => call('GET', '/v1/me/pod_managers?limit=1000'),
  /** @param {string} id @returns {Promise<S['PodManagerView']>} */
  podManager: (id) => call('GET', `/v1/pod_managers/${seg(id)}`),
  /** @param {S['PodManagerCreate']} body @returns {Promise<S['PodManagerView']>} */
  podManagerCreate: (body) => call('POST', '/v1/pod_managers', body),
  /** @param {string} id @param {S['PodManagerUpdate']} body @returns {Promise<S['PodManagerView']>} */
  podManagerUpdate: (id, body) => call('PATCH', `/v1/pod_managers/${seg(id)}`, body),
  /** @param {string} id */
  podManagerDelete: (id) => call('DELETE', `/v1/pod_managers/${seg(id)}`),
  /** @param {string} id @returns {Promise<S['OperationView']>} */
  podManagerSync: (id) => call('POST', `/v1/pod_managers/${seg(id)}/sync`),
  /** @param {string} id @returns {Promise<S['List_StatusChangeView']>} */
  statusHistory: (id) => call('GET', `/v1/pod_managers/${seg(id)}/status_history`),
  /** The pod manager's chassis tree. @param {string} id @returns {Promise<S['List_ChassisView']>} */
  chassis: (id) => call('GET', `/v1/pod_managers/${seg(id)}/chassis?limit=1000`),
  /** @param {string} id @returns {Promise<unknown>} */
  template: (id) => call('GET', `/v1/pod_managers/${seg(id)}/network_template`),
  /** @param {string} id @param {unknown} body @returns {Promise<unknown>} */
  templateSet: (id, body) => call('PUT', `/v1/pod_managers/${seg(id)}/network_template`, body),

  /** @param {Record<string, string | undefined>} query @returns {Promise<S['List_HostView']>} */
  hosts: (query) => call('GET', `/v1/hosts${qs({ limit: '1000', ...query })}`),
  /** @param {string} id @returns {Promise<S['HostView']>} */
  host: (id) => call('GET', `/v1/hosts/${seg(id)}`),
  /** @param {string} id @param {S['PowerParams']} body @returns {Promise<S['OperationView']>} */
  hostPower: (id, body) => call('POST', `/v1/hosts/${seg(id)}/power`, body),
  /** @param {string} id @param {S['BootParams']} body @returns {Promise<S['OperationView']>} */
  hostBoot: (id, body) => call('POST', `/v1/hosts/${seg(id)}/boot`, body),
  /** @param {string} id @returns {Promise<S['OperationView']>} */
  hostInspect: (id) => call('POST', `/v1/hosts/${seg(id)}/inspect`),
  /** @param {string} id @returns {Promise<S['Bios']>} */
  hostBios: (id) => call('GET', `/v1/hosts/${seg(id)}/bios`),
  /** @param {string} id @returns {Promise<S['SecureBoot']>} */
  hostSecureBoot: (id) => call('GET', `/v1/hosts/${seg(id)}/secure_boot`),
  /** @param {string} id @returns {Promise<S['Firmware']>} */
  hostFirmware: (id) => call('GET', `/v1/hosts/${seg(id)}/firmware`),
  /** @param {string} id @returns {Promise<S['HardwareInventory']>} */
  hostHardware: (id) => call('GET', `/v1/hosts/${seg(id)}/hardware`),
  /** @param {string} id @param {S['MaintenanceParams']} body @returns {Promise<S['HostView']>} */
  maintenanceOn: (id, body) => call('PUT', `/v1/hosts/${seg(id)}/maintenance`, body),
  /** @param {string} id @returns {Promise<S['HostView']>} */
  maintenanceOff: (id) => call('DELETE', `/v1/hosts/${seg(id)}/maintenance`),

  /** @param {Record<string, string | undefined>} query @returns {Promise<S['List_OperationView']>} */
  operations: (query) => call('GET', `/v1/operations${qs({ limit: '50', ...query })}`),
  /** @param {string} id @returns {Promise<S['OperationView']>} */
  operation: (id) => call('GET', `/v1/operations/${seg(id)}`),

  /** @returns {Promise<S['List_TenantView']>} */
  tenants: () => call('GET', '/v1/tenants?limit=1000'),
  /** @param {string} id @returns {Promise<S['TenantView']>} */
  tenant: (id) => call('GET', `/v1/tenants/${seg(id)}`),
  /** @param {S['TenantCreate']} body @returns {Promise<S['TenantView']>} */
  tenantCreate: (body) => call('POST', '/v1/tenants', body),
  /** @param {string} id @returns {Promise<S['List_TokenView']>} */
  tokens: (id) => call('GET', `/v1/tenants/${seg(id)}/tokens`),
  /** @param {string} id @param {S['TokenCreate']} body @returns {Promise<S['TokenCreatedView']>} */
  tokenCreate: (id, body) => call('POST', `/v1/tenants/${seg(id)}/tokens`, body),
  /** @param {string} id @param {string} token */
  tokenRevoke: (id, token) => call('DELETE', `/v1/tenants/${seg(id)}/tokens/${seg(token)}`),

  /** @param {Record<string, string | undefined>} query @returns {Promise<S['List_GrantView']>} */
  grants: (query) => call('GET', `/v1/grants${qs({ limit: '1000', ...query })}`),
  /** @param {S['GrantCreate']} body @returns {Promise<S['GrantView']>} */
  grantCreate: (body) => call('POST', '/v1/grants', body),
  /** @param {string} id */
  grantDelete: (id) => call('DELETE', `/v1/grants/${seg(id)}`),

  /** @returns {Promise<S['List_IpPoolView']>} */
  pools: () => call('GET', '/v1/ip_pools?limit=1000'),
  /** @param {string} id @returns {Promise<S['IpPoolView']>} */
  pool: (id) => call('GET', `/v1/ip_pools/${seg(id)}`),
  /** @param {S['IpPoolCreate']} body @returns {Promise<S['IpPoolView']>} */
  poolCreate: (body) => call('POST', '/v1/ip_pools', body),
  /** @param {string} id @returns {Promise<S['List_IpClaimView']>} */
  poolClaims: (id) => call('GET', `/v1/ip_pools/${seg(id)}/claims?limit=1000`),

  /** @returns {Promise<S['PluginList']>} */
  plugins: () => call('GET', '/v1/plugins'),
  /** @param {ArrayBuffer} wasm @returns {Promise<S['PluginView']>} */
  pluginUpload: (wasm) => call('POST', '/v1/plugins', wasm, 'application/wasm'),

  /** @returns {Promise<S['List_ClaimView']>} */
  claims: () => call('GET', '/v1/claims'),
  /** @param {string} id @returns {Promise<S['ClaimView']>} */
  claim: (id) => call('GET', `/v1/claims/${seg(id)}`),
  /** @param {S['ClaimCreate']} body @returns {Promise<S['ClaimView']>} */
  claimCreate: (body) => call('POST', '/v1/claims', body),
  /** @param {string} id @param {S['ClaimUpdate']} body @returns {Promise<S['ClaimView']>} */
  claimUpdate: (id, body) => call('PATCH', `/v1/claims/${seg(id)}`, body),
  /** @param {string} id @returns {Promise<unknown>} */
  claimRelease: (id) => call('DELETE', `/v1/claims/${seg(id)}`),
  /** @param {string} id @returns {Promise<S['List_OperationView']>} */
  claimOperations: (id) => call('GET', `/v1/claims/${seg(id)}/operations`),
  /** @param {string} id @returns {Promise<S['RenderedView']>} */
  claimRendered: (id) => call('GET', `/v1/claims/${seg(id)}/rendered`),
};
