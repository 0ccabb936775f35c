// lazuli console: a single-page browser of the four storage services.
//
// Every action is an Azure Storage REST request sent to the console's
// proxy (/api/{service}/{account}/...), which signs it with the account's
// Shared Key and runs it through the service's own handler. Names and
// values from storage are only ever put in the page as text (textContent),
// never as markup, so stored data cannot inject script.
'use strict';

const main = document.getElementById('main');
const crumbs = document.getElementById('crumbs');
const notice = document.getElementById('notice');
const busy = document.getElementById('busy');

// Blocks and ranges are uploaded in pieces of this size (File's Put Range
// takes at most 4 MiB).
const CHUNK = 4 << 20;
const PAGE = 100;

// ---------- DOM helpers ----------

// h builds an element: attrs sets properties and attributes (on* keys add
// listeners), children are nodes, strings (as text) or arrays of them.
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'value' || k === 'checked') el[k] = v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : String(c));
  }
}

function show(...children) {
  main.replaceChildren();
  append(main, children);
}

function say(text, kind) {
  notice.textContent = text;
  notice.className = kind || 'ok';
  notice.hidden = !text;
}

function kv(rows) {
  return h('table', { class: 'kv' }, rows.filter(r => r && r[1] !== undefined && r[1] !== null && r[1] !== '')
    .map(([k, v]) => h('tr', {}, h('th', {}, k), h('td', {}, v))));
}

function list(headers, rows, empty, testid) {
  if (!rows.length) return h('div', { class: 'empty', 'data-test': testid }, empty);
  return h('table', { class: 'list', 'data-test': testid },
    h('thead', {}, h('tr', {}, headers.map(x => h('th', {}, x)))),
    h('tbody', {}, rows));
}

function button(label, onclick, cls, testid) {
  return h('button', { type: 'button', class: cls, onclick: guard(onclick), 'data-test': testid }, label);
}

// guard runs an action with the busy sign on and reports its error.
function guard(fn) {
  return async (ev) => {
    if (ev && ev.preventDefault) ev.preventDefault();
    busy.hidden = false;
    try {
      await fn(ev);
    } catch (e) {
      say(e.message || String(e), 'error');
    } finally {
      busy.hidden = true;
    }
  };
}

function size(n) {
  n = Number(n);
  if (!isFinite(n)) return '';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return (i ? n.toFixed(1) : String(n)) + ' ' + units[i];
}

function date(s) {
  if (!s) return '';
  const d = new Date(s);
  return isNaN(d) ? s : d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

// ---------- routing ----------

// Routes are '#/service/segment/segment?query'; each segment is encoded
// with encodeURIComponent, so names may hold '/' and any character.
function link(parts, query) {
  let s = '#/' + parts.map(encodeURIComponent).join('/');
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query || {})) if (v !== undefined && v !== null && v !== '') q.set(k, v);
  const qs = q.toString();
  return qs ? s + '?' + qs : s;
}

function go(parts, query) {
  const target = link(parts, query);
  if (location.hash === target) route();
  else location.hash = target;
}

function parseHash() {
  const raw = location.hash.replace(/^#\/?/, '');
  const [p, qs] = raw.split('?', 2);
  const parts = p ? p.split('/').map(decodeURIComponent) : [];
  return { parts, query: Object.fromEntries(new URLSearchParams(qs || '')) };
}

function setCrumbs(items) {
  crumbs.replaceChildren();
  items.forEach((it, i) => {
    if (i) crumbs.append(h('span', { class: 'sep' }, '›'));
    crumbs.append(i === items.length - 1 ? h('span', { class: 'here' }, it[0]) : h('a', { href: it[1] }, it[0]));
  });
  document.title = items.length ? items[items.length - 1][0] + ' · lazuli console' : 'lazuli console';
}

const serviceTitle = { blob: 'Blob containers', queue: 'Queues', table: 'Tables', file: 'File shares' };

function baseCrumbs(service, account) {
  const c = [['Accounts', '#/']];
  if (account) c.push([account, link(['account', account])]);
  if (service) c.push([serviceTitle[service], link([service, account])]);
  return c;
}

let routing = 0;
async function route() {
  const { parts, query } = parseHash();
  const ticket = ++routing;
  busy.hidden = false;
  try {
    const [kind, account, ...rest] = parts;
    switch (kind) {
      case undefined: case '': await viewHome(); break;
      case 'account': await viewAccount(account); break;
      case 'blob':
        if (rest.length === 0) await viewContainers(account, query);
        else if (rest.length === 1) await viewBlobs(account, rest[0], query);
        else await viewBlob(account, rest[0], rest[1], query);
        break;
      case 'queue':
        if (rest.length === 0) await viewQueues(account, query);
        else await viewQueue(account, rest[0]);
        break;
      case 'table':
        if (rest.length === 0) await viewTables(account, query);
        else await viewTable(account, rest[0], query);
        break;
      case 'file':
        if (rest.length === 0) await viewShares(account, query);
        else await viewDirectory(account, rest[0], rest[1] || '', query);
        break;
      default: show(h('p', {}, 'Unknown page.'));
    }
  } catch (e) {
    if (ticket === routing) {
      show(h('div', { class: 'card' }, h('h1', {}, 'Could not load this page'), h('pre', { 'data-test': 'load-error' }, e.message || String(e))));
    }
  } finally {
    if (ticket === routing) busy.hidden = true;
  }
}

window.addEventListener('hashchange', () => { say(''); route(); });

// ---------- REST through the proxy ----------

class AzureError extends Error {
  constructor(status, code, message) {
    super(`${status} ${code || ''}${message ? ': ' + message.split('\n')[0] : ''}`);
    this.status = status;
    this.code = code;
  }
}

// encodePath encodes a blob name or file path segment by segment.
function encodePath(p) {
  return p.split('/').map(encodeURIComponent).join('/');
}

// requestID is a client request id for the access log. (crypto.randomUUID
// exists only in secure contexts, which plain HTTP beyond loopback is not.)
function requestID() {
  return 'console-' + Date.now().toString(36) + '-' + Math.random().toString(36).slice(2, 10);
}

// api sends one REST request; path is already encoded. It throws an
// AzureError for an error status, with the service's code and message.
async function api(service, account, path, opts = {}) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(opts.query || {})) {
    if (v !== undefined && v !== null && v !== '') q.append(k, v);
  }
  const qs = q.toString().replace(/\+/g, '%20');
  const url = `api/${service}/${encodeURIComponent(account)}/${path}${qs ? '?' + qs : ''}`;
  // The access log names the console as the client of each request.
  const headers = Object.assign({ 'X-Lazuli-Console': '1', 'x-ms-client-request-id': requestID() }, opts.headers || {});
  const res = await fetch(url, { method: opts.method || 'GET', headers, body: opts.body, cache: 'no-store', credentials: 'same-origin' });
  if (!res.ok && !(opts.allow || []).includes(res.status)) {
    let code = res.headers.get('x-ms-error-code') || '';
    let message = res.statusText;
    const text = opts.method === 'HEAD' ? '' : await res.text();
    if (text.startsWith('{')) {
      try {
        const j = JSON.parse(text)['odata.error'];
        code = code || j.code;
        message = j.message.value;
      } catch (_) { /* keep the status text */ }
    } else if (text.includes('<Error')) {
      const doc = xml(text);
      code = code || tag(doc, 'Code');
      message = tag(doc, 'Message') || message;
    }
    throw new AzureError(res.status, code, message);
  }
  return res;
}

