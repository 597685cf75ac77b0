// @ts-check
/**
 * The console's DOM helpers. Text always goes in as text nodes, never as HTML: nothing the API
 * answers can inject markup.
 */

/**
 * An element with attributes (`on…` ones are event listeners; `false` and `null` are left out)
 * and children (strings become text nodes; `null` and `false` are skipped; arrays are flattened).
 * @param {string} tag
 * @param {Record<string, any> | null} [attrs]
 * @param {...any} children
 * @returns {HTMLElement}
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') {
      el.addEventListener(key.slice(2), value);
    } else if (key === 'value' && 'value' in el) {
      /** @type {any} */ (el).value = value;
    } else {
      el.setAttribute(key, value === true ? '' : String(value));
    }
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

/**
 * A table: one header row, then one row per item.
 * @template T
 * @param {string} caption what the table lists (read by screen readers)
 * @param {string[]} headers
 * @param {T[]} items
 * @param {(item: T) => any[]} cells
 */
export function table(caption, headers, items, cells) {
  if (items.length === 0) return h('p', { class: 'muted' }, `No ${caption.toLowerCase()}.`);
  return h('table', null,
    h('caption', { class: 'sr-only' }, caption),
    h('thead', null, h('tr', null, headers.map((x) => h('th', { scope: 'col' }, x)))),
    h('tbody', null, items.map((item) => h('tr', null, cells(item).map((c) => h('td', null, c))))));
}

/**
 * A labelled form field.
 * @param {string} label
 * @param {string} name
 * @param {Record<string, any>} [attrs]
 */
export function field(label, name, attrs = {}) {
  const id = `f-${name}`;
  const control = attrs.type === 'textarea'
    ? h('textarea', { id, name, ...attrs, type: null })
    : attrs.type === 'select'
      // The option of `attrs.value` selected (a select's value set before its options is lost).
      ? h('select', { id, name, ...attrs, type: null, options: null, value: null },
        (attrs.options ?? []).map((/** @type {[string, string]} */ [value, text]) =>
          h('option', { value, selected: value === attrs.value }, text)))
      : h('input', { id, name, type: 'text', ...attrs });
  return h('div', null, h('label', { for: id }, label), control);
}

/**
 * The values of a form's named fields, as strings (files and empty strings left out).
 * @param {HTMLFormElement} form
 * @returns {Record<string, string>}
 */
export function values(form) {
  /** @type {Record<string, string>} */
  const out = {};
  for (const [key, value] of new FormData(form)) {
    if (typeof value === 'string' && value.trim() !== '') out[key] = value.trim();
  }
  return out;
}

/** A link inside the console. @param {string} route @param {any} text */
export function link(route, text) {
  return h('a', { href: `#${route}` }, text);
}

/**
 * JSON as `JSON.stringify(value, null, 2)` writes it, and the line (from 1) where each path
 * (`links[3].mode`, as the API's errors name fields) starts.
 * @param {unknown} value
 * @returns {{ text: string, lines: Map<string, number> }}
 */
export function pretty(value) {
  /** @type {string[]} */
  const out = [];
  const lines = new Map();
  /** @param {unknown} v @param {string} path @param {string} indent @param {string} head @param {string} tail */
  const walk = (v, path, indent, head, tail) => {
    if (path) lines.set(path, out.length + 1);
    if (Array.isArray(v) && v.length > 0) {
      out.push(`${indent}${head}[`);
      v.forEach((item, i) => walk(item, `${path}[${i}]`, `${indent}  `, '', i < v.length - 1 ? ',' : ''));
      out.push(`${indent}]${tail}`);
    } else if (v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length > 0) {
      out.push(`${indent}${head}{`);
      const entries = Object.entries(v);
      entries.forEach(([key, item], i) => walk(item, path ? `${path}.${key}` : key, `${indent}  `,
        `${JSON.stringify(key)}: `, i < entries.length - 1 ? ',' : ''));
      out.push(`${indent}}${tail}`);
    } else {
      out.push(`${indent}${head}${JSON.stringify(v)}${tail}`);
    }
  };
  walk(value, '', '', '', '');
  return { text: out.join('\n'), lines };
}