function xml(text) {
  return new DOMParser().parseFromString(text, 'application/xml');
}

// tag returns the text of el's first descendant named name.
function tag(el, name) {
  const n = el.getElementsByTagName(name)[0];
  return n ? n.textContent : '';
}

// children returns the direct child elements of el named name.
function children(el, name) {
  return el ? Array.from(el.children).filter(c => c.nodeName === name) : [];
}

async function apiXML(service, account, path, opts) {
  return xml(await (await api(service, account, path, opts)).text());
}

function metaFromHeaders(res) {
  const out = [];
  res.headers.forEach((v, k) => { if (k.startsWith('x-ms-meta-')) out.push([k.slice(10), v]); });
  return out;
}

function metaFromXML(el) {
  const m = el && el.getElementsByTagName('Metadata')[0];
  return m ? Array.from(m.children).map(c => [c.nodeName, c.textContent]) : [];
}

// pairs parses "key=value" lines.
function pairs(text) {
  const out = [];
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (!t) continue;
    const i = t.indexOf('=');
    if (i <= 0) throw new Error(`"${t}" is not key=value`);
    out.push([t.slice(0, i).trim(), t.slice(i + 1).trim()]);
  }
  return out;
}

// metaHeaders returns the x-ms-meta-* headers of list, with the names as
// typed listed for the proxy (header names lose their case on the way;
// Azure keeps metadata names as sent).
function metaHeaders(list) {
  const hd = {};
  for (const [k, v] of list) hd['x-ms-meta-' + k] = v;
  if (list.length) hd['X-Lazuli-Meta-Names'] = list.map(([k]) => k).join(',');
  return hd;
}

// listedMeta reads an item's metadata from its service's listing, which
// keeps the names' case (response header names reach the page lowercased).
// The listing's first item with prefix=name is the item itself when it
// exists; fallback is the header form.
async function listedMeta(service, account, path, query, itemTag, name, fallback) {
  const doc = await apiXML(service, account, path, { query: Object.assign({ comp: 'list', include: 'metadata', prefix: name, maxresults: 1 }, query) });
  const el = doc.getElementsByTagName(itemTag)[0];
  return el && tag(el, 'Name') === name ? metaFromXML(el) : fallback;
}

function metaText(list) {
  return list.map(([k, v]) => `${k}=${v}`).join('\n');
}

function escapeXML(s) {
  return s.replace(/[<>&'"]/g, c => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' }[c]));
}

// download fetches a blob or file and saves it under its own name.
async function download(service, account, path, name, query) {
  const res = await api(service, account, path, { query });
  const data = await res.blob();
  const a = h('a', { href: URL.createObjectURL(data), download: name.split('/').pop() || 'download' });
  document.body.append(a);
  a.click();
  setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
}

function filePicker(label, onfiles, testid) {
  const input = h('input', { type: 'file', multiple: true, 'data-test': testid, hidden: true });
  input.addEventListener('change', guard(async () => {
    const files = Array.from(input.files);
    input.value = '';
    if (files.length) await onfiles(files);
  }));
  return h('label', { class: 'button' }, label, input);
}

// metaEditor is a key=value text area with a save button.
function metaEditor(current, save, testid) {
  const ta = h('textarea', { rows: Math.max(3, current.length + 1), 'data-test': testid + '-text', placeholder: 'key=value, one per line' });
  ta.value = metaText(current);
  return h('div', {}, ta, h('div', { class: 'toolbar' }, button('Save', async () => { await save(pairs(ta.value)); }, '', testid + '-save')));
}

// ---------- accounts ----------

let accountsCache = null;
async function accounts() {
  if (!accountsCache) {
    const res = await fetch('api/accounts', { headers: { 'X-Lazuli-Console': '1' }, cache: 'no-store' });
    if (!res.ok) throw new Error(`${res.status} ${res.statusText}`);
    accountsCache = await res.json();
  }
  return accountsCache;
}

async function viewHome() {
  const info = await accounts();
  setCrumbs([['Accounts', '#/']]);
  show(h('h1', {}, 'Storage accounts'),
    info.restricted ? h('p', { class: 'muted' }, 'Signed in as this account only.') : null,
    h('div', { class: 'cards', 'data-test': 'accounts' }, info.accounts.map(a => accountCard(a, info.services))));
}

function accountCard(account, services) {
  return h('div', { class: 'card' },
    h('h2', {}, h('a', { href: link(['account', account]) }, account)),
    h('ul', {}, services.map(s => h('li', {}, h('a', { href: link([s, account]), 'data-test': `open-${s}-${account}` }, serviceTitle[s])))));
}

async function viewAccount(account) {
  const info = await accounts();
  setCrumbs(baseCrumbs('', account));
  show(h('h1', {}, account), h('div', { class: 'cards' }, accountCard(account, info.services)));
}

// ---------- blob ----------

async function viewContainers(account, q) {
  setCrumbs(baseCrumbs('blob', account));
  const doc = await apiXML('blob', account, '', { query: { comp: 'list', include: 'metadata', prefix: q.prefix, marker: q.marker, maxresults: PAGE } });
  const rows = children(doc.getElementsByTagName('Containers')[0], 'Container').map(c => {
    const name = tag(c, 'Name');
    return h('tr', {},
      h('td', { class: 'wrap' }, h('a', { href: link(['blob', account, name]), 'data-test': 'container' }, name)),
      h('td', {}, date(tag(c, 'Last-Modified'))),
      h('td', {}, tag(c, 'LeaseState')),
      h('td', {}, tag(c, 'PublicAccess') || 'private'),
      h('td', { class: 'mono' }, metaText(metaFromXML(c))),
      h('td', { class: 'actions' }, button('Delete', async () => {
        if (!confirm(`Delete container ${name}?`)) return;
        await api('blob', account, encodeURIComponent(name), { method: 'DELETE', query: { restype: 'container' } });
        say(`Container ${name} deleted.`);
        await route();
      }, 'danger')));
  });
  const name = h('input', { type: 'text', placeholder: 'new container name', 'data-test': 'new-container' });
  show(h('h1', {}, 'Blob containers'),
    h('form', { class: 'inline toolbar', onsubmit: guard(async () => {
      await api('blob', account, encodeURIComponent(name.value.trim()), { method: 'PUT', query: { restype: 'container' } });
      say(`Container ${name.value.trim()} created.`);
      await route();
    }) }, name, h('button', { type: 'submit', 'data-test': 'create-container' }, 'Create container')),
    prefixBar(q, ['blob', account]),
    list(['Name', 'Last modified', 'Lease', 'Public access', 'Metadata', ''], rows, 'No containers.', 'containers'),
    pager(tag(doc, 'NextMarker'), ['blob', account], q));
}

function prefixBar(q, parts, extra) {
  const input = h('input', { type: 'text', value: q.prefix || '', placeholder: 'name prefix', 'data-test': 'prefix' });
  return h('form', { class: 'inline toolbar', onsubmit: (ev) => { ev.preventDefault(); go(parts, Object.assign({}, extra || {}, { prefix: input.value })); } },
    input, h('button', { type: 'submit', class: 'secondary' }, 'Filter'));
}

function pager(next, parts, q) {
  if (!next && !q.marker) return null;
  return h('div', { class: 'toolbar' },
    q.marker ? h('a', { href: link(parts, Object.assign({}, q, { marker: '' })) }, '« First page') : null,
    next ? h('a', { href: link(parts, Object.assign({}, q, { marker: next })), 'data-test': 'next-page' }, 'Next page »') : null);
}

async function viewBlobs(account, container, q) {
  const prefix = q.prefix || '';
  setCrumbs(baseCrumbs('blob', account).concat([[container, link(['blob', account, container])]]));
  const include = ['metadata', 'tags'];
  if (q.all) include.push('snapshots', 'versions');
  const doc = await apiXML('blob', account, encodeURIComponent(container), {
    query: { restype: 'container', comp: 'list', delimiter: '/', prefix, marker: q.marker, maxresults: PAGE, include: include.join(',') },
  });
  const blobs = doc.getElementsByTagName('Blobs')[0];
  const rows = [];
  for (const p of children(blobs, 'BlobPrefix')) {
    const name = tag(p, 'Name');
    rows.push(h('tr', {},
      h('td', { class: 'wrap' }, h('a', { href: link(['blob', account, container], { prefix: name, all: q.all }), 'data-test': 'blob-prefix', class: 'folder' }, name.slice(prefix.length))),
      h('td', {}, 'directory'), h('td', {}), h('td', {}), h('td', {}), h('td', {})));
  }
  for (const b of children(blobs, 'Blob')) {
    const name = tag(b, 'Name');
    const snapshot = tag(b, 'Snapshot');
    const version = tag(b, 'VersionId');
    const props = b.getElementsByTagName('Properties')[0];
    const sel = snapshot ? { snapshot } : (version && tag(b, 'IsCurrentVersion') !== 'true' ? { versionid: version } : {});
    const tags = Array.from(b.getElementsByTagName('Tag')).map(t => `${tag(t, 'Key')}=${tag(t, 'Value')}`).join(', ');
    rows.push(h('tr', {},
      h('td', { class: 'wrap' }, h('a', { href: link(['blob', account, container, name], sel), 'data-test': 'blob' }, name.slice(prefix.length)),
        snapshot ? h('span', { class: 'pill' }, 'snapshot ' + snapshot) : null,
        sel.versionid ? h('span', { class: 'pill' }, 'version ' + version) : null),
      h('td', {}, tag(props, 'BlobType')),
      h('td', { class: 'num' }, size(tag(props, 'Content-Length'))),
      h('td', {}, date(tag(props, 'Last-Modified'))),
      h('td', { class: 'mono' }, tags),
      h('td', { class: 'actions' },
        button('Download', () => download('blob', account, `${encodeURIComponent(container)}/${encodePath(name)}`, name, sel), 'secondary'), ' ',
        button('Delete', async () => {
          if (!confirm(`Delete ${name}${snapshot ? ' (snapshot)' : ''}?`)) return;
          await api('blob', account, `${encodeURIComponent(container)}/${encodePath(name)}`, { method: 'DELETE', query: sel,
            headers: Object.keys(sel).length ? {} : { 'x-ms-delete-snapshots': 'include' } });
          say(`${name} deleted.`);
          await route();
        }, 'danger'))));
  }
  const upload = filePicker('Upload files…', async (files) => {
    for (const f of files) {
      await uploadBlob(account, container, prefix + f.name, f);
    }
    say(`Uploaded ${files.map(f => prefix + f.name).join(', ')}.`);
    await route();
  }, 'upload-blob');
  show(h('h1', {}, container + (prefix ? ' / ' + prefix : '')),
    h('div', { class: 'toolbar' }, upload,
      h('label', {}, h('input', { type: 'checkbox', checked: !!q.all, onchange: (ev) => go(['blob', account, container], { prefix, all: ev.target.checked ? '1' : '' }) }), 'show snapshots and versions'),
      h('span', { class: 'grow' }),
      button('Container properties', () => containerDetails(account, container), 'secondary'),
      button('Delete container', async () => {
        if (!confirm(`Delete container ${container}?`)) return;
        await api('blob', account, encodeURIComponent(container), { method: 'DELETE', query: { restype: 'container' } });
        say(`Container ${container} deleted.`);
        go(['blob', account]);
      }, 'danger')),
    h('div', { id: 'container-details' }),
    prefixBar(q, ['blob', account, container], { all: q.all }),
    prefix ? h('p', {}, h('a', { href: link(['blob', account, container], { prefix: parentPrefix(prefix), all: q.all }) }, '↑ parent folder')) : null,
    list(['Name', 'Type', 'Size', 'Last modified', 'Tags', ''], rows, 'No blobs here.', 'blobs'),
    pager(tag(doc, 'NextMarker'), ['blob', account, container], q));
}

function parentPrefix(p) {
  const t = p.replace(/\/$/, '');
  const i = t.lastIndexOf('/');
  return i < 0 ? '' : t.slice(0, i + 1);
}

async function containerDetails(account, container) {
  const res = await api('blob', account, encodeURIComponent(container), { method: 'HEAD', query: { restype: 'container' } });
  const box = document.getElementById('container-details');
  box.replaceChildren(h('div', { class: 'card' },
    kv([['ETag', res.headers.get('etag')], ['Last modified', res.headers.get('last-modified')],
      ['Lease', [res.headers.get('x-ms-lease-state'), res.headers.get('x-ms-lease-duration')].filter(Boolean).join(', ')],
      ['Public access', res.headers.get('x-ms-blob-public-access') || 'private']]),
    h('h2', {}, 'Metadata'),
    metaEditor(await listedMeta('blob', account, '', {}, 'Container', container, metaFromHeaders(res)), async (m) => {
      await api('blob', account, encodeURIComponent(container), { method: 'PUT', query: { restype: 'container', comp: 'metadata' }, headers: metaHeaders(m) });
      say('Container metadata saved.');
    }, 'container-meta')));
}

// uploadBlob writes a block blob: in one Put Blob when small, else in
// blocks of CHUNK bytes and a Put Block List.
async function uploadBlob(account, container, name, file) {
  const path = `${encodeURIComponent(container)}/${encodePath(name)}`;
  const type = { 'x-ms-blob-content-type': file.type || 'application/octet-stream' };
  if (file.size <= CHUNK) {
    await api('blob', account, path, { method: 'PUT', body: file, headers: Object.assign({ 'x-ms-blob-type': 'BlockBlob' }, type) });
    return;
  }
  const ids = [];
  for (let off = 0, i = 0; off < file.size; off += CHUNK, i++) {
    const id = btoa(String(i).padStart(8, '0'));
    ids.push(id);
    await api('blob', account, path, { method: 'PUT', query: { comp: 'block', blockid: id }, body: file.slice(off, off + CHUNK) });
  }
  const body = '<?xml version="1.0" encoding="utf-8"?><BlockList>' + ids.map(id => `<Latest>${id}</Latest>`).join('') + '</BlockList>';
  await api('blob', account, path, { method: 'PUT', query: { comp: 'blocklist' }, body, headers: type });
}

// leaseIds remembers the leases acquired in this page, by blob.
const leaseIds = new Map();

const shownHeaders = ['content-type', 'content-length', 'content-md5', 'content-encoding', 'content-language', 'cache-control',
  'content-disposition', 'etag', 'last-modified', 'x-ms-creation-time', 'x-ms-blob-type', 'x-ms-access-tier', 'x-ms-lease-state',
  'x-ms-lease-status', 'x-ms-lease-duration', 'x-ms-blob-committed-block-count', 'x-ms-blob-sequence-number', 'x-ms-blob-sealed',
  'x-ms-server-encrypted', 'x-ms-version-id', 'x-ms-is-current-version', 'x-ms-tag-count', 'x-ms-copy-status', 'x-ms-copy-id',
  'x-ms-copy-source', 'x-ms-snapshot'];

async function viewBlob(account, container, name, q) {
  const path = `${encodeURIComponent(container)}/${encodePath(name)}`;
  const sel = q.snapshot ? { snapshot: q.snapshot } : (q.versionid ? { versionid: q.versionid } : {});
  const live = !q.snapshot && !q.versionid;
  const dir = name.includes('/') ? name.slice(0, name.lastIndexOf('/') + 1) : '';
  setCrumbs(baseCrumbs('blob', account).concat([[container, link(['blob', account, container])]],
    dir ? [[dir, link(['blob', account, container], { prefix: dir })]] : [], [[name.slice(dir.length), '']]));
  const res = await api('blob', account, path, { method: 'HEAD', query: sel });
  const props = shownHeaders.filter(k => res.headers.get(k)).map(k => [k, res.headers.get(k)]);
  const meta = live ? await listedMeta('blob', account, encodeURIComponent(container), { restype: 'container' }, 'Blob', name, metaFromHeaders(res)) : metaFromHeaders(res);
  const sections = [
    h('h1', {}, name, q.snapshot ? h('span', { class: 'pill' }, 'snapshot ' + q.snapshot) : null, q.versionid ? h('span', { class: 'pill' }, 'version ' + q.versionid) : null),
    h('div', { class: 'toolbar' },
      button('Download', () => download('blob', account, path, name, sel), '', 'download'),
      live ? button('Create snapshot', async () => {
        const r = await api('blob', account, path, { method: 'PUT', query: { comp: 'snapshot' } });
        say(`Snapshot ${r.headers.get('x-ms-snapshot')} created.`);
        await route();
      }, 'secondary', 'create-snapshot') : null,
      h('span', { class: 'grow' }),
      button('Delete', async () => {
        if (!confirm(`Delete ${name}?`)) return;
        await api('blob', account, path, { method: 'DELETE', query: sel, headers: live ? { 'x-ms-delete-snapshots': 'include' } : {} });
        say(`${name} deleted.`);
        go(['blob', account, container], { prefix: dir });
      }, 'danger', 'delete-blob')),
    h('div', { class: 'two' },
      h('div', { class: 'card' }, h('h2', {}, 'Properties'), h('div', { 'data-test': 'blob-properties' }, kv(props)),
        live ? httpHeadersForm(account, path, res) : null),
      h('div', {},
        h('div', { class: 'card' }, h('h2', {}, 'Metadata'),
          live ? metaEditor(meta, async (m) => {
            await api('blob', account, path, { method: 'PUT', query: { comp: 'metadata' }, headers: Object.assign(metaHeaders(m), leaseHeader(account, path)) });
            say('Metadata saved.');
            await route();
          }, 'blob-meta') : h('pre', {}, metaText(meta) || '(none)')),
        live ? h('div', { class: 'card', id: 'tags' }, h('h2', {}, 'Tags')) : null,
        live ? leaseCard(account, path, res) : null)),
  ];
  const len = Number(res.headers.get('content-length'));
  const type = res.headers.get('content-type') || '';
  const preview = h('div', {});
  if (len <= 65536 && (/^text\/|json|xml/.test(type) || /\.(txt|json|csv|md|xml|log)$/i.test(name))) {
    sections.push(h('div', { class: 'card' }, h('h2', {}, 'Content'), preview));
  }
  if (live) sections.push(h('div', { class: 'card', id: 'snapshots' }, h('h2', {}, 'Snapshots and versions')));
  show(sections);
  if (preview.isConnected) {
    const body = await (await api('blob', account, path, { query: sel })).text();
    preview.append(h('pre', { 'data-test': 'blob-content' }, body));
  }
  if (live) {
    await tagsCard(account, path);
    await snapshotsCard(account, container, name);
  }
}

// httpHeaders are the properties Set Blob Properties writes, with the
// response header each is read from. The operation clears any it is not
// given, so the form sends them all.
const httpHeaders = [
  ['Content type', 'content-type', 'x-ms-blob-content-type'],
  ['Content encoding', 'content-encoding', 'x-ms-blob-content-encoding'],
  ['Content language', 'content-language', 'x-ms-blob-content-language'],
  ['Content disposition', 'content-disposition', 'x-ms-blob-content-disposition'],
  ['Cache control', 'cache-control', 'x-ms-blob-cache-control'],
];

function httpHeadersForm(account, path, res) {
  const inputs = httpHeaders.map(([label, from]) => h('input', { type: 'text', value: res.headers.get(from) || '', 'aria-label': label, 'data-test': 'prop-' + from }));
  return h('details', {}, h('summary', {}, 'Edit content headers'),
    h('table', { class: 'kv' }, httpHeaders.map(([label], i) => h('tr', {}, h('th', {}, label), h('td', {}, inputs[i])))),
    h('div', { class: 'toolbar' }, button('Save headers', async () => {
      const hd = Object.assign({}, leaseHeader(account, path));
      httpHeaders.forEach(([, , to], i) => { if (inputs[i].value.trim()) hd[to] = inputs[i].value.trim(); });
      // The MD5 is a property too: keep it.
      if (res.headers.get('content-md5')) hd['x-ms-blob-content-md5'] = res.headers.get('content-md5');
      await api('blob', account, path, { method: 'PUT', query: { comp: 'properties' }, headers: hd });
      say('Content headers saved.');
      await route();
    }, 'secondary', 'save-props')));
}

function leaseHeader(account, path) {
  const id = leaseIds.get(account + '/' + path);
  return id ? { 'x-ms-lease-id': id } : {};
}

function leaseCard(account, path, res) {
  const state = res.headers.get('x-ms-lease-state') || 'available';
  const duration = h('select', { 'data-test': 'lease-duration' }, ['-1', '15', '30', '60'].map(d => h('option', { value: d }, d === '-1' ? 'infinite' : d + ' s')));
  const idInput = h('input', { type: 'text', placeholder: 'lease id', value: leaseIds.get(account + '/' + path) || '', size: 38, class: 'mono' });
  const lease = async (action, extra) => {
    const r = await api('blob', account, path, { method: 'PUT', query: { comp: 'lease' }, headers: Object.assign({ 'x-ms-lease-action': action }, extra) });
    return r;
  };
  return h('div', { class: 'card' }, h('h2', {}, 'Lease'),
    kv([['State', state], ['Status', res.headers.get('x-ms-lease-status')], ['Duration', res.headers.get('x-ms-lease-duration')]]),
    h('div', { class: 'toolbar' }, duration,
      button('Acquire', async () => {
        const r = await lease('acquire', { 'x-ms-lease-duration': duration.value });
        leaseIds.set(account + '/' + path, r.headers.get('x-ms-lease-id'));
        say(`Lease ${r.headers.get('x-ms-lease-id')} acquired.`);
        await route();
      }, 'secondary', 'lease-acquire'),
      button('Break', async () => {
        const r = await lease('break', { 'x-ms-lease-break-period': '0' });
        say(`Lease broken (${r.headers.get('x-ms-lease-time')} s left).`);
        await route();
      }, 'secondary', 'lease-break')),
    h('div', { class: 'toolbar' }, idInput,
      button('Release', async () => {
        await lease('release', { 'x-ms-lease-id': idInput.value.trim() });
        leaseIds.delete(account + '/' + path);
        say('Lease released.');
        await route();
      }, 'secondary', 'lease-release')));
}

async function tagsCard(account, path) {
  const box = document.getElementById('tags');
  let current = [];
  try {
    const doc = await apiXML('blob', account, path, { query: { comp: 'tags' } });
    current = Array.from(doc.getElementsByTagName('Tag')).map(t => [tag(t, 'Key'), tag(t, 'Value')]);
  } catch (e) {
    box.append(h('p', { class: 'muted' }, e.message));
    return;
  }
  box.append(metaEditor(current, async (tags) => {
    const body = '<?xml version="1.0" encoding="utf-8"?><Tags><TagSet>' +
      tags.map(([k, v]) => `<Tag><Key>${escapeXML(k)}</Key><Value>${escapeXML(v)}</Value></Tag>`).join('') + '</TagSet></Tags>';
    await api('blob', account, path, { method: 'PUT', query: { comp: 'tags' }, body, headers: Object.assign({ 'Content-Type': 'application/xml' }, leaseHeader(account, path)) });
    say('Tags saved.');
  }, 'blob-tags'));
}

async function snapshotsCard(account, container, name) {
  const box = document.getElementById('snapshots');
  const doc = await apiXML('blob', account, encodeURIComponent(container), {
    query: { restype: 'container', comp: 'list', prefix: name, include: 'snapshots,versions', maxresults: 1000 },
  });
  const rows = [];
  for (const b of children(doc.getElementsByTagName('Blobs')[0], 'Blob')) {
    if (tag(b, 'Name') !== name) continue;
    const snapshot = tag(b, 'Snapshot');
    const version = tag(b, 'VersionId');
    if (!snapshot && (!version || tag(b, 'IsCurrentVersion') === 'true')) continue;
    const sel = snapshot ? { snapshot } : { versionid: version };
    const props = b.getElementsByTagName('Properties')[0];
    rows.push(h('tr', {},
      h('td', {}, snapshot ? 'snapshot' : 'version'),
      h('td', { class: 'mono' }, h('a', { href: link(['blob', account, container, name], sel), 'data-test': 'snapshot' }, snapshot || version)),
      h('td', { class: 'num' }, size(tag(props, 'Content-Length'))),
      h('td', {}, date(tag(props, 'Last-Modified')))));
  }
  box.append(list(['Kind', 'Id', 'Size', 'Last modified'], rows, 'No snapshots or earlier versions.', 'snapshots'));
}

// ---------- queue ----------

async function viewQueues(account, q) {
  setCrumbs(baseCrumbs('queue', account));
  const doc = await apiXML('queue', account, '', { query: { comp: 'list', include: 'metadata', prefix: q.prefix, marker: q.marker, maxresults: PAGE } });
  const rows = children(doc.getElementsByTagName('Queues')[0], 'Queue').map(el => {
    const name = tag(el, 'Name');
    return h('tr', {},
      h('td', { class: 'wrap' }, h('a', { href: link(['queue', account, name]), 'data-test': 'queue' }, name)),
      h('td', { class: 'mono' }, metaText(metaFromXML(el))),
      h('td', { class: 'actions' }, button('Delete', async () => {
        if (!confirm(`Delete queue ${name}?`)) return;
        await api('queue', account, encodeURIComponent(name), { method: 'DELETE' });
        say(`Queue ${name} deleted.`);
        await route();
      }, 'danger')));
  });
  const name = h('input', { type: 'text', placeholder: 'new queue name', 'data-test': 'new-queue' });
  show(h('h1', {}, 'Queues'),
    h('form', { class: 'inline toolbar', onsubmit: guard(async () => {
      await api('queue', account, encodeURIComponent(name.value.trim()), { method: 'PUT' });
      say(`Queue ${name.value.trim()} created.`);
      await route();
    }) }, name, h('button', { type: 'submit', 'data-test': 'create-queue' }, 'Create queue')),
    prefixBar(q, ['queue', account]),
    list(['Name', 'Metadata', ''], rows, 'No queues.', 'queues'),
    pager(tag(doc, 'NextMarker'), ['queue', account], q));
}

async function viewQueue(account, queue) {
  setCrumbs(baseCrumbs('queue', account).concat([[queue, '']]));
  const path = encodeURIComponent(queue);
  const meta = await api('queue', account, path, { query: { comp: 'metadata' } });
  const doc = await apiXML('queue', account, path + '/messages', { query: { peekonly: 'true', numofmessages: 32 } });
  const rows = Array.from(doc.getElementsByTagName('QueueMessage')).map(m => h('tr', {},
    h('td', { class: 'mono' }, tag(m, 'MessageId')),
    h('td', {}, date(tag(m, 'InsertionTime'))),
    h('td', {}, date(tag(m, 'ExpirationTime'))),
    h('td', { class: 'num' }, tag(m, 'DequeueCount')),
    h('td', { class: 'wrap' }, h('pre', { 'data-test': 'message-text' }, tag(m, 'MessageText')))));
  const text = h('textarea', { rows: 3, placeholder: 'message text', 'data-test': 'message-input' });
  const ttl = h('input', { type: 'number', placeholder: 'TTL s (default 7 days)', min: -1 });
  const vis = h('input', { type: 'number', placeholder: 'visibility timeout s', min: 0 });
  show(h('h1', {}, queue),
    h('div', { class: 'toolbar' },
      h('span', { 'data-test': 'message-count' }, `About ${meta.headers.get('x-ms-approximate-messages-count')} messages`),
      h('span', { class: 'grow' }),
      button('Refresh', () => route(), 'secondary'),
      button('Clear messages', async () => {
        if (!confirm(`Delete every message of ${queue}?`)) return;
        await api('queue', account, path + '/messages', { method: 'DELETE' });
        say(`Queue ${queue} cleared.`);
        await route();
      }, 'danger', 'clear-queue'),
      button('Delete queue', async () => {
        if (!confirm(`Delete queue ${queue}?`)) return;
        await api('queue', account, path, { method: 'DELETE' });
        say(`Queue ${queue} deleted.`);
        go(['queue', account]);
      }, 'danger')),
    h('div', { class: 'card' }, h('h2', {}, 'Put a message'), text,
      h('div', { class: 'toolbar' }, ttl, vis, button('Put message', async () => {
        const body = `<?xml version="1.0" encoding="utf-8"?><QueueMessage><MessageText>${escapeXML(text.value)}</MessageText></QueueMessage>`;
        await api('queue', account, path + '/messages', { method: 'POST', body, query: { messagettl: ttl.value, visibilitytimeout: vis.value }, headers: { 'Content-Type': 'application/xml' } });
        say('Message put.');
        await route();
      }, '', 'put-message'))),
    h('h2', {}, 'Messages (peek, up to 32)'),
    list(['Id', 'Inserted', 'Expires', 'Dequeued', 'Text'], rows, 'No visible messages.', 'messages'),
    h('div', { class: 'toolbar' }, button('Receive the first message…', async () => {
      // Get Messages hides it for 30 s and gives the pop receipt that
      // Delete Message needs: what a consumer does.
      const got = await apiXML('queue', account, path + '/messages', { query: { numofmessages: 1, visibilitytimeout: 30 } });
      const m = got.getElementsByTagName('QueueMessage')[0];
      const box = document.getElementById('received');
      if (!m) { box.replaceChildren(h('p', { class: 'muted' }, 'No visible message.')); return; }
      box.replaceChildren(h('div', { class: 'card' },
        kv([['Id', tag(m, 'MessageId')], ['Dequeued', tag(m, 'DequeueCount')], ['Visible again', date(tag(m, 'TimeNextVisible'))]]),
        h('pre', { 'data-test': 'received-text' }, tag(m, 'MessageText')),
        h('div', { class: 'toolbar' }, button('Delete this message', async () => {
          await api('queue', account, `${path}/messages/${encodeURIComponent(tag(m, 'MessageId'))}`, { method: 'DELETE', query: { popreceipt: tag(m, 'PopReceipt') } });
          say('Message deleted.');
          await route();
        }, 'danger', 'delete-message'))));
    }, 'secondary', 'receive-message')),
    h('div', { id: 'received' }),
    h('h2', {}, 'Metadata'),
    metaEditor(await listedMeta('queue', account, '', {}, 'Queue', queue, metaFromHeaders(meta)), async (m) => {
      await api('queue', account, path, { method: 'PUT', query: { comp: 'metadata' }, headers: metaHeaders(m) });
      say('Metadata saved.');
    }, 'queue-meta'));
}

// ---------- table ----------

const tableJSON = { Accept: 'application/json;odata=minimalmetadata', DataServiceVersion: '3.0', MaxDataServiceVersion: '3.0;NetFx' };

async function viewTables(account, q) {
  setCrumbs(baseCrumbs('table', account));
  const res = await api('table', account, 'Tables', { query: { NextTableName: q.marker, $top: PAGE }, headers: tableJSON });
  const body = await res.json();
  const rows = (body.value || []).map(t => h('tr', {},
    h('td', { class: 'wrap' }, h('a', { href: link(['table', account, t.TableName]), 'data-test': 'table' }, t.TableName)),
    h('td', { class: 'actions' }, button('Delete', async () => {
      if (!confirm(`Delete table ${t.TableName}?`)) return;
      await api('table', account, `Tables('${encodeURIComponent(t.TableName)}')`, { method: 'DELETE', headers: tableJSON });
      say(`Table ${t.TableName} deleted.`);
      await route();
    }, 'danger'))));
  const name = h('input', { type: 'text', placeholder: 'new table name', 'data-test': 'new-table' });
  show(h('h1', {}, 'Tables'),
    h('form', { class: 'inline toolbar', onsubmit: guard(async () => {
      await api('table', account, 'Tables', { method: 'POST', body: JSON.stringify({ TableName: name.value.trim() }),
        headers: Object.assign({ 'Content-Type': 'application/json', Prefer: 'return-no-content' }, tableJSON) });
      say(`Table ${name.value.trim()} created.`);
      await route();
    }) }, name, h('button', { type: 'submit', 'data-test': 'create-table' }, 'Create table')),
    list(['Name', ''], rows, 'No tables.', 'tables'),
    pager(res.headers.get('x-ms-continuation-nexttablename'), ['table', account], q));
}

// entityPath addresses one entity: keys in single quotes, quotes doubled.
function entityPath(table, pk, rk) {
  const k = (s) => encodeURIComponent(String(s).replace(/'/g, "''"));
  return `${encodeURIComponent(table)}(PartitionKey='${k(pk)}',RowKey='${k(rk)}')`;
}

// editable strips what the service owns from an entity as listed.
function editable(e) {
  const out = {};
  for (const [k, v] of Object.entries(e)) {
    if (k.startsWith('odata.') || k === 'Timestamp' || k === 'Timestamp@odata.type') continue;
    out[k] = v;
  }
  return out;
}

async function viewTable(account, table, q) {
  setCrumbs(baseCrumbs('table', account).concat([[table, '']]));
  const query = { $filter: q.filter, $top: q.top || PAGE, NextPartitionKey: q.npk, NextRowKey: q.nrk };
  const res = await api('table', account, encodeURIComponent(table) + '()', { query, headers: tableJSON });
  const body = await res.json();
  const entities = body.value || [];
  const cols = [];
  for (const e of entities) {
    for (const k of Object.keys(e)) {
      if (k.includes('@') || k.startsWith('odata.') || ['PartitionKey', 'RowKey', 'Timestamp'].includes(k) || cols.includes(k)) continue;
      cols.push(k);
    }
  }
  const editor = h('div', { id: 'entity-editor' });
  const openEditor = (title, value, save) => {
    const ta = h('textarea', { rows: 12, 'data-test': 'entity-json' });
    ta.value = JSON.stringify(value, null, 2);
    editor.replaceChildren(h('div', { class: 'card' }, h('h2', {}, title),
      h('p', { class: 'muted' }, 'JSON; give a type with "Name@odata.type": "Edm.Int64" (also Edm.DateTime, Edm.Guid, Edm.Binary, Edm.Double).'),
      ta, h('div', { class: 'toolbar' },
        button('Save', async () => {
          let v;
          try { v = JSON.parse(ta.value); } catch (e) { throw new Error('Not JSON: ' + e.message); }
          await save(v);
        }, '', 'entity-save'),
        button('Cancel', () => editor.replaceChildren(), 'secondary'))));
    ta.focus();
  };
  const rows = entities.map(e => h('tr', {},
    h('td', { class: 'wrap' }, e.PartitionKey), h('td', { class: 'wrap', 'data-test': 'entity-rowkey' }, e.RowKey), h('td', {}, date(e.Timestamp)),
    cols.map(c => h('td', { class: 'wrap' }, e[c] === undefined ? '' : typeof e[c] === 'object' ? JSON.stringify(e[c]) : String(e[c]))),
    h('td', { class: 'actions' },
      button('Edit', () => openEditor(`Edit ${e.PartitionKey} / ${e.RowKey}`, editable(e), async (v) => {
        if (v.PartitionKey !== e.PartitionKey || v.RowKey !== e.RowKey) throw new Error('PartitionKey and RowKey cannot change; add a new entity instead.');
        await api('table', account, entityPath(table, e.PartitionKey, e.RowKey), { method: 'PUT', body: JSON.stringify(v),
          headers: Object.assign({ 'Content-Type': 'application/json', 'If-Match': e['odata.etag'] || '*' }, tableJSON) });
        say('Entity saved.');
        await route();
      }), 'secondary', 'entity-edit'), ' ',
      button('Delete', async () => {
        if (!confirm(`Delete ${e.PartitionKey} / ${e.RowKey}?`)) return;
        await api('table', account, entityPath(table, e.PartitionKey, e.RowKey), { method: 'DELETE', headers: Object.assign({ 'If-Match': e['odata.etag'] || '*' }, tableJSON) });
        say('Entity deleted.');
        await route();
      }, 'danger'))));
  const filter = h('input', { type: 'text', value: q.filter || '', placeholder: "$filter, e.g. PartitionKey eq 'p1' and Age gt 30", size: 60, 'data-test': 'filter' });
  const npk = res.headers.get('x-ms-continuation-nextpartitionkey');
  const nrk = res.headers.get('x-ms-continuation-nextrowkey');
  show(h('h1', {}, table),
    h('form', { class: 'inline toolbar', onsubmit: (ev) => { ev.preventDefault(); go(['table', account, table], { filter: filter.value }); } },
      filter, h('button', { type: 'submit', class: 'secondary', 'data-test': 'run-query' }, 'Query'),
      h('span', { class: 'grow' }),
      button('Add entity', () => openEditor('New entity', { PartitionKey: '', RowKey: '' }, async (v) => {
        await api('table', account, encodeURIComponent(table), { method: 'POST', body: JSON.stringify(v),
          headers: Object.assign({ 'Content-Type': 'application/json', Prefer: 'return-no-content' }, tableJSON) });
        say('Entity added.');
        await route();
      }), '', 'add-entity')),
    editor,
    list(['PartitionKey', 'RowKey', 'Timestamp'].concat(cols, ['']), rows, 'No entities match.', 'entities'),
    (npk || q.npk) ? h('div', { class: 'toolbar' },
      q.npk ? h('a', { href: link(['table', account, table], { filter: q.filter }) }, '« First page') : null,
      npk ? h('a', { href: link(['table', account, table], { filter: q.filter, npk, nrk }), 'data-test': 'next-page' }, 'Next page »') : null) : null);
}

// ---------- file ----------

async function viewShares(account, q) {
  setCrumbs(baseCrumbs('file', account));
  const doc = await apiXML('file', account, '', { query: { comp: 'list', include: 'metadata', prefix: q.prefix, marker: q.marker, maxresults: PAGE } });
  const rows = children(doc.getElementsByTagName('Shares')[0], 'Share').map(el => {
    const name = tag(el, 'Name');
    return h('tr', {},
      h('td', { class: 'wrap' }, h('a', { href: link(['file', account, name]), 'data-test': 'share' }, name)),
      h('td', { class: 'num' }, tag(el, 'Quota') ? tag(el, 'Quota') + ' GiB' : ''),
      h('td', {}, date(tag(el, 'Last-Modified'))),
      h('td', { class: 'mono' }, metaText(metaFromXML(el))),
      h('td', { class: 'actions' }, button('Delete', async () => {
        if (!confirm(`Delete share ${name}?`)) return;
        await api('file', account, encodeURIComponent(name), { method: 'DELETE', query: { restype: 'share' }, headers: { 'x-ms-delete-snapshots': 'include' } });
        say(`Share ${name} deleted.`);
        await route();
      }, 'danger')));
  });
  const name = h('input', { type: 'text', placeholder: 'new share name', 'data-test': 'new-share' });
  show(h('h1', {}, 'File shares'),
    h('form', { class: 'inline toolbar', onsubmit: guard(async () => {
      await api('file', account, encodeURIComponent(name.value.trim()), { method: 'PUT', query: { restype: 'share' } });
      say(`Share ${name.value.trim()} created.`);
      await route();
    }) }, name, h('button', { type: 'submit', 'data-test': 'create-share' }, 'Create share')),
    prefixBar(q, ['file', account]),
    list(['Name', 'Quota', 'Last modified', 'Metadata', ''], rows, 'No shares.', 'shares'),
    pager(tag(doc, 'NextMarker'), ['file', account], q));
}

function join(dir, name) {
  return dir ? dir + '/' + name : name;
}

async function viewDirectory(account, share, dir, q) {
  const base = encodeURIComponent(share);
  const dirPath = dir ? base + '/' + encodePath(dir) : base;
  const c = baseCrumbs('file', account).concat([[share, link(['file', account, share])]]);
  let acc = '';
  for (const part of dir ? dir.split('/') : []) {
    acc = join(acc, part);
    c.push([part, link(['file', account, share, acc])]);
  }
  setCrumbs(c);
  const doc = await apiXML('file', account, dirPath, { query: { restype: 'directory', comp: 'list', marker: q.marker, maxresults: PAGE } });
  const entries = doc.getElementsByTagName('Entries')[0];
  const rows = [];
  for (const d of children(entries, 'Directory')) {
    const name = tag(d, 'Name');
    rows.push(h('tr', {},
      h('td', { class: 'wrap' }, h('a', { href: link(['file', account, share, join(dir, name)]), 'data-test': 'directory', class: 'folder' }, name + '/')),
      h('td', {}, 'directory'), h('td', {}),
      h('td', { class: 'actions' }, button('Delete', async () => {
        if (!confirm(`Delete directory ${name}? It must be empty.`)) return;
        await api('file', account, base + '/' + encodePath(join(dir, name)), { method: 'DELETE', query: { restype: 'directory' } });
        say(`Directory ${name} deleted.`);
        await route();
      }, 'danger'))));
  }
  for (const f of children(entries, 'File')) {
    const name = tag(f, 'Name');
    const p = base + '/' + encodePath(join(dir, name));
    rows.push(h('tr', {},
      h('td', { class: 'wrap', 'data-test': 'file' }, name),
      h('td', {}, 'file'),
      h('td', { class: 'num' }, size(tag(f, 'Content-Length'))),
      h('td', { class: 'actions' },
        button('Properties', () => fileProperties(account, p, name), 'secondary', 'file-properties'), ' ',
        button('Download', () => download('file', account, p, name), 'secondary'), ' ',
        button('Delete', async () => {
          if (!confirm(`Delete file ${name}?`)) return;
          await api('file', account, p, { method: 'DELETE' });
          say(`File ${name} deleted.`);
          await route();
        }, 'danger'))));
  }
  const newDir = h('input', { type: 'text', placeholder: 'new directory name', 'data-test': 'new-directory' });
  const upload = filePicker('Upload files…', async (files) => {
    for (const f of files) await uploadFile(account, base + '/' + encodePath(join(dir, f.name)), f);
    say(`Uploaded ${files.map(f => f.name).join(', ')}.`);
    await route();
  }, 'upload-file');
  show(h('h1', {}, share + (dir ? ' / ' + dir : '')),
    h('div', { class: 'toolbar' }, upload,
      h('form', { class: 'inline', onsubmit: guard(async () => {
        await api('file', account, base + '/' + encodePath(join(dir, newDir.value.trim())), { method: 'PUT', query: { restype: 'directory' } });
        say(`Directory ${newDir.value.trim()} created.`);
        await route();
      }) }, newDir, h('button', { type: 'submit', class: 'secondary', 'data-test': 'create-directory' }, 'Create directory')),
      h('span', { class: 'grow' }),
      dir ? null : button('Delete share', async () => {
        if (!confirm(`Delete share ${share}?`)) return;
        await api('file', account, base, { method: 'DELETE', query: { restype: 'share' }, headers: { 'x-ms-delete-snapshots': 'include' } });
        say(`Share ${share} deleted.`);
        go(['file', account]);
      }, 'danger')),
    h('div', { id: 'file-details' }),
    list(['Name', 'Type', 'Size', ''], rows, 'This directory is empty.', 'entries'),
    pager(tag(doc, 'NextMarker'), ['file', account, share].concat(dir ? [dir] : []), q),
    h('div', { class: 'card', id: 'handles' }, h('h2', {}, 'Open handles (SMB and REST), this directory and below')));
  await handlesCard(account, dirPath);
}

const fileHeaders = ['content-type', 'content-length', 'content-md5', 'etag', 'last-modified', 'x-ms-type', 'x-ms-file-attributes',
  'x-ms-file-creation-time', 'x-ms-file-last-write-time', 'x-ms-file-change-time', 'x-ms-file-id', 'x-ms-file-parent-id',
  'x-ms-file-permission-key', 'x-ms-lease-state', 'x-ms-lease-status', 'x-ms-lease-duration', 'x-ms-server-encrypted'];

// fileProperties shows a file's properties (Get File Properties) above
// the listing.
async function fileProperties(account, path, name) {
  const res = await api('file', account, path, { method: 'HEAD' });
  const meta = metaFromHeaders(res);
  document.getElementById('file-details').replaceChildren(h('div', { class: 'card' },
    h('h2', {}, name),
    h('div', { 'data-test': 'file-props' }, kv(fileHeaders.filter(k => res.headers.get(k)).map(k => [k, res.headers.get(k)]))),
    meta.length ? h('pre', {}, metaText(meta)) : null,
    h('div', { class: 'toolbar' }, button('Close', () => document.getElementById('file-details').replaceChildren(), 'secondary'))));
}

// uploadFile creates a file of the right size and writes it in ranges.
async function uploadFile(account, path, file) {
  await api('file', account, path, { method: 'PUT', headers: {
    'x-ms-type': 'file', 'x-ms-content-length': String(file.size), 'x-ms-content-type': file.type || 'application/octet-stream',
    'x-ms-file-attributes': 'None', 'x-ms-file-creation-time': 'now', 'x-ms-file-last-write-time': 'now', 'x-ms-file-permission': 'inherit',
  } });
  for (let off = 0; off < file.size; off += CHUNK) {
    const end = Math.min(off + CHUNK, file.size) - 1;
    await api('file', account, path, { method: 'PUT', query: { comp: 'range' }, body: file.slice(off, end + 1),
      headers: { 'x-ms-range': `bytes=${off}-${end}`, 'x-ms-write': 'update' } });
  }
}

async function handlesCard(account, dirPath) {
  const box = document.getElementById('handles');
  const handles = [];
  let marker = '';
  do {
    const doc = await apiXML('file', account, dirPath, { query: { comp: 'listhandles', marker }, headers: { 'x-ms-recursive': 'true' } });
    handles.push(...doc.getElementsByTagName('Handle'));
    marker = tag(doc, 'NextMarker');
  } while (marker && handles.length < 5000);
  const close = async (id) => {
    const r = await api('file', account, dirPath, { method: 'PUT', query: { comp: 'forceclosehandles' }, headers: { 'x-ms-handle-id': id, 'x-ms-recursive': 'true' } });
    say(`${r.headers.get('x-ms-number-of-handles-closed')} handle(s) closed, ${r.headers.get('x-ms-number-of-handles-failed') || 0} failed.`);
    await route();
  };
  const rows = handles.map(el => h('tr', {},
    h('td', { class: 'mono' }, tag(el, 'HandleId')),
    h('td', { class: 'wrap', 'data-test': 'handle-path' }, tag(el, 'Path') || '/'),
    h('td', {}, tag(el, 'ClientIp')),
    h('td', {}, tag(el, 'ClientName')),
    h('td', {}, date(tag(el, 'OpenTime'))),
    h('td', {}, Array.from(el.getElementsByTagName('AccessRight')).map(a => a.textContent).join(', ')),
    h('td', { class: 'actions' }, button('Force close', () => close(tag(el, 'HandleId')), 'danger', 'close-handle'))));
  box.append(
    handles.length ? h('div', { class: 'toolbar' }, button('Close all', () => close('*'), 'danger', 'close-all-handles')) : null,
    list(['Handle', 'Path', 'Client', 'Client name', 'Opened', 'Access', ''], rows, 'No open handles.', 'handles'));
}

route();
